// objectstore-backup.sh / objectstore-restore.sh with a STUB `mc` first on PATH (fast, in npm test).
// The real MinIO server and mc, built from the Go module proxy, run the same scripts with the
// rendered environment and only the mc image's tools in `npm run test:products`
// (test/products/objectstore.products.ts). The stub records every invocation (arguments + whether a
// secret appeared in them), reads the credentials from the mc config directory the script wrote, and
// emulates `ls`, `mb` and `mirror` against a local folder that plays the object store (one
// sub-folder per bucket). Proven here: the exact mc arguments, the dated folder layout, credentials
// never on argv/logs, all-or-nothing behaviour when one bucket fails mid-mirror (which the real
// server is not made to do), retention, checksums and the reverse mirror.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { FIXED_STAMP, agedBackups, assertTwoFoldersOneStamp, backupEntries, describeRun, fixedStampDate, runScript, tempDir, treeHashes } from './servers';

const ACCESS = 'backup-access-key';
const SECRET = 'S3cr3t/with+special"chars\\';

const STUB = `#!${process.execPath}
// stub mc: see objectstore.test.ts
const fs = require('node:fs');
const path = require('node:path');
const args = process.argv.slice(2);
const env = process.env;
const record = { args, secretInArgs: args.some((a) => a.includes(env.MC_STUB_SECRET)) };
fs.appendFileSync(env.MC_STUB_LOG, JSON.stringify(record) + '\\n');
let i = 0;
let configDir = path.join(env.HOME || '/root', '.mc');
while (i < args.length && args[i].startsWith('--')) {
  if (args[i] === '--config-dir') { configDir = args[i + 1]; i += 2; } else i++;
}
const cmd = args[i++];
const rest = args.slice(i).filter((a) => !a.startsWith('--'));
const flags = args.slice(i).filter((a) => a.startsWith('--'));
const cfg = JSON.parse(fs.readFileSync(path.join(configDir, 'config.json'), 'utf8'));
const die = (msg) => { process.stderr.write('mc: <ERROR> ' + msg + '\\n'); process.exit(1); };
if (env.MC_STUB_DOWN) die('Unable to list folder. Get "' + cfg.aliases.objstore.url + '/": dial tcp 127.0.0.1:9: connect: connection refused.');
const a = cfg.aliases.objstore;
if (a.accessKey !== env.MC_STUB_ACCESS || a.secretKey !== env.MC_STUB_SECRET)
  die('Unable to list folder. The request signature we calculated does not match the signature you provided. Check your key and signing method.');
const root = env.MC_STUB_ROOT;
const toLocal = (p) => (p.startsWith('objstore/') ? path.join(root, p.slice('objstore/'.length)) : p);
if (cmd === 'ls') {
  for (const b of fs.readdirSync(root).sort()) console.log('[2024-01-01 00:00:00 UTC]     0B ' + b + '/');
} else if (cmd === 'mb') {
  fs.mkdirSync(toLocal(rest[0]), { recursive: true });
  console.log('Bucket created successfully \`' + rest[0] + '\`.');
} else if (cmd === 'mirror') {
  const [src, dst] = rest.map(toLocal);
  if (!fs.existsSync(src)) die('Unable to mirror. Bucket does not exist');
  const bucket = path.basename(rest[0].startsWith('objstore/') ? rest[0] : rest[1]);
  if (flags.includes('--remove')) fs.rmSync(dst, { recursive: true, force: true });
  fs.mkdirSync(dst, { recursive: true });
  fs.cpSync(src, dst, { recursive: true });
  if (env.MC_STUB_FAIL_BUCKET === bucket) die('Failed to copy \`' + bucket + '/x\`. Network connection lost');
} else die('stub: unsupported command ' + cmd);
`;

interface Call {
  args: string[];
  secretInArgs: boolean;
}

function setup() {
  const bin = tempDir('mc-stub').dir;
  fs.writeFileSync(path.join(bin, 'mc'), STUB, { mode: 0o755 });
  const store = tempDir('fake-store').dir;
  const backupDir = tempDir('objstore-backups').dir;
  const log = path.join(tempDir('mc-log').dir, 'calls.jsonl');
  const objects: Record<string, Buffer> = {};
  for (const [bucket, n] of [['uploads', 5], ['documents', 3], ['avatars', 2]] as const) {
    for (let i = 0; i < n; i++) {
      const rel = path.join(bucket, i % 2 ? `dir/obj-${i}.bin` : `obj-${i}.txt`);
      objects[rel] = Buffer.from(`${bucket} object ${i} `.repeat(10 + i));
      fs.mkdirSync(path.dirname(path.join(store, rel)), { recursive: true });
      fs.writeFileSync(path.join(store, rel), objects[rel]);
    }
  }
  const env = {
    BACKUP_DIR: backupDir,
    RETENTION_DAYS: '7',
    OBJECTSTORE_URL: 'http://minio.storage.svc:9000',
    OBJECTSTORE_ACCESS_KEY: ACCESS,
    OBJECTSTORE_SECRET_KEY: SECRET,
    MC_STUB_LOG: log,
    MC_STUB_ROOT: store,
    MC_STUB_ACCESS: ACCESS,
    MC_STUB_SECRET: SECRET,
  };
  const calls = (): Call[] => (fs.existsSync(log) ? fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l)) : []);
  const runIt = (name: string, extra: Record<string, string | undefined> = {}, pathPrepend: string[] = []) => runScript(name, { ...env, ...extra }, { pathPrepend: [...pathPrepend, bin] });
  return { store, backupDir, env, calls, objects, runIt };
}

