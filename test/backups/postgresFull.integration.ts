// Full-cluster restore on real PostgreSQL (issue 22): after a password rotation, and with user tables in
// the "postgres" maintenance database, the restore either finishes as asked or leaves the live data exactly
// as it was, and says which. Also: a TAB in a database name, and two backups at once.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import {
  FIXED_STAMP, PG_NEEDS, assertBinaries, assertTwoFoldersOneStamp, backupEntries, describeRun, fixedStampDate, runScript, skipUnless, describeNeeding, startPostgres, tempDir,
  type PgServer,
} from './servers';

const needs = PG_NEEDS();
describeNeeding('postgres full restore (real PostgreSQL)', { skip: skipUnless(needs) }, () => {
  let pg: PgServer;
  let backupDir: string;
  const OLD = 'password-A';
  const NEW = 'password-B';
  const as = (password: string) => ({ ...pg.env(), PGPASSWORD: password, BACKUP_DIR: backupDir });
  const databases = async (password: string) => {
    const p = await runPsql(password, `SELECT string_agg(datname, ',' ORDER BY datname) FROM pg_database WHERE NOT datistemplate`);
    return p;
  };
  const runPsql = async (password: string, sql: string, db = 'postgres') => {
    const { run, pgBinDir } = await import('./servers');
    return (await run(path.join(pgBinDir()!, 'psql'), ['-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql], {
      env: { ...process.env, ...pg.env(), PGPASSWORD: password, PGCONNECT_TIMEOUT: '5' },
    })).replace(/\n$/, '');
  };

  before(async () => {
    assertBinaries(needs);
    pg = await startPostgres(OLD);
    backupDir = tempDir('pg-full').dir;
    await pg.psql(`CREATE DATABASE shop`);
    await pg.psql(`CREATE TABLE orders (id int primary key, item text); INSERT INTO orders VALUES (1, 'in the backup')`, 'shop');
    await pg.psql(`CREATE TABLE notes (id int primary key, body text); INSERT INTO notes VALUES (1, 'maintenance db note')`, 'postgres');
    const r = await runScript('postgres-backup', { ...as(OLD), RETENTION_DAYS: '0' });
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(backupEntries(backupDir).length, 1);
  });
  after(() => pg?.stop());

  test('user tables in the postgres database: refused without RESTORE_DROP_EXISTING, nothing changed', async () => {
    await pg.psql(`DROP DATABASE shop`);
    const r = await runScript('postgres-restore', as(OLD));
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /the maintenance database 'postgres' holds 1 user table\(s\); .*nothing was changed \(set RESTORE_DROP_EXISTING=true to replace it\)/);
    assert.equal(await pg.psql(`SELECT count(*) FROM notes`), '1');
    assert.equal(await databases(OLD), 'postgres');
  });

  test('after a password rotation, a full restore with RESTORE_DROP_EXISTING=true finishes: the data of the backup, the current password kept, the postgres database not appended to', async () => {
    await pg.psql(`CREATE DATABASE shop`);
    await pg.psql(`CREATE TABLE orders (id int primary key, item text); INSERT INTO orders VALUES (1, 'live'), (2, 'after the backup')`, 'shop');
    await pg.psql(`INSERT INTO notes VALUES (2, 'after the backup')`, 'postgres');
    await pg.psql(`ALTER ROLE postgres PASSWORD '${NEW}'`);
    const r = await runScript('postgres-restore', { ...as(NEW), RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /full-cluster restore complete/);
    assert.match(r.stdout, /the password of 'postgres' \(the role this restore connects as\) is kept as it is now/);
    assert.equal(await runPsql(NEW, `SELECT string_agg(id || ':' || item, ',' ORDER BY id) FROM orders`, 'shop'), '1:in the backup');
    assert.equal(await runPsql(NEW, `SELECT string_agg(id || ':' || body, ',' ORDER BY id) FROM notes`), '1:maintenance db note', 'not appended to');
    assert.equal(await databases(NEW), 'postgres,shop', 'no pre_restore_* copy left');
    await assert.rejects(runPsql(OLD, 'SELECT 1'), /password authentication failed/);
  });

  test('a full restore that fails after renaming aside puts every database back, the postgres database included, and says so', async () => {
    await runPsql(NEW, `INSERT INTO orders VALUES (3, 'live only')`, 'shop');
    await runPsql(NEW, `INSERT INTO notes VALUES (3, 'live only')`);
    const liveOrders = await runPsql(NEW, `SELECT string_agg(id || ':' || item, ',' ORDER BY id) FROM orders`, 'shop');
    const liveNotes = await runPsql(NEW, `SELECT string_agg(id || ':' || body, ',' ORDER BY id) FROM notes`);
    // A role the dump's objects need is made unusable: the feed reports errors, the restore must roll back.
    const { gunzipSync, gzipSync } = await import('node:zlib');
    const { execFileSync } = await import('node:child_process');
    const src = path.join(backupDir, backupEntries(backupDir)[0]);
    const bad = path.join(tempDir('pg-bad').dir, 'bad');
    fs.cpSync(src, bad, { recursive: true });
    const sql = gunzipSync(fs.readFileSync(path.join(bad, 'cluster.sql.gz'))).toString('utf8');
    fs.writeFileSync(path.join(bad, 'cluster.sql.gz'), gzipSync(sql.replace(/CREATE TABLE public\.orders \(/, 'CREATE TABLE public.orders (broken broken, ')));
    execFileSync('sh', ['-c', 'sha256sum ./cluster.sql.gz ./databases.tsv ./databases/*.dump > SHA256SUMS'], { cwd: bad });
    const r = await runScript('postgres-restore', { ...as(NEW), RESTORE_FROM: bad, RESTORE_DROP_EXISTING: 'true' }, { timeoutMs: 120_000 });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /every database that existed before is back as it was \(postgres, shop\)/);
    assert.equal(await runPsql(NEW, `SELECT string_agg(id || ':' || item, ',' ORDER BY id) FROM orders`, 'shop'), liveOrders);
    assert.equal(await runPsql(NEW, `SELECT string_agg(id || ':' || body, ',' ORDER BY id) FROM notes`), liveNotes);
    assert.equal(await databases(NEW), 'postgres,shop');
  });

  test('a TAB or newline in a database name does not fail the backup of the others: that database is named, and in the cluster dump', async () => {
    await runPsql(NEW, `CREATE DATABASE "tab\tname"`);
    try {
      const r = await runScript('postgres-backup', { ...as(NEW), RETENTION_DAYS: '0' });
      assert.equal(r.code, 1, describeRun(r));
      assert.match(r.stderr, /database 'tab.name' has a TAB or newline in its name, which databases\.tsv cannot hold: it is only in cluster\.sql\.gz \(rename it to get a per-database dump\)/);
      const newest = backupEntries(backupDir).sort().at(-1)!;
      assert.equal(backupEntries(backupDir).length, 2, 'the backup of everything else was kept');
      assert.match(fs.readFileSync(path.join(backupDir, newest, 'databases.tsv'), 'utf8'), /^shop\.dump\tshop\t/m);
    } finally {
      await runPsql(NEW, `DROP DATABASE "tab\tname"`);
    }
  });

  test('two backups started in the same second both land, in two folders, neither inside the other', async () => {
    // Both runs get the same dated name (a date that answers one fixed second), as two CronJob runs can.
    const bin = fixedStampDate();
    const dir = tempDir('pg-same-second').dir;
    const env = { ...as(NEW), BACKUP_DIR: dir, RETENTION_DAYS: '0' };
    const [a, b] = await Promise.all([runScript('postgres-backup', env, { pathPrepend: [bin] }), runScript('postgres-backup', env, { pathPrepend: [bin] })]);
    assert.equal(a.code, 0, describeRun(a));
    assert.equal(b.code, 0, describeRun(b));
    assertTwoFoldersOneStamp(dir);
    assert.match(a.stdout + b.stdout, new RegExp(`backup complete: .*${FIXED_STAMP}-2 `));
  });
});
