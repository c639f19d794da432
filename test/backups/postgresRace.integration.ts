// Restores that cannot race, and full restores that account for every database of the dump (issue 30),
// against a real PostgreSQL 15: two full restores at once, a restore against a running backup, a database
// whose name has a TAB (not in databases.tsv) or a newline (refused by pg_dumpall), role passwords rotated
// after the backup, and a full restore killed half-way and run again.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, beforeEach, test } from 'node:test';
import {
  PG_NEEDS, agedBackups, assertBinaries, backupEntries, describeRun, pgBinDir, run, runScript, skipUnless, describeNeeding, startPostgres, startScript, tempDir,
  waitForFile as waitFor, type PgServer,
} from './servers';

/** A PATH folder whose `awk`, when it is the full restore's feed (mode=feed), waits until $gate is removed, then runs the real awk. */
function gatedAwk(): { bin: string; gate: string; reached: string } {
  const bin = tempDir('gated-awk').dir;
  const gate = path.join(bin, 'gate');
  const reached = path.join(bin, 'reached');
  fs.writeFileSync(gate, '');
  fs.writeFileSync(path.join(bin, 'awk'), `#!/bin/sh\ncase "$*" in *mode=feed*) : > ${reached}; while [ -e ${gate} ]; do sleep 0.1; done ;; esac\nexec /usr/bin/awk "$@"\n`, { mode: 0o755 });
  return { bin, gate, reached };
}