describe('object store backup scripts (stub mc on PATH; the real mc and MinIO run them in test:products)', () => {
  test('backup mirrors every bucket into a dated folder with the expected mc arguments; secrets never on argv or in logs', async () => {
    const s = setup();
    const r = await s.runIt('objectstore-backup');
    assert.equal(r.code, 0, describeRun(r));
    const [folder] = backupEntries(s.backupDir);
    assert.match(folder, /^\d{4}-\d{2}-\d{2}T\d{6}Z$/);
    for (const [rel, bytes] of Object.entries(s.objects)) assert.deepEqual(fs.readFileSync(path.join(s.backupDir, folder, rel)), bytes, rel);

    const calls = s.calls();
    assert.deepEqual(calls.map((c) => c.args.slice(4)), [
      ['ls', 'objstore'],
      ['mirror', '--preserve', 'objstore/avatars', calls[1].args.at(-1)],
      ['mirror', '--preserve', 'objstore/documents', calls[2].args.at(-1)],
      ['mirror', '--preserve', 'objstore/uploads', calls[3].args.at(-1)],
    ]);
    for (const c of calls) {
      assert.deepEqual(c.args.slice(0, 1), ['--config-dir']);
      assert.deepEqual(c.args.slice(2, 4), ['--no-color', '--quiet']);
      assert.equal(c.secretInArgs, false, 'secret on the mc command line');
    }
    assert.match(calls[1].args.at(-1)!, new RegExp(`^${s.backupDir}/\\.partial-.*/avatars$`), 'mirrors into the partial folder, renamed at the end');
    assert.ok(!fs.existsSync(calls[0].args[1]), 'temporary mc config directory removed');
    for (const out of [r.stdout, r.stderr]) {
      assert.ok(!out.includes(SECRET) && !out.includes('S3cr3t'), 'secret printed');
    }
    assert.match(r.stdout, /mirroring bucket uploads -> .*\/uploads/);

    // OBJECTSTORE_BUCKETS limits the run; an unknown bucket is a clear error
    const only = await s.runIt('objectstore-backup', { OBJECTSTORE_BUCKETS: 'uploads,documents' });
    assert.equal(only.code, 0, describeRun(only));
    const latest = backupEntries(s.backupDir).at(-1)!;
    assert.deepEqual(fs.readdirSync(path.join(s.backupDir, latest)).sort(), ['SHA256SUMS', 'documents', 'uploads']);
    const unknown = await s.runIt('objectstore-backup', { OBJECTSTORE_BUCKETS: 'nope' });
    assert.notEqual(unknown.code, 0);
    assert.match(unknown.stderr, /bucket 'nope' \(from OBJECTSTORE_BUCKETS\) does not exist/);
  });

  test('restore: reverse mirror of each bucket (created if missing)', async () => {
    const s = setup();
    const r = await s.runIt('objectstore-backup');
    assert.equal(r.code, 0, describeRun(r));
    fs.rmSync(s.store, { recursive: true });
    fs.mkdirSync(s.store);
    const before = s.calls().length;
    const rr = await s.runIt('objectstore-restore');
    assert.equal(rr.code, 0, describeRun(rr));
    for (const [rel, bytes] of Object.entries(s.objects)) assert.deepEqual(fs.readFileSync(path.join(s.store, rel)), bytes, rel);
    const [folder] = backupEntries(s.backupDir);
    const calls = s.calls().slice(before).map((c) => c.args.slice(4));
    assert.deepEqual(calls, [
      ['ls', 'objstore'],
      ['mb', '--ignore-existing', 'objstore/avatars'],
      ['mirror', '--overwrite', path.join(s.backupDir, folder, 'avatars'), 'objstore/avatars'],
      ['mb', '--ignore-existing', 'objstore/documents'],
      ['mirror', '--overwrite', path.join(s.backupDir, folder, 'documents'), 'objstore/documents'],
      ['mb', '--ignore-existing', 'objstore/uploads'],
      ['mirror', '--overwrite', path.join(s.backupDir, folder, 'uploads'), 'objstore/uploads'],
    ]);
    const one = await s.runIt('objectstore-restore', { RESTORE_BUCKETS: 'uploads', RESTORE_REMOVE_EXTRA: 'true' });
    assert.equal(one.code, 0, describeRun(one));
    assert.deepEqual(s.calls().at(-1)!.args.slice(4), ['mirror', '--overwrite', '--remove', path.join(s.backupDir, folder, 'uploads'), 'objstore/uploads']);
  });

  test('retention only after success; failures (bad keys, unreachable, one bucket failing) delete and change nothing', async () => {
    const s = setup();
    const { old, young } = agedBackups(s.backupDir, 'uploads/x');
    const hashes = treeHashes(s.backupDir);

    const badKey = await s.runIt('objectstore-backup', { OBJECTSTORE_SECRET_KEY: 'wrong-secret' });
    assert.notEqual(badKey.code, 0);
    assert.match(badKey.stderr, /ERROR: listing buckets: authentication failed at http:\/\/minio\.storage\.svc:9000/);
    assert.ok(!badKey.stderr.includes('wrong-secret'));

    const down = await s.runIt('objectstore-backup', { MC_STUB_DOWN: '1' });
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /object store unreachable at http:\/\/minio\.storage\.svc:9000/);

    const partial = await s.runIt('objectstore-backup', { MC_STUB_FAIL_BUCKET: 'documents' });
    assert.notEqual(partial.code, 0);
    assert.match(partial.stderr, /mirror of bucket 'documents' failed/);

    assert.deepEqual(treeHashes(s.backupDir), hashes, 'nothing deleted or changed');
    assert.ok(fs.existsSync(old));
    assert.deepEqual(fs.readdirSync(s.backupDir).filter((n) => n.startsWith('.partial')), [], 'partial folder removed');

    const ok = await s.runIt('objectstore-backup');
    assert.equal(ok.code, 0, describeRun(ok));
    assert.match(ok.stdout, /retention: deleting .*2020-01-01T040000Z/);
    assert.ok(!fs.existsSync(old), '8 days old: deleted');
    assert.ok(fs.existsSync(young), '6 days old: kept');
  });

  test('two backups started in the same second both land, in two folders, neither inside the other', async () => {
    const s = setup();
    const date = fixedStampDate();
    const [a, b] = await Promise.all([0, 1].map(() => s.runIt('objectstore-backup', { RETENTION_DAYS: '0' }, [date])));
    assert.equal(a.code, 0, describeRun(a));
    assert.equal(b.code, 0, describeRun(b));
    assertTwoFoldersOneStamp(s.backupDir);
    assert.match(a.stdout + b.stdout, new RegExp(`backup complete: .*${FIXED_STAMP}-2 `));
    for (const folder of [FIXED_STAMP, `${FIXED_STAMP}-2`]) for (const [rel, bytes] of Object.entries(s.objects)) assert.deepEqual(fs.readFileSync(path.join(s.backupDir, folder, rel)), bytes, `${folder}/${rel}`);
  });
});

