// A full disk is named as the cause (issue 42, class 2: "the disk is full (No space left on device)"), for the
// data folder a restore writes into, the TMPDIR it works in and the backup volume a backup writes to, with a
// real full tmpfs; nothing half-written is left, nothing live is changed. Real sqlite3, git and redis-server.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  CURL_NEEDS, GIT_NEEDS, REDIS_NEEDS, SQLITE_NEEDS, backupEntries, describeNeeding, describeRun, run, runScript, skipUnless, startRedis, tempDir, tmpfsFor,
} from './servers';

const FULL = 'the disk is full \\(No space left on device\\)';
const STAMP = '2030-01-01T000000Z';
const big = (kib: number) => Buffer.alloc(kib * 1024, 7);
/** Names in `dir` that a run may have left (temporary copies, partial folders). */
const leftovers = (dir: string) => fs.readdirSync(dir).filter((n) => /^\.restore-\d|\.restore-\d|^\.partial-/.test(n));

async function backupFolder(files: Record<string, string | Buffer>): Promise<string> {
  const backupDir = tempDir('full-backups').dir;
  const folder = path.join(backupDir, STAMP);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(folder, rel)), { recursive: true });
    fs.writeFileSync(path.join(folder, rel), content);
  }
  await run('sh', ['-c', `cd "${folder}" && find . -type f ! -name SHA256SUMS -exec sha256sum {} + > SHA256SUMS`]);
  return backupDir;
}

describeNeeding('a full data folder or TMPDIR is named as the cause of a failed restore (real tmpfs, sqlite3)', { skip: skipUnless(SQLITE_NEEDS) }, () => {
  for (const mode of ['rdb', 'aof'] as const) {
    test(`Redis (${mode}): a full data folder`, async (t) => {
      const disk = tmpfsFor(t, '256k');
      if (!disk) return;
      const backupDir = await backupFolder({ 'dump.rdb': big(128) });
      const live = mode === 'rdb' ? path.join(disk.dir, 'dump.rdb') : path.join(disk.dir, 'appendonlydir');
      if (mode === 'rdb') fs.writeFileSync(live, 'live');
      else fs.mkdirSync(live);
      disk.fill();
      const r = await runScript('redis-restore', { BACKUP_DIR: backupDir, REDIS_DATA_DIR: disk.dir, REDIS_PERSISTENCE_MODE: mode });
      assert.equal(r.code, 1, describeRun(r));
      assert.match(r.stderr, new RegExp(`(copying the dump into|creating) .* failed: ${FULL} at ${disk.dir}; nothing was changed`), describeRun(r));
      assert.deepEqual(leftovers(disk.dir), []);
      if (mode === 'rdb') assert.equal(fs.readFileSync(live, 'utf8'), 'live');
      else assert.deepEqual(fs.readdirSync(live), []);
    });
  }

  test('SQLite: a full database folder, and a full uploads folder after the database was restored', async (t) => {
    const disk = tmpfsFor(t, '512k');
    if (!disk) return;
    const src = tempDir('full-sqlite-src').dir;
    await run('sqlite3', ['-bail', '-batch', path.join(src, 'app.db'), `CREATE TABLE t (v BLOB); INSERT INTO t VALUES (randomblob(300000));`]);
    const backupDir = await backupFolder({ 'app.db': fs.readFileSync(path.join(src, 'app.db')), 'uploads/big.bin': big(300) });
    const db = path.join(disk.dir, 'app.db');
    await run('sqlite3', ['-bail', '-batch', db, `CREATE TABLE t (v BLOB); INSERT INTO t VALUES ('live');`]);
    const uploads = path.join(disk.dir, 'uploads');
    fs.mkdirSync(uploads);
    fs.writeFileSync(path.join(uploads, 'live.txt'), 'live');
    disk.fill();
    const r = await runScript('sqlite-restore', { BACKUP_DIR: backupDir, SQLITE_DB: db });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, new RegExp(`copying the backup into .* failed: ${FULL} at ${disk.dir}; nothing was changed`), describeRun(r));
    assert.deepEqual(leftovers(disk.dir), []);
    assert.equal((await run('sqlite3', ['-bail', '-batch', db, 'SELECT v FROM t'])).trim(), 'live');
    // the database folder has room, the uploads folder (another volume) does not
    const data = tempDir('full-sqlite-data').dir;
    const db2 = path.join(data, 'app.db');
    const u = await runScript('sqlite-restore', { BACKUP_DIR: backupDir, SQLITE_DB: db2, UPLOADS_DIR: uploads });
    assert.equal(u.code, 1, describeRun(u));
    assert.match(u.stderr, new RegExp(`copying uploads back failed: ${FULL} at ${disk.dir} \\(the database is already restored; re-run to retry the uploads\\)`), describeRun(u));
    assert.deepEqual(leftovers(disk.dir), []);
    assert.deepEqual(fs.readdirSync(uploads), ['live.txt']);
  });
});

describeNeeding('a full disk is named as the cause of a failed backup (real tmpfs, sqlite3)', { skip: skipUnless(SQLITE_NEEDS) }, () => {
  test('SQLite: a full backup volume', async (t) => {
    const disk = tmpfsFor(t, '256k');
    if (!disk) return;
    const data = tempDir('full-sqlite-live').dir;
    const db = path.join(data, 'app.db');
    await run('sqlite3', ['-bail', '-batch', db, `CREATE TABLE t (v BLOB); INSERT INTO t VALUES (randomblob(300000));`]);
    disk.fill();
    const r = await runScript('sqlite-backup', { BACKUP_DIR: disk.dir, RETENTION_DAYS: '0', SQLITE_DB: db });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, new RegExp(`VACUUM INTO of .* failed: ${FULL} at ${disk.dir}`), describeRun(r));
    assert.deepEqual(leftovers(disk.dir), []);
    assert.deepEqual(backupEntries(disk.dir), []);
  });
});

