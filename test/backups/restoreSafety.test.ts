// File-store restores (SQLite, Redis) that cannot race or overwrite what they keep (issue 30), with the
// real sqlite3: two restores at once (one refuses, naming the holder), two in the same second (kept
// copies never overwritten, a folder never moved into another), and an application that still has its
// SQLite database open.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import {
  FIXED_STAMP, GIT_NEEDS, SQLITE_NEEDS, describeNeeding, describeRun, fixedStampDate, run, runScript, skipUnless, sleep, startScript, tempDir, waitForFile as waitFor,
} from './servers';

const sqlite = (db: string, sql: string): Promise<string> => run('sqlite3', ['-bail', '-batch', db, sql]).then((s) => s.trimEnd());

/** A backup folder as sqlite-backup.sh writes it, holding `name` with one row `value`. */
async function sqliteBackup(name: string, value: string): Promise<string> {
  const backupDir = tempDir('safety-backups').dir;
  const folder = path.join(backupDir, '2030-01-01T000000Z');
  fs.mkdirSync(folder);
  await sqlite(path.join(folder, name), `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('${value}');`);
  await run('sh', ['-c', `cd "${folder}" && sha256sum ./${name} > SHA256SUMS`]);
  return backupDir;
}

/** A PATH folder whose `cp` waits until $gate is removed (so that a restore stays in the middle of its copy). */
function gatedCp(): { bin: string; gate: string; reached: string } {
  const bin = tempDir('gated-cp').dir;
  const gate = path.join(bin, 'gate');
  const reached = path.join(bin, 'reached');
  fs.writeFileSync(gate, '');
  fs.writeFileSync(path.join(bin, 'cp'), `#!/bin/sh\n: > ${reached}\nwhile [ -e ${gate} ]; do sleep 0.1; done\nexec /bin/cp "$@"\n`, { mode: 0o755 });
  return { bin, gate, reached };
}

