// What runs leave when they are killed (kill -9: a lost pod, an OOM kill) before their EXIT trap can run
// (issue 42, class 2): the next run names each leftover and removes it, and never one a live run is
// writing. Redis (.restore-*.rdb, .restore-*.aofdir), SQLite (.restore-*.db, <uploads>.restore-*), the
// backups' .partial-* folders (flock on the backup folder; without flock, by age), the git mirror's
// .partial-<name>-<pid> clones. Real redis-cli-free restores, real sqlite3 and git.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  GIT_NEEDS, SQLITE_NEEDS, backupEntries, type RunResult, describeNeeding, describeRun, gatedCommand, run, runScript, skipUnless, startScript, tempDir, touchDaysAgo, waitForFile,
} from './servers';

const sqlite = (db: string, sql: string): Promise<string> => run('sqlite3', ['-bail', '-batch', db, sql]).then((s) => s.trimEnd());
const entries = (dir: string, prefix: string) => fs.readdirSync(dir).filter((n) => n.startsWith(prefix)).sort();

/** A backup folder (as the backup scripts write it) holding `files`, with its SHA256SUMS. */
async function backupFolder(files: Record<string, string | Buffer>): Promise<string> {
  const backupDir = tempDir('leftover-backups').dir;
  const folder = path.join(backupDir, '2030-01-01T000000Z');
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(folder, rel)), { recursive: true });
    fs.writeFileSync(path.join(folder, rel), content);
  }
  await run('sh', ['-c', `cd "${folder}" && find . -type f ! -name SHA256SUMS -exec sha256sum {} + > SHA256SUMS`]);
  return backupDir;
}

/** Starts `name` stopped at `gate`, kills it (SIGKILL to its process group) once the gate is reached; what it printed. */
async function killedAt(name: string, env: Record<string, string>, gate: ReturnType<typeof gatedCommand>): Promise<RunResult> {
  const started = startScript(name, env, [gate.bin]);
  await Promise.race([waitForFile(gate.reached), started.done.then((r) => { throw new Error(`ended before the gate: ${describeRun(r)}`); })]);
  started.kill();
  return started.done;
}

