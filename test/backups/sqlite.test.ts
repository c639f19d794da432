// sqlite-backup.sh / sqlite-restore.sh with the real sqlite3 CLI (uptime monitor, chat UI with uploads, booking app).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { before, test } from 'node:test';
import {
  SQLITE_NEEDS, assertBinaries, backupEntries, describeRun, run, runScript, skipUnless, describeNeeding, sleep, tempDir, agedBackups, treeHashes,
} from './servers';

const SCHEMA = `
PRAGMA journal_mode = WAL;
PRAGMA foreign_keys = ON;
CREATE TABLE monitors (id INTEGER PRIMARY KEY, name TEXT NOT NULL, url TEXT NOT NULL, child_count INTEGER NOT NULL DEFAULT 0);
CREATE TABLE heartbeats (id INTEGER PRIMARY KEY, monitor_id INTEGER NOT NULL REFERENCES monitors(id), status INTEGER, msg TEXT, at TEXT);
CREATE INDEX heartbeats_monitor ON heartbeats(monitor_id);
CREATE TABLE settings (key TEXT PRIMARY KEY, value BLOB);
WITH RECURSIVE g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < 500)
  INSERT INTO monitors (id, name, url, child_count) SELECT n, 'monitor ' || n || ' ''quoted''', 'https://svc' || n || '.example.test/health', 20 FROM g;
WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < 9999)
  INSERT INTO heartbeats (monitor_id, status, msg, at) SELECT 1 + n / 20, n % 2, 'ok ' || hex(randomblob(8)), datetime(1700000000 + n * 60, 'unixepoch') FROM g;
INSERT INTO settings VALUES ('theme', 'dark'), ('blob', x'00ff10'), ('unicode', 'ünïcödé ✓');
`;

const sqlite = (db: string, sql: string): Promise<string> => run('sqlite3', ['-bail', '-batch', db, sql]).then((s) => s.trimEnd());

async function dumpRows(db: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of ['monitors', 'heartbeats', 'settings']) out[t] = await sqlite(db, `SELECT * FROM ${t} ORDER BY 1`);
  out.schema = await sqlite(db, `SELECT sql FROM sqlite_master ORDER BY name`);
  return out;
}

