// Every path setting of the backup scripts stays inside its volume (issue 42, class 2): a name that would
// reach beside it ("..", "/", a path where a plain name is expected), a name the restore keeps for its own
// files, a folder that holds the database or the backup volume, is refused before anything is read or
// written, naming the setting. Real sqlite3 and git; the restores of Redis need no server (it must be stopped).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { GIT_NEEDS, SQLITE_NEEDS, describeNeeding, describeRun, run, runScript, skipUnless, tempDir, treeHashes } from './servers';

const STAMP = '2030-01-01T000000Z';

/** root/backups/<stamp> and root/outside (a backup folder beside the volume), both holding `files`, with SHA256SUMS. */
async function volumes(files: Record<string, string | Buffer>): Promise<{ root: string; backups: string; data: string }> {
  const root = tempDir('paths').dir;
  for (const folder of [path.join(root, 'backups', STAMP), path.join(root, 'outside')]) {
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(folder, rel)), { recursive: true });
      fs.writeFileSync(path.join(folder, rel), content);
    }
    await run('sh', ['-c', `cd "${folder}" && find . -type f ! -name SHA256SUMS -exec sha256sum {} + > SHA256SUMS`]);
  }
  const data = path.join(root, 'data');
  fs.mkdirSync(data);
  return { root, backups: path.join(root, 'backups'), data };
}

/** Runs `script` and checks: exit 1, the message, and every file under root as it was (nothing written anywhere). */
async function refused(script: string, env: Record<string, string>, root: string, message: RegExp, pathPrepend: string[] = []): Promise<void> {
  const before = treeHashes(root);
  const r = await runScript(script, env, { pathPrepend });
  assert.equal(r.code, 1, `${JSON.stringify(env)}\n${describeRun(r)}`);
  assert.match(r.stderr, message, describeRun(r));
  assert.deepEqual(treeHashes(root), before, `${JSON.stringify(env)}: nothing written\n${describeRun(r)}`);
}

/** A PATH folder with an `mc` that must never be called (the refusals come first). */
function mcNeverCalled(): string {
  const bin = tempDir('mc-never').dir;
  fs.writeFileSync(path.join(bin, 'mc'), '#!/bin/sh\necho "mc called: $*" >&2\nexit 3\n', { mode: 0o755 });
  return bin;
}

const FROM_OUTSIDE = ['../outside', 'outside/../..', '.', '..'];
const fromRefused = (v: string) => new RegExp(`RESTORE_FROM='${v.replace(/\./g, '\\.')}' must be the name of a backup folder in .*, 'latest', or an absolute path; nothing was changed`);