describeNeeding('a full disk is named as the cause (real redis-server)', { skip: skipUnless(REDIS_NEEDS) }, () => {
  test('Redis: a full backup volume', async (t) => {
    const disk = tmpfsFor(t, '256k');
    if (!disk) return;
    const redis = await startRedis();
    try {
      const c = await redis.client();
      await c.call('SET', 'big', big(200).toString('latin1'));
      c.close();
      disk.fill();
      const r = await runScript('redis-backup', { ...redis.env(), BACKUP_DIR: disk.dir, RETENTION_DAYS: '0' });
      assert.equal(r.code, 1, describeRun(r));
      assert.match(r.stderr, new RegExp(`redis-cli --rdb: ${FULL} at ${disk.dir}`), describeRun(r));
      assert.deepEqual(leftovers(disk.dir), []);
    } finally {
      await redis.stop();
    }
  });
});

describeNeeding('a full disk is named as the cause (real git)', { skip: skipUnless(GIT_NEEDS) }, () => {
  test('git: a full TMPDIR while reading a snapshot, a full RESTORE_TARGET, a full backup volume', async (t) => {
    const disk = tmpfsFor(t, '256k');
    if (!disk) return;
    const root = tempDir('full-git').dir;
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', HOME: '/nonexistent' };
    const work = path.join(root, 'work');
    fs.mkdirSync(work);
    await run('git', ['init', '-q', '-b', 'main'], { cwd: work, env: gitEnv });
    fs.writeFileSync(path.join(work, 'big.bin'), Buffer.from(Array.from({ length: 400 * 1024 }, (_, i) => (i * 7919) % 251)));
    await run('git', ['add', '.'], { cwd: work, env: gitEnv });
    await run('git', ['commit', '-q', '-m', 'one'], { cwd: work, env: gitEnv });
    const upstream = path.join(root, 'upstream.git');
    await run('git', ['clone', '-q', '--bare', work, upstream], { env: gitEnv });
    const backupDir = path.join(root, 'backups');
    fs.mkdirSync(backupDir);
    const url = `file://${upstream}`;
    const m = await runScript('git-mirror', { BACKUP_DIR: backupDir, REPOSITORIES: url, RETENTION_DAYS: '0' });
    assert.equal(m.code, 0, describeRun(m));
    disk.fill();
    const snap = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: url, RESTORE_FROM: 'latest', RESTORE_TARGET: path.join(root, 'clone'), TMPDIR: disk.dir });
    assert.equal(snap.code, 1, describeRun(snap));
    assert.match(snap.stderr, new RegExp(`reading snapshot .*: cannot write to ${disk.dir}: ${FULL} at ${disk.dir}; nothing was changed`), describeRun(snap));
    const target = path.join(disk.dir, 'clone');
    const clone = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: url, RESTORE_TARGET: target });
    assert.equal(clone.code, 1, describeRun(clone));
    assert.match(clone.stderr, new RegExp(`clone failed: ${FULL} at ${disk.dir}`), describeRun(clone));
    assert.ok(!fs.existsSync(target), 'no half clone left');
    const mirror = await runScript('git-mirror', { BACKUP_DIR: disk.dir, REPOSITORIES: url, RETENTION_DAYS: '0' });
    assert.equal(mirror.code, 1, describeRun(mirror));
    assert.match(mirror.stderr, new RegExp(`${FULL} at ${disk.dir}`), describeRun(mirror));
    assert.deepEqual(leftovers(disk.dir), []);
  });
});

describeNeeding('a full TMPDIR is named before a request is made (object store, search engine)', { skip: skipUnless(CURL_NEEDS) }, () => {
  test('objectstore-restore and search-restore with a full TMPDIR: the cause, and neither mc nor the search engine is called', async (t) => {
    const disk = tmpfsFor(t, '64k');
    if (!disk) return;
    disk.fill();
    const bin = tempDir('mc-not-called').dir;
    fs.writeFileSync(path.join(bin, 'mc'), '#!/bin/sh\necho "mc called: $*" >&2\nexit 3\n', { mode: 0o755 });
    const backupDir = await backupFolder({ 'photos/a.jpg': 'a' });
    const o = await runScript('objectstore-restore', { BACKUP_DIR: backupDir, OBJECTSTORE_URL: 'http://127.0.0.1:9', OBJECTSTORE_ACCESS_KEY: 'a', OBJECTSTORE_SECRET_KEY: 's', TMPDIR: disk.dir }, { pathPrepend: [bin] });
    assert.equal(o.code, 1, describeRun(o));
    assert.match(o.stderr, new RegExp(`writing the mc configuration: cannot write to ${disk.dir}: ${FULL} at ${disk.dir}; nothing was changed`), describeRun(o));
    assert.doesNotMatch(o.stderr, /mc called/);
    const s = await runScript('search-restore', { SEARCH_URL: 'http://127.0.0.1:9', SNAPSHOT_REPOSITORY: 'backups', SNAPSHOT_NAME: 'snap-1', RESTORE_INDICES: 'logs-*', TMPDIR: disk.dir });
    assert.equal(s.code, 1, describeRun(s));
    assert.match(s.stderr, new RegExp(`preparing the request: cannot write to ${disk.dir}: ${FULL} at ${disk.dir}; nothing was changed`), describeRun(s));
    assert.deepEqual(fs.readdirSync(disk.dir).filter((n) => n !== '.fill'), [], 'no temporary folder left');
  });
});