describeNeeding('restores of file stores: one at a time, kept copies never overwritten (real sqlite3)', { skip: skipUnless(SQLITE_NEEDS) }, () => {
  test('SQLite: two restores in the same second keep both earlier files, under two names', async () => {
    const backupDir = await sqliteBackup('app.db', 'from the backup');
    const data = tempDir('safety-data').dir;
    const db = path.join(data, 'app.db');
    await sqlite(db, `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('live');`);
    const bin = fixedStampDate();
    const env = { BACKUP_DIR: backupDir, SQLITE_DB: db };
    const a = await runScript('sqlite-restore', env, { pathPrepend: [bin] });
    assert.equal(a.code, 0, describeRun(a));
    await sqlite(db, `INSERT INTO t VALUES ('written after the first restore')`);
    const b = await runScript('sqlite-restore', env, { pathPrepend: [bin] });
    assert.equal(b.code, 0, describeRun(b));
    const kept = fs.readdirSync(data).filter((f) => f.startsWith('app.db.before-restore-')).sort();
    assert.deepEqual(kept, [`app.db.before-restore-${FIXED_STAMP}`, `app.db.before-restore-${FIXED_STAMP}-2`]);
    assert.equal(await sqlite(path.join(data, kept[0]), 'SELECT v FROM t'), 'live', 'the first kept copy is not overwritten');
    assert.match(b.stdout, new RegExp(`kept the previous app\\.db as app\\.db\\.before-restore-${FIXED_STAMP}-2`));
  });

  test('SQLite: uploads folders kept in the same second are not moved into each other', async () => {
    const backupDir = await sqliteBackup('webui.db', 'b');
    const folder = path.join(backupDir, '2030-01-01T000000Z');
    fs.mkdirSync(path.join(folder, 'uploads'));
    fs.writeFileSync(path.join(folder, 'uploads', 'f.txt'), 'backup');
    await run('sh', ['-c', `cd "${folder}" && sha256sum ./webui.db ./uploads/f.txt > SHA256SUMS`]);
    const data = tempDir('safety-uploads').dir;
    const db = path.join(data, 'webui.db');
    const uploads = path.join(data, 'uploads');
    fs.mkdirSync(uploads);
    fs.writeFileSync(path.join(uploads, 'f.txt'), 'live');
    const bin = fixedStampDate();
    const env = { BACKUP_DIR: backupDir, SQLITE_DB: db, UPLOADS_DIR: uploads };
    for (const _ of [1, 2]) {
      const r = await runScript('sqlite-restore', env, { pathPrepend: [bin] });
      assert.equal(r.code, 0, describeRun(r));
    }
    const kept = fs.readdirSync(data).filter((f) => f.startsWith('uploads.before-restore-')).sort();
    assert.deepEqual(kept, [`uploads.before-restore-${FIXED_STAMP}`, `uploads.before-restore-${FIXED_STAMP}-2`]);
    assert.deepEqual(fs.readdirSync(path.join(data, kept[0])), ['f.txt'], 'nothing moved inside the first kept folder');
    assert.equal(fs.readFileSync(path.join(data, kept[0], 'f.txt'), 'utf8'), 'live');
  });

  test('SQLite: two restores at once: the second refuses, naming the first; the first finishes', async () => {
    const backupDir = await sqliteBackup('app.db', 'from the backup');
    const data = tempDir('safety-race').dir;
    const db = path.join(data, 'app.db');
    await sqlite(db, `CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('live');`);
    const { bin, gate, reached } = gatedCp();
    const env = { BACKUP_DIR: backupDir, SQLITE_DB: db };
    const first = startScript('sqlite-restore', env, [bin]);
    await waitFor(reached);
    const second = await runScript('sqlite-restore', env);
    fs.rmSync(gate);
    const a = await first.done;
    assert.equal(a.code, 0, describeRun(a));
    assert.equal(second.code, 1, describeRun(second));
    assert.match(second.stderr, /another backup or restore of the SQLite databases in .* is running \(lock .*\/\.restore-lock held by: sqlite-restore pid \d+ on .*\); nothing was changed/);
    assert.equal(await sqlite(db, 'SELECT v FROM t'), 'from the backup');
    assert.equal(fs.readdirSync(data).filter((f) => f.startsWith('app.db.before-restore-')).length, 1);
  });

  test('SQLite: a database the application still has open (WAL mode) is refused before anything changes', async () => {
    const backupDir = await sqliteBackup('app.db', 'from the backup');
    const data = tempDir('safety-open').dir;
    const db = path.join(data, 'app.db');
    await sqlite(db, `PRAGMA journal_mode = WAL; CREATE TABLE t (v TEXT); INSERT INTO t VALUES ('live');`);
    // The "application": a sqlite3 process that opened the database and waits, idle.
    const app = spawn('sqlite3', [db], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    app.stdout.on('data', (d) => (out += d));
    app.stdin.write('SELECT v FROM t;\n');
    while (!out.includes('live')) await sleep(20);
    try {
      const r = await runScript('sqlite-restore', { BACKUP_DIR: backupDir, SQLITE_DB: db });
      assert.equal(r.code, 1, describeRun(r));
      assert.match(r.stderr, /is still open: another SQLite connection holds a lock on it \(is the application stopped\?/);
      assert.match(r.stderr, /nothing was changed/);
      assert.deepEqual(fs.readdirSync(data).filter((f) => f.includes('before-restore')), []);
    } finally {
      app.stdin.end();
      await new Promise((r) => app.on('close', r));
    }
    assert.equal(await sqlite(db, 'SELECT v FROM t'), 'live');
  });

  for (const mode of ['rdb', 'aof'] as const) {
    test(`Redis (${mode}): two restores in the same second keep both earlier copies, neither inside the other`, async () => {
      const backupDir = tempDir('safety-redis').dir;
      const folder = path.join(backupDir, '2030-01-01T000000Z');
      fs.mkdirSync(folder);
      fs.writeFileSync(path.join(folder, 'dump.rdb'), 'backup-rdb');
      await run('sh', ['-c', `cd "${folder}" && sha256sum ./dump.rdb > SHA256SUMS`]);
      const data = tempDir('safety-redis-data').dir;
      const live = mode === 'rdb' ? path.join(data, 'dump.rdb') : path.join(data, 'appendonlydir');
      if (mode === 'rdb') fs.writeFileSync(live, 'live');
      else {
        fs.mkdirSync(live);
        fs.writeFileSync(path.join(live, 'appendonly.aof.1.base.rdb'), 'live');
      }
      const bin = fixedStampDate();
      const env = { BACKUP_DIR: backupDir, REDIS_DATA_DIR: data, REDIS_PERSISTENCE_MODE: mode };
      for (const _ of [1, 2]) {
        const r = await runScript('redis-restore', env, { pathPrepend: [bin] });
        assert.equal(r.code, 0, describeRun(r));
      }
      const base = path.basename(live);
      const kept = fs.readdirSync(data).filter((f) => f.startsWith(`${base}.before-restore-`)).sort();
      assert.deepEqual(kept, [`${base}.before-restore-${FIXED_STAMP}`, `${base}.before-restore-${FIXED_STAMP}-2`]);
      const first = path.join(data, kept[0]);
      if (mode === 'rdb') assert.equal(fs.readFileSync(first, 'utf8'), 'live');
      else {
        assert.deepEqual(fs.readdirSync(first), ['appendonly.aof.1.base.rdb'], 'nothing moved inside the first kept folder');
        assert.equal(fs.readFileSync(path.join(first, 'appendonly.aof.1.base.rdb'), 'utf8'), 'live');
      }
    });
  }

  test('Redis: two restores at once into one data folder: the second refuses, naming the first', async () => {
    const backupDir = tempDir('safety-redis-race').dir;
    const folder = path.join(backupDir, '2030-01-01T000000Z');
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, 'dump.rdb'), 'backup-rdb');
    await run('sh', ['-c', `cd "${folder}" && sha256sum ./dump.rdb > SHA256SUMS`]);
    const data = tempDir('safety-redis-race-data').dir;
    fs.writeFileSync(path.join(data, 'dump.rdb'), 'live');
    const { bin, gate, reached } = gatedCp();
    const env = { BACKUP_DIR: backupDir, REDIS_DATA_DIR: data };
    const first = startScript('redis-restore', env, [bin]);
    await waitFor(reached);
    const second = await runScript('redis-restore', env);
    fs.rmSync(gate);
    const a = await first.done;
    assert.equal(a.code, 0, describeRun(a));
    assert.equal(second.code, 1, describeRun(second));
    assert.match(second.stderr, /another backup or restore of the Redis data in .* is running \(lock .* held by: redis-restore pid \d+ on .*\); nothing was changed/);
  });
});