describeNeeding('path settings of the backup scripts stay inside their volumes (real sqlite3)', { skip: skipUnless(SQLITE_NEEDS) }, () => {
  test('Redis: REDIS_RDB_FILENAME, REDIS_AOF_DIRNAME and REDIS_AOF_FILENAME are plain names in the data folder, not the restore\'s own', async () => {
    const v = await volumes({ 'dump.rdb': 'backup' });
    fs.writeFileSync(path.join(v.data, 'dump.rdb'), 'live');
    const base = { BACKUP_DIR: v.backups, REDIS_DATA_DIR: v.data };
    for (const name of ['../x', '..', '.', 'a/b', 'a\\b', '../../etc/passwd']) {
      await refused('redis-restore', { ...base, REDIS_RDB_FILENAME: name }, v.root, /REDIS_RDB_FILENAME='.*' must be a plain name inside the Redis data directory .*nothing was changed/);
    }
    for (const name of ['.restore-lock', '.restore-2030-01-01T000000Z-1.rdb']) {
      await refused('redis-restore', { ...base, REDIS_RDB_FILENAME: name }, v.root, /is a name this restore keeps for its lock and temporary files; nothing was changed/);
    }
    for (const name of ['../y', '..', '/tmp/elsewhere']) {
      await refused('redis-restore', { ...base, REDIS_PERSISTENCE_MODE: 'aof', REDIS_AOF_DIRNAME: name }, v.root, /REDIS_AOF_DIRNAME='.*' must be a plain name inside the Redis data directory/);
    }
    for (const name of ['../z', 'x/y', '..']) {
      await refused('redis-restore', { ...base, REDIS_PERSISTENCE_MODE: 'aof', REDIS_AOF_FILENAME: name }, v.root, /REDIS_AOF_FILENAME='.*' must be a plain name inside the AOF directory/);
    }
    // a plain name is restored, inside the data folder
    const ok = await runScript('redis-restore', { ...base, REDIS_RDB_FILENAME: 'cache.rdb' });
    assert.equal(ok.code, 0, describeRun(ok));
    assert.equal(fs.readFileSync(path.join(v.data, 'cache.rdb'), 'utf8'), 'backup');
  });

  test('RESTORE_FROM: a folder name in BACKUP_DIR, latest, or an absolute path; a relative path out of the volume is refused (Redis, SQLite, PostgreSQL, workflow, object store)', async () => {
    const sq = tempDir('paths-sqlite-src').dir;
    await run('sqlite3', ['-bail', '-batch', path.join(sq, 'app.db'), `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('backup');`]);
    const v = await volumes({ 'dump.rdb': 'backup', 'app.db': fs.readFileSync(path.join(sq, 'app.db')), 'cluster.sql.gz': 'x', 'databases.tsv': '', 'workflows.json': '[]', bucket: '' });
    fs.writeFileSync(path.join(v.data, 'dump.rdb'), 'live');
    const cases: [string, Record<string, string>][] = [
      ['redis-restore', { REDIS_DATA_DIR: v.data }],
      ['sqlite-restore', { SQLITE_DB: path.join(v.data, 'app.db') }],
      ['postgres-restore', { PGHOST: '127.0.0.1', PGPORT: '1' }],
      ['workflow-restore', { WF_CLI: 'true' }],
      ['objectstore-restore', { OBJECTSTORE_URL: 'http://127.0.0.1:9', OBJECTSTORE_ACCESS_KEY: 'a', OBJECTSTORE_SECRET_KEY: 's' }],
    ];
    for (const [script, env] of cases) {
      for (const from of FROM_OUTSIDE) await refused(script, { ...env, BACKUP_DIR: v.backups, RESTORE_FROM: from }, v.root, fromRefused(from), [mcNeverCalled()]);
    }
    // the absolute path (an operator's deliberate choice, e.g. a copied folder) and "latest" still work
    for (const from of [path.join(v.root, 'outside'), 'latest', STAMP]) {
      const r = await runScript('redis-restore', { BACKUP_DIR: v.backups, REDIS_DATA_DIR: v.data, RESTORE_FROM: from });
      assert.equal(r.code, 0, describeRun(r));
    }
  });

  test('SQLite: SQLITE_DB names a file; UPLOADS_DIR holds neither the database nor the backup volume', async () => {
    const sq = tempDir('paths-sqlite-src2').dir;
    await run('sqlite3', ['-bail', '-batch', path.join(sq, 'app.db'), `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('backup');`]);
    const v = await volumes({ 'app.db': fs.readFileSync(path.join(sq, 'app.db')), 'uploads/f.txt': 'backup' });
    await run('sqlite3', ['-bail', '-batch', path.join(v.data, 'app.db'), `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('live');`]);
    fs.mkdirSync(path.join(v.data, 'sub'));
    fs.writeFileSync(path.join(v.data, 'sub', 'keep'), 'x');
    const db = path.join(v.data, 'app.db');
    const base = { BACKUP_DIR: v.backups };
    await refused('sqlite-restore', { ...base, SQLITE_DB: `${v.data}/` }, v.root, /SQLITE_DB='.*\/' must name the database file, not a folder/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: path.join(v.data, 'sub') }, v.root, /SQLITE_DB=.*\/sub is a folder, not a database file/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: `${v.data}/..` }, v.root, /SQLITE_DB='\.\.' must be a plain name inside/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: path.join(v.data, '.restore-2030-01-01T000000Z-1.db') }, v.root, /'\.restore-\*' names are this restore's own lock and temporary files/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: db, UPLOADS_DIR: '/' }, v.root, /UPLOADS_DIR='\/' must be a plain name inside/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: db, UPLOADS_DIR: v.data }, v.root, /UPLOADS_DIR=.* holds the database .*app\.db: restoring the uploads would move it aside; nothing was changed/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: db, UPLOADS_DIR: `${v.data}/../data` }, v.root, /holds the database/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: db, UPLOADS_DIR: v.root }, v.root, /holds the database/);
    await refused('sqlite-restore', { ...base, SQLITE_DB: db, UPLOADS_DIR: path.join(v.data, 'up*') }, v.root, /its name must not hold '\*', '\?' or '\['/);
    const ok = await runScript('sqlite-restore', { ...base, SQLITE_DB: db, UPLOADS_DIR: path.join(v.data, 'uploads') });
    assert.equal(ok.code, 0, describeRun(ok));
    assert.equal(fs.readFileSync(path.join(v.data, 'uploads', 'f.txt'), 'utf8'), 'backup');
    assert.equal(fs.readFileSync(path.join(v.data, 'sub', 'keep'), 'utf8'), 'x');
    // the backup: an uploads folder that holds the backup volume would be copied into itself
    const backupDb = path.join(v.root, 'live.db');
    await run('sqlite3', ['-bail', '-batch', backupDb, 'CREATE TABLE t (v TEXT);']);
    await refused('sqlite-backup', { BACKUP_DIR: v.backups, RETENTION_DAYS: '0', SQLITE_DB: backupDb, UPLOADS_DIR: v.root }, v.root, /UPLOADS_DIR=.* holds the backup volume .*: its copy would copy the backups into themselves; nothing was changed/);
  });

  test('object store: RESTORE_BUCKETS names buckets (folders of the backup), never a path', async () => {
    const v = await volumes({ 'photos/a.jpg': 'a' });
    const env = { BACKUP_DIR: v.backups, OBJECTSTORE_URL: 'http://127.0.0.1:9', OBJECTSTORE_ACCESS_KEY: 'a', OBJECTSTORE_SECRET_KEY: 's' };
    for (const b of ['../../outside', '..', '.', 'photos/../..']) {
      await refused('objectstore-restore', { ...env, RESTORE_BUCKETS: b }, v.root, /RESTORE_BUCKETS: '.*' is not a bucket name \(a bucket is a folder of the backup\); nothing was changed/, [mcNeverCalled()]);
    }
  });
});