describeNeeding('leftovers of killed runs: named and removed by the next run, never a live one (real sqlite3)', { skip: skipUnless(SQLITE_NEEDS) }, () => {
  for (const mode of ['rdb', 'aof'] as const) {
    test(`Redis (${mode}): the temporary copy of a restore killed mid-copy is named and removed by the next restore`, async () => {
      const backupDir = await backupFolder({ 'dump.rdb': 'backup-rdb' });
      const data = tempDir('leftover-redis').dir;
      fs.writeFileSync(path.join(data, 'dump.rdb'), 'live');
      const env = { BACKUP_DIR: backupDir, REDIS_DATA_DIR: data, REDIS_PERSISTENCE_MODE: mode };
      await killedAt('redis-restore', env, gatedCommand('cp', '*.restore-*', 'after'));
      const left = entries(data, '.restore-2');
      assert.equal(left.length, 1, `one temporary copy left: ${fs.readdirSync(data)}`);
      assert.match(left[0], mode === 'rdb' ? /^\.restore-.*\.rdb$/ : /^\.restore-.*\.aofdir$/);
      assert.equal(fs.readFileSync(path.join(data, 'dump.rdb'), 'utf8'), 'live', 'the killed run changed nothing live');
      const r = await runScript('redis-restore', env);
      assert.equal(r.code, 0, describeRun(r));
      assert.ok(r.stdout.includes(`removing ${path.join(data, left[0])}, left by an earlier restore that did not finish`), r.stdout);
      assert.deepEqual(entries(data, '.restore-2'), [], 'removed');
      assert.ok(fs.existsSync(path.join(data, '.restore-lock')), 'the lock file is not a leftover');
    });
  }

  test('Redis: the temporary copy of a live restore is never removed: the second run refuses, the first finishes', async () => {
    const backupDir = await backupFolder({ 'dump.rdb': 'backup-rdb' });
    const data = tempDir('leftover-redis-live').dir;
    const gate = gatedCommand('cp', '*.restore-*', 'after');
    const first = startScript('redis-restore', { BACKUP_DIR: backupDir, REDIS_DATA_DIR: data }, [gate.bin]);
    await waitForFile(gate.reached);
    const live = entries(data, '.restore-2');
    const second = await runScript('redis-restore', { BACKUP_DIR: backupDir, REDIS_DATA_DIR: data });
    assert.equal(second.code, 1, describeRun(second));
    assert.deepEqual(entries(data, '.restore-2'), live, 'the live run\'s copy is still there');
    gate.release();
    const a = await first.done;
    assert.equal(a.code, 0, describeRun(a));
    assert.equal(fs.readFileSync(path.join(data, 'dump.rdb'), 'utf8'), 'backup-rdb');
  });

  test('SQLite: the temporary database and uploads copies of killed restores are named and removed by the next restore', async () => {
    const src = tempDir('leftover-sqlite-src').dir;
    await sqlite(path.join(src, 'webui.db'), `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('from the backup');`);
    const backupDir = await backupFolder({ 'webui.db': fs.readFileSync(path.join(src, 'webui.db')), 'uploads/f.txt': 'backup' });
    const data = tempDir('leftover-sqlite').dir;
    const db = path.join(data, 'webui.db');
    const uploads = path.join(data, 'uploads');
    await sqlite(db, `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('live');`);
    fs.mkdirSync(uploads);
    fs.writeFileSync(path.join(uploads, 'f.txt'), 'live');
    const env = { BACKUP_DIR: backupDir, SQLITE_DB: db, UPLOADS_DIR: uploads };
    await killedAt('sqlite-restore', env, gatedCommand('cp', '*.restore-*.db', 'after'));
    const leftDb = entries(data, '.restore-2');
    assert.equal(leftDb.length, 1, fs.readdirSync(data).join(' '));
    assert.equal(await sqlite(db, 'SELECT v FROM t'), 'live', 'the killed run changed nothing live');
    // the next restore, killed in turn while it copies the uploads, first removed the database copy
    const second = await killedAt('sqlite-restore', env, gatedCommand('cp', '*uploads.restore-*', 'after'));
    assert.ok(second.stdout.includes(`removing ${path.join(data, leftDb[0])}, left by an earlier restore that did not finish`), second.stdout);
    assert.deepEqual(entries(data, '.restore-2'), []);
    const leftUploads = entries(data, 'uploads.restore-');
    assert.equal(leftUploads.length, 1, fs.readdirSync(data).join(' '));
    const r = await runScript('sqlite-restore', env);
    assert.equal(r.code, 0, describeRun(r));
    assert.ok(r.stdout.includes(`removing ${path.join(data, leftUploads[0])}, left by an earlier restore that did not finish`), r.stdout);
    assert.deepEqual(entries(data, 'uploads.restore-'), []);
    assert.equal(await sqlite(db, 'SELECT v FROM t'), 'from the backup');
    assert.equal(fs.readFileSync(path.join(uploads, 'f.txt'), 'utf8'), 'backup');
  });

  test('backups: the partial folder of a backup killed mid-way is named and removed by the next run; a live run\'s partial folder is never removed', async () => {
    const data = tempDir('leftover-partial-data').dir;
    const db = path.join(data, 'app.db');
    await sqlite(db, `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x');`);
    const backupDir = tempDir('leftover-partial').dir;
    const env = { BACKUP_DIR: backupDir, RETENTION_DAYS: '0', SQLITE_DB: db };
    await killedAt('sqlite-backup', env, gatedCommand('sqlite3', '*VACUUM\\ INTO*', 'after'));
    const killed = entries(backupDir, '.partial-');
    assert.equal(killed.length, 1);
    // The next run is stopped in the middle of its copy, alive: it was alone when it started, so it removed
    // the killed run's folder; a run beside it must leave the live run's folder alone.
    const gate = gatedCommand('sqlite3', '*VACUUM\\ INTO*', 'after');
    const live = startScript('sqlite-backup', env, [gate.bin]);
    await waitForFile(gate.reached);
    const livePartial = entries(backupDir, '.partial-');
    assert.equal(livePartial.length, 1);
    assert.notEqual(livePartial[0], killed[0]);
    const beside = await runScript('sqlite-backup', env);
    assert.equal(beside.code, 0, describeRun(beside));
    assert.ok(fs.existsSync(path.join(backupDir, livePartial[0])), 'the live run\'s partial folder is still there');
    assert.ok(beside.stdout.includes(`${path.join(backupDir, livePartial[0])} is in use by a backup that is running now`), beside.stdout);
    gate.release();
    const first = await live.done;
    assert.equal(first.code, 0, describeRun(first));
    assert.ok(first.stdout.includes(`removing ${path.join(backupDir, killed[0])}, left by an earlier backup run that did not finish`), first.stdout);
    assert.deepEqual(entries(backupDir, '.partial-'), []);
    assert.equal(backupEntries(backupDir).length, 2, 'the live run and the one beside it both published');
  });

  test('backups in an image without flock (the mc image): a partial folder older than two days is removed, a younger one is named and kept', async () => {
    const data = tempDir('leftover-noflock-data').dir;
    const db = path.join(data, 'app.db');
    await sqlite(db, `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('x');`);
    const backupDir = tempDir('leftover-noflock').dir;
    const old = path.join(backupDir, '.partial-2020-01-01T000000Z-123');
    const young = path.join(backupDir, '.partial-2030-01-01T000000Z-456');
    for (const d of [old, young]) fs.mkdirSync(d);
    touchDaysAgo(old, 3);
    // PATH without flock: every command of /usr/bin and /bin but flock.
    const bin = tempDir('no-flock').dir;
    for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
      if (!fs.existsSync(dir)) continue;
      for (const e of fs.readdirSync(dir)) if (e !== 'flock' && !fs.existsSync(path.join(bin, e))) fs.symlinkSync(path.join(dir, e), path.join(bin, e));
    }
    const r = await runScript('sqlite-backup', { BACKUP_DIR: backupDir, RETENTION_DAYS: '0', SQLITE_DB: db, PATH: bin });
    assert.equal(r.code, 0, describeRun(r));
    assert.ok(!fs.existsSync(old), 'more than two days old: removed');
    assert.ok(r.stdout.includes(`removing ${old}, left by an earlier backup run (more than two days old) that did not finish`), r.stdout);
    assert.ok(fs.existsSync(young), 'younger: kept');
    assert.ok(r.stdout.includes(`${young} may belong to a backup that is running now`), r.stdout);
  });
});

