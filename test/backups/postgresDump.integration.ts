// A full restore reads its dump as PostgreSQL does (issue 42, class 2), on real PostgreSQL 15:
//   - psql itself is the oracle: each text of pgScanCases.ts is fed to the real psql, and the databases it
//     connected to (the server's log of connections) are the ones the restore's reader lists;
//   - a backup holding what used to mislead the restore (an index comment with a "COPY staging FROM stdin;"
//     line before a TAB-named database, \connect lines in a function body and in a role's comment, names
//     pg_dumpall quotes: MyDb, user, quotes and a backslash) is restored over live databases: each is the
//     backup's again (not appended to), no database is missing or invented, the role's comment is intact;
//   - databases named like the restore's own leftovers (pre_restore_<14 digits>_<n>, restore_...) are
//     ordinary databases: restored like the others, never a reason to fail;
//   - a full TMPDIR is named as the cause, before anything changes.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { SCAN_CASES, SCAN_DATABASES } from './pgScanCases';
import {
  PG_NEEDS, assertBinaries, backupEntries, describeNeeding, describeRun, pgBinDir, run, runScript, skipUnless, startPostgres, tempDir, tmpfsFor, withPrelude,
  type PgServer,
} from './servers';

const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;

const needs = PG_NEEDS();
describeNeeding('what psql connects to when it reads a dump is what the restore lists (real psql 15 as the oracle)', { skip: skipUnless(needs) }, () => {
  let pg: PgServer;
  before(async () => {
    assertBinaries(needs);
    pg = await startPostgres('oracle-pw', ['log_connections=on']);
    for (const db of SCAN_DATABASES) await pg.psql(`CREATE DATABASE ${ident(db)}`);
    await pg.psql('CREATE TABLE public.t (v text)');
  });
  after(() => pg?.stop());

  for (const [i, c] of SCAN_CASES.entries()) {
    test(c.name, async () => {
      const app = `scan-oracle-${i}`;
      await run(path.join(pgBinDir()!, 'psql'), ['-X', '-q', '-v', 'ON_ERROR_STOP=0', '-d', 'postgres'], {
        env: { ...process.env, ...pg.env(), PGAPPNAME: app }, input: c.sql,
      }).catch(() => undefined);
      const log = fs.readFileSync(path.join(pg.dir, 'server.log'), 'utf8');
      const connected: string[] = [];
      for (const m of log.matchAll(/connection authorized: user=\S+ database=(.*) application_name=(\S+)$/gm)) {
        if (m[2] === app) connected.push(m[1]);
      }
      assert.equal(connected[0], 'postgres', 'psql starts in postgres');
      const seen = [...new Set(connected.slice(1))].filter((d) => d !== 'template1');
      assert.deepEqual(seen, c.dbs, `psql connected to ${JSON.stringify(seen)}`);
      const scan = await withPrelude('pg_scan_dump list "" postgres false', [], { input: `${c.sql}--\n-- PostgreSQL database cluster dump complete\n--\n` });
      if (c.refused) assert.match(scan.stdout, /^bad\t/m, 'the restore refuses what it does not follow');
      else assert.deepEqual(scan.stdout.split('\n').filter((l) => l.startsWith('db\t')).map((l) => l.slice(3)), seen, scan.stdout);
    });
  }
});