describeNeeding('git: the repository\'s mirror and snapshot paths stay inside the backup volume (real git)', { skip: skipUnless(GIT_NEEDS) }, () => {
  test('RESTORE_REPOSITORY and RESTORE_FROM that lead out of BACKUP_DIR are refused, though a repository is there', async () => {
    const root = tempDir('paths-git').dir;
    const backups = path.join(root, 'backups');
    fs.mkdirSync(backups);
    await run('git', ['init', '-q', '--bare', path.join(root, 'outside', 'repo.git')]);
    fs.mkdirSync(path.join(backups, STAMP));
    const target = path.join(tempDir('paths-git-target').dir, 'clone');
    for (const repo of ['../outside/repo', 'file:///../../outside/repo.git', 'https://../outside/repo.git']) {
      await refused('git-restore', { BACKUP_DIR: backups, RESTORE_REPOSITORY: repo, RESTORE_TARGET: target }, root, /RESTORE_REPOSITORY=.* gives no mirror path inside .*; nothing was changed/);
    }
    for (const from of FROM_OUTSIDE) {
      await refused('git-restore', { BACKUP_DIR: backups, RESTORE_REPOSITORY: 'https://example.test/org/repo.git', RESTORE_FROM: from, RESTORE_TARGET: target }, root, fromRefused(from));
    }
    assert.ok(!fs.existsSync(target), 'nothing cloned');
  });
});