const needs = PG_NEEDS();
describeNeeding('postgres restores one at a time, every database of the dump accounted for (real PostgreSQL)', { skip: skipUnless(needs) }, () => {
  let pg: PgServer;
  let backupDir: string;
  const TAB_DB = 'tab\tname';
  const QUOTE_DB = `it's "odd"`;
  const env = () => ({ ...pg.env(), BACKUP_DIR: backupDir });
  const rows = (db: string, table = 'orders') => pg.psql(`SELECT string_agg(id || ':' || item, ',' ORDER BY id) FROM ${table}`, db);
  const dbs = () => pg.psql(`SELECT string_agg(datname, '|' ORDER BY datname) FROM pg_database WHERE NOT datistemplate`);
  const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const ident = (s: string) => `"${s.replace(/"/g, '""')}"`;
  const psqlAs = (user: string, password: string, sql: string, db = 'postgres') =>
    run(path.join(pgBinDir()!, 'psql'), ['-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql], {
      env: { ...process.env, ...pg.env(), PGUSER: user, PGPASSWORD: password, PGCONNECT_TIMEOUT: '5' },
    }).then((s) => s.trim());

  before(async () => {
    assertBinaries(needs);
    pg = await startPostgres();
    backupDir = tempDir('pg-race').dir;
    await pg.psql(`CREATE ROLE app LOGIN PASSWORD 'app-old'`);
    for (const db of ['shop', TAB_DB, QUOTE_DB]) {
      await pg.psql(`CREATE DATABASE ${ident(db)} OWNER app`);
      await pg.psql(`CREATE TABLE orders (id int primary key, item text); INSERT INTO orders VALUES (1, 'in the backup'), (2, 'in the backup too'); ALTER TABLE orders OWNER TO app`, db);
    }
    const r = await runScript('postgres-backup', { ...env(), RETENTION_DAYS: '0' });
    // The TAB name cannot be in databases.tsv: the run says so (exit 1) but the backup is kept.
    assert.equal(backupEntries(backupDir).length, 1, describeRun(r));
  });
  after(() => pg?.stop());
  beforeEach(async () => {
    // The live state each test starts from: every database there, with a row the backup does not have.
    for (const db of ['shop', TAB_DB, QUOTE_DB]) {
      const exists = await pg.psql(`SELECT count(*) FROM pg_database WHERE datname = ${lit(db)}`);
      if (exists === '0') {
        await pg.psql(`CREATE DATABASE ${ident(db)} OWNER app`);
        await pg.psql(`CREATE TABLE orders (id int primary key, item text); ALTER TABLE orders OWNER TO app`, db);
      }
      await pg.psql(`DELETE FROM orders; INSERT INTO orders VALUES (1, 'live'), (3, 'live only')`, db);
    }
    for (const d of (await pg.psql(`SELECT datname FROM pg_database WHERE datname LIKE 'pre\\_restore\\_%' OR datname LIKE 'restore\\_%'`)).split('\n').filter(Boolean)) {
      await pg.psql(`DROP DATABASE ${ident(d)}`);
    }
  });

  test('two full restores at once: one restores, the other refuses naming the holder; the live databases are whole; nothing claims what did not happen', async () => {
    const { bin, gate, reached } = gatedAwk();
    const e = { ...env(), RESTORE_DROP_EXISTING: 'true' };
    const first = startScript('postgres-restore', e, [bin]);
    // The first one is in the middle of its feed (databases renamed aside) when the second starts.
    await Promise.race([waitFor(reached), first.done]);
    const second = await runScript('postgres-restore', e, { timeoutMs: 60_000 });
    fs.rmSync(gate);
    const a = await first.done;
    assert.equal(a.code, 0, describeRun(a));
    assert.match(a.stdout, /full-cluster restore complete/);
    assert.equal(second.code, 1, describeRun(second));
    assert.match(second.stderr, /another backup or restore of PostgreSQL at 127\.0\.0\.1:\d+ is running, held by: postgres-restore pid \d+/);
    assert.match(second.stderr, /nothing was changed/);
    assert.doesNotMatch(second.stderr + second.stdout, /is back as it was|restore complete/);
    for (const db of ['shop', TAB_DB, QUOTE_DB]) assert.equal(await rows(db), '1:in the backup,2:in the backup too', db);
    assert.equal(await dbs(), ['postgres', QUOTE_DB, 'shop', TAB_DB].sort().join('|'), 'no pre_restore_* copy left, no database lost');
  });

  test('a backup while a restore runs is refused, naming the restore; the restore finishes', async () => {
    const { bin, gate, reached } = gatedAwk();
    const restore = startScript('postgres-restore', { ...env(), RESTORE_DROP_EXISTING: 'true' }, [bin]);
    await Promise.race([waitFor(reached), restore.done]);
    const dir = tempDir('pg-during-restore').dir;
    const b = await runScript('postgres-backup', { ...env(), BACKUP_DIR: dir, RETENTION_DAYS: '0' });
    // The workflow tool's database on the same server: its backup and restore (database mode) wait their turn too.
    const wfDir = tempDir('wf-during-restore').dir;
    const wb = await runScript('workflow-backup', { ...env(), BACKUP_DIR: wfDir, RETENTION_DAYS: '0', WF_BACKUP_MODE: 'database', PGDATABASE: 'postgres' });
    const wfFolder = path.join(tempDir('wf-folder').dir, 'f');
    fs.mkdirSync(wfFolder);
    fs.copyFileSync(path.join(backupDir, backupEntries(backupDir)[0], 'databases', 'shop.dump'), path.join(wfFolder, 'workflow-db.dump'));
    fs.writeFileSync(path.join(wfFolder, 'database.tsv'), 'shop\tapp\tUTF8\tC.UTF-8\tC.UTF-8\n');
    const wr = await runScript('workflow-restore', { ...env(), RESTORE_FROM: wfFolder, WF_BACKUP_MODE: 'database', PGDATABASE: 'shop', RESTORE_DROP_EXISTING: 'true', RESTORE_ALLOW_UNVERIFIED: 'true' });
    fs.rmSync(gate);
    const r = await restore.done;
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(b.code, 1, describeRun(b));
    assert.match(b.stderr, /another backup or restore of PostgreSQL at .* is running, held by: postgres-restore pid \d+/);
    assert.deepEqual(fs.readdirSync(dir), [], 'no partial backup left');
    assert.equal(wb.code, 1, describeRun(wb));
    assert.match(wb.stderr, /another backup or restore of PostgreSQL at .* is running, held by: postgres-restore pid \d+/);
    assert.deepEqual(fs.readdirSync(wfDir), []);
    assert.equal(wr.code, 1, describeRun(wr));
    assert.match(wr.stderr, /another backup or restore of PostgreSQL at .* is running, held by: postgres-restore pid \d+/);
  });

  test('a full restore takes its databases from the dump: the TAB-named one is renamed aside and replaced, not appended to, and named in the report', async () => {
    const r = await runScript('postgres-restore', { ...env(), RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
    assert.equal(r.code, 0, describeRun(r));
    for (const db of ['shop', TAB_DB, QUOTE_DB]) assert.equal(await rows(db), '1:in the backup,2:in the backup too', `${JSON.stringify(db)}: no duplicated or live-only rows`);
    assert.match(r.stdout, /renaming the existing database 'tab\tname' aside/);
    assert.match(r.stdout, /full-cluster restore complete: 4 databases of the dump restored \(it's "odd", postgres, shop, tab\tname\)/);
  });

  test('without RESTORE_DROP_EXISTING a TAB-named database that exists is refused before anything changes', async () => {
    await pg.psql(`DROP DATABASE shop`);
    await pg.psql(`DROP DATABASE ${ident(QUOTE_DB)}`);
    const r = await runScript('postgres-restore', env(), { timeoutMs: 120_000 });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /database 'tab\tname' already exists on .*; nothing was changed/);
    assert.equal(await rows(TAB_DB), '1:live,3:live only');
    assert.equal(await dbs(), ['postgres', 'tab\tname'].sort().join('|'));
  });

  test('role passwords changed after the backup are kept (the application still logs in), and the report names the roles touched', async () => {
    await pg.psql(`ALTER ROLE app PASSWORD 'app-new'`);
    await pg.psql(`DROP ROLE IF EXISTS reporting; CREATE ROLE reporting LOGIN PASSWORD 'rep'`);
    const r = await runScript('postgres-restore', { ...env(), RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(await psqlAs('app', 'app-new', 'SELECT 1', 'shop'), '1', 'the rotated password still works');
    await assert.rejects(psqlAs('app', 'app-old', 'SELECT 1', 'shop'), /password authentication failed/);
    assert.match(r.stdout, /roles of the dump that exist: app, postgres: attributes and memberships set from the dump, current passwords kept \(RESTORE_ROLE_PASSWORDS=true sets the dump's\)/);
  });

  test('a role whose name has a line break keeps its rotated password too', async () => {
    const dir = tempDir('pg-nl-role').dir;
    await pg.psql(`CREATE ROLE "odd\nrole" LOGIN PASSWORD 'nl-old'`);
    try {
      const b = await runScript('postgres-backup', { ...env(), BACKUP_DIR: dir, RETENTION_DAYS: '0' });
      assert.equal(backupEntries(dir).length, 1, describeRun(b));
      await pg.psql(`ALTER ROLE "odd\nrole" PASSWORD 'nl-new'`);
      const hash = () => pg.psql(`SELECT rolpassword FROM pg_authid WHERE rolname = E'odd\\nrole'`);
      const rotated = await hash();
      const r = await runScript('postgres-restore', { ...env(), BACKUP_DIR: dir, RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
      assert.equal(r.code, 0, describeRun(r));
      assert.equal(await hash(), rotated, 'the rotated password is kept');
      assert.match(r.stdout, /roles of the dump that exist: app, "odd\\nrole", postgres(, reporting)?: attributes and memberships set from the dump, current passwords kept/);
    } finally {
      await pg.psql(`DROP ROLE "odd\nrole"`);
    }
  });

  test('RESTORE_ROLE_PASSWORDS=true sets the dump\'s passwords (except the connecting role\'s) and says so', async () => {
    await pg.psql(`ALTER ROLE app PASSWORD 'app-new'`);
    const r = await runScript('postgres-restore', { ...env(), RESTORE_DROP_EXISTING: 'true', RESTORE_ROLE_PASSWORDS: 'true' }, { timeoutMs: 120_000 });
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(await psqlAs('app', 'app-old', 'SELECT 1', 'shop'), '1');
    assert.match(r.stdout, /passwords set from the dump \(RESTORE_ROLE_PASSWORDS=true\): app/);
    await pg.psql(`ALTER ROLE app PASSWORD 'app-old'`);
  });

  test('a full restore killed half-way: the re-run names the pre_restore_* databases that hold the originals, and does not call itself complete without them', async () => {
    const { bin, reached } = gatedAwk();
    const killed = startScript('postgres-restore', { ...env(), RESTORE_DROP_EXISTING: 'true' }, [bin]);
    await waitFor(reached);
    killed.kill();
    await killed.done;
    const left = (await pg.psql(`SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE datname LIKE 'pre\\_restore\\_%'`)).split(',');
    assert.equal(left.length, 3, 'the killed run left the originals aside');
    const r = await runScript('postgres-restore', { ...env(), RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
    assert.equal(r.code, 1, describeRun(r));
    for (const d of left) assert.ok(r.stderr.includes(`'${d}'`), `${d} named:\n${r.stderr}`);
    assert.match(r.stderr, /holds the original of 'shop'/);
    assert.doesNotMatch(r.stdout, /restore complete/);
  });

  test('a single-database restore killed while loading: the re-run names the scratch copy it left, and the restored database carries no label of it', async () => {
    const bin = tempDir('gated-pg-restore').dir;
    const reached = path.join(bin, 'reached');
    fs.writeFileSync(path.join(bin, 'pg_restore'), `#!/bin/sh\ncase " $* " in *" --single-transaction "*) : > ${reached}; sleep 600 ;; esac\nexec ${path.join(pgBinDir()!, 'pg_restore')} "$@"\n`, { mode: 0o755 });
    const killed = startScript('postgres-restore', { ...env(), RESTORE_DATABASE: 'shop', RESTORE_DROP_EXISTING: 'true' }, [bin]);
    await waitFor(reached);
    killed.kill();
    await killed.done;
    const scratch = await pg.psql(`SELECT datname FROM pg_database WHERE datname LIKE 'restore\\_%'`);
    assert.match(scratch, /^restore_\d{14}_\d+$/);
    const r = await runScript('postgres-restore', { ...env(), RESTORE_DATABASE: 'shop', RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 60_000 });
    assert.equal(r.code, 1, describeRun(r));
    assert.ok(r.stderr.includes(`'${scratch}' (scratch copy of the backup of 'shop', made by postgres-restore pid`), r.stderr);
    assert.match(r.stderr, /database 'shop' restored, but databases left by an earlier restore that did not finish still exist/);
    assert.equal(await rows('shop'), '1:in the backup,2:in the backup too');
    assert.equal(await pg.psql(`SELECT coalesce(shobj_description(oid, 'pg_database'), '(none)') FROM pg_database WHERE datname = 'shop'`), '(none)');
  });

  test('a newline in a database name: the backup of every other database is made, that one is named, the run fails', async () => {
    await pg.psql(`CREATE DATABASE "new\nline"`);
    try {
      const dir = tempDir('pg-newline').dir;
      // An old backup may be the last one that holds that database (before it got its name): no retention.
      const { old } = agedBackups(dir, 'cluster.sql.gz');
      const r = await runScript('postgres-backup', { ...env(), BACKUP_DIR: dir, RETENTION_DAYS: '7' });
      assert.equal(r.code, 1, describeRun(r));
      assert.ok(fs.existsSync(old), 'no retention in a run that could not back up every database');
      assert.match(r.stderr, /no retention this run/);
      assert.match(r.stderr, /database 'new\\nline' has a line break in its name/);
      assert.match(r.stderr, /pg_dumpall cannot dump/);
      const made = backupEntries(dir).filter((e) => !e.startsWith('2020-'));
      assert.equal(made.length, 1, 'the backup of everything else was kept');
      const { gunzipSync } = await import('node:zlib');
      const sql = gunzipSync(fs.readFileSync(path.join(dir, made[0], 'cluster.sql.gz'))).toString('utf8');
      assert.match(sql, /CREATE DATABASE shop /);
      assert.match(sql, /PostgreSQL database cluster dump complete/);
      assert.match(fs.readFileSync(path.join(dir, made[0], 'databases.tsv'), 'utf8'), /^shop\.dump\tshop\t/m);
    } finally {
      await pg.psql(`DROP DATABASE "new\nline"`);
    }
  });
});