describeNeeding('sqlite backup scripts (real sqlite3)', { skip: skipUnless(SQLITE_NEEDS) }, () => {
  before(() => assertBinaries(SQLITE_NEEDS));

  for (const svc of [
    { name: 'uptime monitor', file: 'kuma.db', uploads: false },
    { name: 'chat UI', file: 'webui.db', uploads: true },
    { name: 'booking application', file: 'booking.db', uploads: false },
  ]) {
    test(`round trip (${svc.name}): snapshot, delete the file${svc.uploads ? ' and uploads' : ''}, copy back: every row back`, async () => {
      const data = tempDir('sqlite-data').dir;
      const backupDir = tempDir('sqlite-backups').dir;
      const db = path.join(data, svc.file);
      await sqlite(db, SCHEMA);
      const uploads = path.join(data, 'uploads');
      const files: Record<string, Buffer> = {};
      if (svc.uploads) {
        fs.mkdirSync(path.join(uploads, 'nested'), { recursive: true });
        for (let i = 0; i < 20; i++) {
          const rel = i % 2 ? `nested/file-${i}.bin` : `file ${i}.txt`;
          files[rel] = Buffer.from(Array.from({ length: 1000 + i }, (_, j) => (i * j) % 256));
          fs.writeFileSync(path.join(uploads, rel), files[rel]);
        }
      }
      const rows = await dumpRows(db);
      const env = { BACKUP_DIR: backupDir, RETENTION_DAYS: '7', SQLITE_DB: db, UPLOADS_DIR: svc.uploads ? uploads : undefined };
      const r = await runScript('sqlite-backup', env);
      assert.equal(r.code, 0, describeRun(r));
      assert.match(r.stdout, /VACUUM INTO/);
      assert.match(r.stdout, /copy ok: 3 tables/);
      const [folder] = backupEntries(backupDir);
      assert.ok(fs.existsSync(path.join(backupDir, folder, svc.file)));

      fs.rmSync(db);
      for (const s of ['-wal', '-shm']) fs.rmSync(db + s, { force: true });
      if (svc.uploads) fs.rmSync(uploads, { recursive: true });
      const rr = await runScript('sqlite-restore', { BACKUP_DIR: backupDir, SQLITE_DB: db, UPLOADS_DIR: svc.uploads ? uploads : undefined });
      assert.equal(rr.code, 0, describeRun(rr));
      assert.deepEqual(await dumpRows(db), rows);
      assert.equal(await sqlite(db, 'PRAGMA integrity_check'), 'ok');
      for (const [rel, bytes] of Object.entries(files)) assert.deepEqual(fs.readFileSync(path.join(uploads, rel)), bytes, rel);
    });
  }

  test('consistency: snapshot while a WAL-mode writer process commits parent+child transactions', async () => {
    const data = tempDir('sqlite-live').dir;
    const backupDir = tempDir('sqlite-live-backups').dir;
    const db = path.join(data, 'live.db');
    await sqlite(db, SCHEMA);
    // writer: one sqlite3 process fed transactions on stdin (WAL mode, busy timeout)
    const writer = spawn('sqlite3', ['-batch', db], { stdio: ['pipe', 'ignore', 'pipe'] });
    let werr = '';
    writer.stderr.on('data', (d) => (werr += d));
    writer.stdin.write('.timeout 10000\nPRAGMA journal_mode = WAL;\nPRAGMA foreign_keys = ON;\n');
    let stop = false;
    let n = 0;
    const feed = (async () => {
      while (!stop) {
        let chunk = '';
        for (let i = 0; i < 100; i++, n++) {
          chunk +=
            `BEGIN IMMEDIATE; INSERT INTO monitors (name, url, child_count) VALUES ('w${n}', 'https://w${n}', 0);` +
            ` INSERT INTO heartbeats (monitor_id, status, msg) SELECT m, 1, 'w' FROM (SELECT last_insert_rowid() AS m), (SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3);` +
            ` UPDATE monitors SET child_count = 3 WHERE id = (SELECT max(id) FROM monitors); COMMIT;\n`;
        }
        if (!writer.stdin.write(chunk)) await new Promise((r) => writer.stdin.once('drain', r));
        await sleep(5);
      }
    })();
    const written = async (): Promise<number> => Number(await sqlite(db, `SELECT count(*) FROM monitors WHERE name LIKE 'w%'`));
    try {
      for (let i = 0; i < 400 && (await written()) < 300; i++) await sleep(10);
      const atStart = await written();
      assert.ok(atStart >= 300, 'writer is running');
      const r = await runScript('sqlite-backup', { BACKUP_DIR: backupDir, RETENTION_DAYS: '7', SQLITE_DB: db });
      assert.equal(r.code, 0, describeRun(r));
      const atEnd = await written();
      assert.ok(atEnd > atStart, `writer kept writing during the backup (${atStart} -> ${atEnd})`);
      stop = true;
      await feed;
      assert.equal(werr, '', 'writer had no errors');
      // the pod is killed (no clean close): its WAL and shared-memory files stay behind
      writer.kill('SIGKILL');
      await new Promise((res) => writer.once('exit', res));
      assert.ok(fs.existsSync(db + '-wal'), 'crashed writer left a WAL file');

      const rr = await runScript('sqlite-restore', { BACKUP_DIR: backupDir, SQLITE_DB: db });
      assert.equal(rr.code, 0, describeRun(rr));
      // The crashed writer's WAL is not lost: the "is the database still open" check opens the file, which
      // replays the WAL into it (as the application would on its next start), or it is kept beside it.
      const kept = fs.readdirSync(data).find((f) => /^live\.db\.before-restore-\d{4}-\d{2}-\d{2}T\d{6}Z(-\d+)?$/.test(f));
      assert.ok(kept, `the previous live.db is kept: ${rr.stdout}`);
      assert.ok(Number(await sqlite(path.join(data, kept), `SELECT count(*) FROM monitors WHERE name LIKE 'w%'`)) >= atEnd, 'the kept copy holds every committed row');
      assert.ok(!fs.existsSync(db + '-wal') || fs.statSync(db + '-wal').size === 0, 'no stale WAL next to the restored file');
      const restored = await written();
      assert.ok(restored >= atStart && restored <= atEnd, `restored ${restored}, expected between ${atStart} and ${atEnd}`);
      assert.equal(await sqlite(db, 'PRAGMA integrity_check'), 'ok');
      assert.equal(await sqlite(db, 'PRAGMA foreign_key_check'), '', 'foreign keys hold');
      const torn = await sqlite(db, `SELECT count(*) FROM monitors m WHERE child_count <> (SELECT count(*) FROM heartbeats h WHERE h.monitor_id = m.id)`);
      assert.equal(torn, '0', 'no torn parent/child rows');
    } finally {
      stop = true;
      await feed.catch(() => undefined);
      if (writer.exitCode === null) writer.kill('SIGKILL');
    }
  });

  test('retention, and failures (missing file, corrupt file) leave earlier backups untouched and delete nothing', async () => {
    const data = tempDir('sqlite-ret').dir;
    const backupDir = tempDir('sqlite-ret-backups').dir;
    const db = path.join(data, 'app.db');
    await sqlite(db, SCHEMA);
    const env = { BACKUP_DIR: backupDir, RETENTION_DAYS: '7', SQLITE_DB: db };
    const first = await runScript('sqlite-backup', env);
    assert.equal(first.code, 0, describeRun(first));
    const { old, young } = agedBackups(backupDir, 'app.db');
    const hashes = treeHashes(backupDir);

    const missing = await runScript('sqlite-backup', { ...env, SQLITE_DB: path.join(data, 'nope.db') });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /ERROR: database file .*nope\.db not found/);
    assert.ok(!fs.existsSync(path.join(data, 'nope.db')), 'the script must not create an empty database');

    const corrupt = path.join(data, 'corrupt.db');
    fs.writeFileSync(corrupt, Buffer.alloc(8192, 0x41));
    const bad = await runScript('sqlite-backup', { ...env, SQLITE_DB: corrupt });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /is not a valid SQLite database or is corrupt/);

    assert.deepEqual(treeHashes(backupDir), hashes, 'nothing deleted or changed by failed runs');
    assert.deepEqual(fs.readdirSync(backupDir).filter((x) => x.startsWith('.partial')), []);

    const ok = await runScript('sqlite-backup', env);
    assert.equal(ok.code, 0, describeRun(ok));
    assert.ok(!fs.existsSync(old), '8 days old: deleted');
    assert.ok(fs.existsSync(young), '6 days old: kept');
    assert.equal(backupEntries(backupDir).filter((e) => !e.startsWith('2020')).length, 2);
  });
});