describeNeeding('leftovers of killed mirror runs (real git)', { skip: skipUnless(GIT_NEEDS) }, () => {
  test('git-mirror: the partial clone of a run killed mid-clone is named and removed by the next run, which clones', async () => {
    const root = tempDir('leftover-mirror').dir;
    const gitEnv = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', HOME: '/nonexistent' };
    const work = path.join(root, 'work');
    fs.mkdirSync(work);
    await run('git', ['init', '-q', '-b', 'main'], { cwd: work, env: gitEnv });
    fs.writeFileSync(path.join(work, 'a'), 'a');
    await run('git', ['add', '.'], { cwd: work, env: gitEnv });
    await run('git', ['commit', '-q', '-m', 'one'], { cwd: work, env: gitEnv });
    const upstream = path.join(root, 'upstream.git');
    await run('git', ['clone', '-q', '--bare', work, upstream], { env: gitEnv });
    const backupDir = path.join(root, 'backups');
    fs.mkdirSync(backupDir);
    const env = { BACKUP_DIR: backupDir, REPOSITORIES: `file://${upstream}`, RETENTION_DAYS: '0' };
    await killedAt('git-mirror', env, gatedCommand('git', '*clone\\ --mirror*', 'after'));
    const parent = path.dirname(path.join(backupDir, upstream.replace(/^\//, '')));
    const left = entries(parent, '.partial-upstream.git-');
    assert.equal(left.length, 1, fs.readdirSync(parent).join(' '));
    const r = await runScript('git-mirror', env);
    assert.equal(r.code, 0, describeRun(r));
    assert.ok(r.stdout.includes(`removing ${path.join(parent, left[0])}, left by an earlier mirror run that did not finish`), r.stdout);
    assert.deepEqual(entries(parent, '.partial-'), []);
    assert.ok(fs.existsSync(path.join(parent, 'upstream.git', 'HEAD')));
  });
});