describeNeeding('full restores of dumps that used to mislead the restore (real PostgreSQL 15)', { skip: skipUnless(needs) }, () => {
  let pg: PgServer;
  const ROLE_COMMENT = "x\nALTER ROLE app WITH LOGIN PASSWORD 'evil';\n\\connect evil3\n";
  const rows = (db: string) => pg.psql(`SELECT string_agg(id || ':' || item, ',' ORDER BY id) FROM orders`, db);
  const databases = () => pg.psql(`SELECT string_agg(datname, '|' ORDER BY datname) FROM pg_database WHERE NOT datistemplate`);
  const makeLive = async (dbs: string[]) => {
    for (const db of dbs) await pg.psql(`DELETE FROM orders; INSERT INTO orders VALUES (1, 'live'), (3, 'live only')`, db);
  };
  /** Databases `dbs` (each with the backup's two rows, then `setup` SQL run in shop when given), backed up into a new folder. */
  const backedUp = async (dbs: string[], shopSetup = ''): Promise<string> => {
    for (const db of dbs) {
      await pg.psql(`CREATE DATABASE ${ident(db)} OWNER app`);
      await pg.psql(`SET ROLE app; CREATE TABLE orders (id int primary key, item text); INSERT INTO orders VALUES (1, 'in the backup'), (2, 'in the backup too')`, db);
    }
    if (shopSetup) await pg.psql(shopSetup, 'shop');
    const dir = tempDir('pg-dump-reading').dir;
    const r = await runScript('postgres-backup', { ...pg.env(), BACKUP_DIR: dir, RETENTION_DAYS: '0' });
    // A TAB name cannot be in databases.tsv: such a run says so (exit 1), the backup is kept.
    assert.equal(backupEntries(dir).length, 1, describeRun(r));
    return dir;
  };
  const clusterSql = (dir: string) => gunzipSync(fs.readFileSync(path.join(dir, backupEntries(dir)[0], 'cluster.sql.gz'))).toString('utf8');
  const dropAll = async (dbs: string[]) => {
    for (const db of dbs) await pg.psql(`DROP DATABASE IF EXISTS ${ident(db)} WITH (FORCE)`);
  };
  /** A full restore over live copies of `dbs` that have a row the backup lacks: each is the backup's again, no other database. */
  const restoresExactly = async (dir: string, dbs: string[]) => {
    await makeLive(dbs);
    const r = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: dir, RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 180_000 });
    assert.equal(r.code, 0, describeRun(r));
    for (const db of dbs) assert.equal(await rows(db), '1:in the backup,2:in the backup too', `${JSON.stringify(db)}: the backup's rows, no live rows\n${describeRun(r)}`);
    assert.equal(await databases(), ['postgres', ...dbs].sort().join('|'), 'no database invented, none missing, no copy left aside');
    assert.match(r.stdout, new RegExp(`full-cluster restore complete: ${dbs.length + 1} databases of the dump restored`));
    return r;
  };

  before(async () => {
    assertBinaries(needs);
    pg = await startPostgres();
    await pg.psql(`CREATE ROLE app LOGIN PASSWORD 'app-pw'`);
  });
  after(() => pg?.stop());

  test('an index comment holding the line "COPY staging FROM stdin;" before a TAB-named database: that database is replaced by the backup, not appended to', async () => {
    const dbs = ['shop', 'tab\tdb'];
    const dir = await backedUp(dbs, `SET ROLE app; CREATE TABLE staging (id int, v text); CREATE INDEX staging_i ON staging (id);
      COMMENT ON INDEX staging_i IS 'line one\nCOPY staging FROM stdin;\nline three';`);
    const sql = clusterSql(dir);
    assert.ok(sql.indexOf('\nCOPY staging FROM stdin;\n') < sql.indexOf(`"dbname='tab\tdb'"`), 'the comment comes before the TAB-named database in the dump');
    try {
      await restoresExactly(dir, dbs);
      assert.equal(await pg.psql(`SELECT obj_description('staging_i'::regclass, 'pg_class')`, 'shop'), 'line one\nCOPY staging FROM stdin;\nline three');
    } finally {
      await dropAll(dbs);
    }
  });

  test('\\connect lines in a function body, in table data and in a role\'s comment are no databases; the comment and the data come back intact', async () => {
    const dbs = ['shop'];
    await pg.psql(`COMMENT ON ROLE app IS ${lit(ROLE_COMMENT)}`);
    const dir = await backedUp(dbs, `SET ROLE app; CREATE TABLE staging (id int, v text);
      INSERT INTO staging VALUES (1, E'\\\\connect evil4'), (2, E'line\\n\\\\connect evil5');
      CREATE FUNCTION f() RETURNS text LANGUAGE plpgsql AS $body$
BEGIN
RETURN 'x
\\connect evil6
';
END $body$;`);
    assert.match(clusterSql(dir), /^\\connect evil6$/m, 'the function body has a line that reads like a \\connect');
    try {
      await restoresExactly(dir, dbs);
      assert.equal(await pg.psql(`SELECT shobj_description(oid, 'pg_authid') FROM pg_roles WHERE rolname = 'app'`), ROLE_COMMENT, 'the role comment quoting ALTER ROLE and \\connect is intact');
      assert.equal(await pg.psql(`SELECT string_agg(v, '|' ORDER BY id) FROM staging`, 'shop'), '\\connect evil4|line\n\\connect evil5');
    } finally {
      await pg.psql('COMMENT ON ROLE app IS NULL');
      await dropAll(dbs);
    }
  });

  test('names pg_dumpall quotes in \\connect (MyDb, the keyword user, quotes and a backslash) are restored like any other', async () => {
    const dbs = ['MyDb', 'user', `it's "odd" \\ name`];
    const dir = await backedUp(dbs);
    assert.match(clusterSql(dir), /^\\connect "MyDb"$/m);
    assert.match(clusterSql(dir), /^\\connect "user"$/m);
    try {
      await restoresExactly(dir, dbs);
    } finally {
      await dropAll(dbs);
    }
  });

  test('databases named like the restore\'s own leftovers (pre_restore_<14 digits>_<n>, restore_...) are ordinary databases: single-database and full restores finish', async () => {
    const dbs = ['shop', 'pre_restore_20240101000000_1', 'restore_20240101000000_7'];
    const dir = await backedUp(dbs);
    try {
      await makeLive(dbs);
      const one = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: dir, RESTORE_DATABASE: 'shop', RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
      assert.equal(one.code, 0, describeRun(one));
      assert.doesNotMatch(one.stdout + one.stderr, /left by an earlier restore/);
      const named = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: dir, RESTORE_DATABASE: dbs[1], RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
      assert.equal(named.code, 0, describeRun(named));
      assert.equal(await rows(dbs[1]), '1:in the backup,2:in the backup too');
      await restoresExactly(dir, dbs);
    } finally {
      await dropAll(dbs);
    }
  });

  for (const single of [false, true]) {
    test(`a full TMPDIR: the ${single ? 'single-database' : 'full'} restore names the cause (No space left on device) before anything changes`, async (t) => {
      const disk = tmpfsFor(t, '64k');
      if (!disk) return;
      const dbs = ['shop'];
      const dir = await backedUp(dbs);
      try {
        disk.fill();
        await makeLive(dbs);
        const r = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: dir, RESTORE_DROP_EXISTING: 'true', TMPDIR: disk.dir, ...(single ? { RESTORE_DATABASE: 'shop' } : {}) }, { timeoutMs: 120_000 });
        assert.equal(r.code, 1, describeRun(r));
        assert.match(r.stderr, new RegExp(`cannot write to ${disk.dir}: the disk is full \\(No space left on device\\)`), describeRun(r));
        assert.match(r.stderr, /nothing was changed/);
        assert.equal(await rows('shop'), '1:live,3:live only');
      } finally {
        await dropAll(dbs);
      }
    });
  }
});