describeNeeding('git mirror runs one at a time (real git)', { skip: skipUnless(GIT_NEEDS) }, () => {
  test('two mirror runs at once on a new backup volume: the second refuses, naming the first; the mirror is one clean bare repository', async () => {
    const root = tempDir('mirror-race').dir;
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
    // A git whose "clone" waits at the gate: the first run is in the middle of its first clone.
    const bin = tempDir('gated-git').dir;
    const gate = path.join(bin, 'gate');
    const reached = path.join(bin, 'reached');
    fs.writeFileSync(gate, '');
    const realGit = (await run('sh', ['-c', 'command -v git'])).trim();
    fs.writeFileSync(path.join(bin, 'git'), `#!/bin/sh\ncase " $* " in *" clone "*) : > ${reached}; while [ -e ${gate} ]; do sleep 0.1; done ;; esac\nexec ${realGit} "$@"\n`, { mode: 0o755 });
    const env = { BACKUP_DIR: backupDir, REPOSITORIES: `file://${upstream}`, RETENTION_DAYS: '0' };
    const first = startScript('git-mirror', env, [bin]);
    await waitFor(reached);
    const second = await runScript('git-mirror', env);
    fs.rmSync(gate);
    const a = await first.done;
    assert.equal(a.code, 0, describeRun(a));
    assert.equal(second.code, 1, describeRun(second));
    assert.match(second.stderr, /another backup or restore of the mirrors in .* is running \(lock .* held by: git-mirror pid \d+ on .*\); nothing was changed/);
    const mirror = path.join(backupDir, upstream.replace(/^\//, ''));
    assert.ok(!fs.readdirSync(mirror).some((e) => e.startsWith('.partial-')), 'no clone moved inside the mirror');
    assert.ok(!fs.readdirSync(path.dirname(mirror)).some((e) => e.startsWith('.partial-')), 'no partial clone left');
  });
});
