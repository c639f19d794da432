// Messages of the backup scripts that named the wrong cause (issue 22): a missing sha256sum reported
// as a full disk, and a typo in REDIS_HOST taken as "Redis is stopped".
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { REDIS_NEEDS, SQLITE_NEEDS, backupEntries, describeRun, runScript, skipUnless, describeNeeding, tempDir, which } from './servers';

/** A PATH holding every command of /usr/bin and /bin except the ones named. */
function pathWithout(...names: string[]): string {
  const bin = tempDir('path-without').dir;
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin']) {
    if (!fs.existsSync(dir)) continue;
    for (const e of fs.readdirSync(dir)) if (!names.includes(e) && !fs.existsSync(path.join(bin, e))) fs.symlinkSync(path.join(dir, e), path.join(bin, e));
  }
  return bin;
}

describeNeeding('backup script messages', { skip: skipUnless([...SQLITE_NEEDS, ...REDIS_NEEDS]) }, () => {
  test('a missing sha256sum is named as such, not as a full disk, and nothing half-made is kept', async () => {
    const dir = tempDir('no-sha').dir;
    const db = path.join(dir, 'app.db');
    const { execFileSync } = await import('node:child_process');
    execFileSync(which('sqlite3')!, [db, 'CREATE TABLE t (x); INSERT INTO t VALUES (1);']);
    const backups = path.join(dir, 'backups');
    fs.mkdirSync(backups);
    const r = await runScript('sqlite-backup', { BACKUP_DIR: backups, RETENTION_DAYS: '0', SQLITE_DB: db, PATH: pathWithout('sha256sum') });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /sha256sum is not installed in this image, so no SHA256SUMS can be written/);
    assert.doesNotMatch(r.stderr, /disk full/);
    assert.deepEqual(backupEntries(backups), []);
  });

  test('a REDIS_HOST that does not resolve (a typo) does not pass the "Redis is stopped" check', async () => {
    const dir = tempDir('redis-typo').dir;
    const backups = path.join(dir, 'backups');
    const folder = path.join(backups, '2026-01-01T000000Z');
    fs.mkdirSync(folder, { recursive: true });
    fs.writeFileSync(path.join(folder, 'dump.rdb'), 'REDIS0011 not a real dump');
    const { execFileSync } = await import('node:child_process');
    execFileSync('sh', ['-c', 'sha256sum ./dump.rdb > SHA256SUMS'], { cwd: folder });
    const data = path.join(dir, 'data');
    fs.mkdirSync(data);
    fs.writeFileSync(path.join(data, 'dump.rdb'), 'live data');
    const r = await runScript('redis-restore', { BACKUP_DIR: backups, REDIS_DATA_DIR: data, REDIS_HOST: 'redsi.invalid', REDIS_PORT: '6379' });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /cannot tell whether Redis at redsi\.invalid:6379 is stopped: .*\(is REDIS_HOST right\?\), and no server lock .*\.redis-server\.lock shows it; nothing was changed/);
    assert.equal(fs.readFileSync(path.join(data, 'dump.rdb'), 'utf8'), 'live data');
  });
});