describe('object store backups carry checksums (stub mc)', () => {
  test('the backup writes SHA256SUMS of every object; a corrupted or unchecked backup is refused before any bucket is touched', async () => {
    const s = setup();
    const r = await s.runIt('objectstore-backup');
    assert.equal(r.code, 0, describeRun(r));
    const [folder] = backupEntries(s.backupDir);
    const sums = fs.readFileSync(path.join(s.backupDir, folder, 'SHA256SUMS'), 'utf8').trim().split('\n').map((l) => l.split('  ')[1]).sort();
    assert.deepEqual(sums, Object.keys(s.objects).map((rel) => `./${rel}`).sort());

    // the live store moves on; then one byte of the backup rots
    fs.writeFileSync(path.join(s.store, 'uploads', 'obj-0.txt'), 'newer live data');
    const live = treeHashes(s.store);
    const rotten = path.join(s.backupDir, folder, 'documents', 'obj-2.txt');
    fs.writeFileSync(rotten, Buffer.concat([fs.readFileSync(rotten).subarray(1), Buffer.from('x')]));
    const before = s.calls().length;
    const bad = await s.runIt('objectstore-restore', { RESTORE_FROM: folder });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /checksum verification of .* failed: .*documents\/obj-2\.txt: FAILED.*; nothing was changed/);
    assert.equal(s.calls().length, before, 'mc was called');
    assert.deepEqual(treeHashes(s.store), live, 'the live store changed');

    // a folder without SHA256SUMS (written before checksums) only with RESTORE_ALLOW_UNVERIFIED=true
    fs.rmSync(rotten);
    fs.rmSync(path.join(s.backupDir, folder, 'SHA256SUMS'));
    const unverified = await s.runIt('objectstore-restore', { RESTORE_FROM: folder });
    assert.notEqual(unverified.code, 0);
    assert.match(unverified.stderr, /has no SHA256SUMS, so the backup cannot be verified; nothing was changed \(set RESTORE_ALLOW_UNVERIFIED=true/);
    assert.deepEqual(treeHashes(s.store), live);
    const allowed = await s.runIt('objectstore-restore', { RESTORE_FROM: folder, RESTORE_ALLOW_UNVERIFIED: 'true' });
    assert.equal(allowed.code, 0, describeRun(allowed));
    assert.match(allowed.stdout, /WARNING: .* has no SHA256SUMS; restoring without checksum verification/);
  });
});
