// search-snapshot.sh / search-restore.sh against a tiny fake search engine (node http on 127.0.0.1) that
// checks method, path, query, basic auth and body, and answers like the snapshot API (spec 4.5).
// A curl wrapper first on PATH records curl's argv to prove the password never is on a command line.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import { CURL_NEEDS, assertBinaries, describeRun, freePort, runScript, skipUnless, describeNeeding, tempDir, which } from './servers';

const PASSWORD = 'el4stic"pass\\word';

interface Seen {
  method: string;
  url: string;
  auth: string | undefined;
  body: string;
}

describeNeeding('search engine snapshot scripts (fake snapshot API)', { skip: skipUnless(CURL_NEEDS) }, () => {
  let server: http.Server;
  let base: string;
  const seen: Seen[] = [];
  let security = true;
  const snapshots = new Set<string>();
  const openIndices = new Set<string>(['logs-2024']);
  let argvLog: string;
  let wrapperDir: string;

  before(async () => {
    assertBinaries(CURL_NEEDS);
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (d) => (body += d));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, auth: req.headers.authorization, body });
        const send = (code: number, obj: unknown): void => {
          res.writeHead(code, { 'content-type': 'application/json' });
          res.end(JSON.stringify(obj));
        };
        const err = (code: number, type: string, reason: string): void =>
          send(code, { error: { root_cause: [{ type, reason }], type, reason }, status: code });
        if (security) {
          const expected = 'Basic ' + Buffer.from(`elastic:${PASSWORD}`).toString('base64');
          if (req.headers.authorization !== expected) {
            return err(401, 'security_exception', 'unable to authenticate user [elastic] for REST request');
          }
        } else if (req.headers.authorization) {
          return err(400, 'unexpected', 'authorization sent although security is disabled');
        }
        const u = new URL(req.url!, 'http://x');
        let m: RegExpMatchArray | null;
        if (req.method === 'PUT' && (m = u.pathname.match(/^\/_snapshot\/([^/]+)\/([^/]+)$/))) {
          if (u.searchParams.get('wait_for_completion') !== 'true') return err(400, 'test', 'wait_for_completion=true expected');
          if (m[1] !== 'backups') return err(404, 'repository_missing_exception', `[${m[1]}] missing`);
          if (m[2] === 'partial-one') return send(200, { snapshot: { snapshot: m[2], state: 'PARTIAL', shards: { total: 2, failed: 1, successful: 1 } } });
          snapshots.add(m[2]);
          return send(200, {
            snapshot: { snapshot: m[2], repository: 'backups', indices: ['logs-2024'], include_global_state: true, state: 'SUCCESS', shards: { total: 1, failed: 0, successful: 1 } },
          });
        }
        if (req.method === 'POST' && (m = u.pathname.match(/^\/_snapshot\/([^/]+)\/([^/]+)\/_restore$/))) {
          if (!snapshots.has(m[2])) return err(404, 'snapshot_missing_exception', `[backups:${m[2]}] is missing`);
          if (req.headers['content-type'] !== 'application/json') return err(406, 'test', 'json expected');
          const parsed = JSON.parse(body) as { indices: string };
          if (openIndices.has(parsed.indices)) {
            return err(500, 'snapshot_restore_exception', `[backups:${m[2]}] cannot restore index [${parsed.indices}] because an open index with same name already exists in the cluster`);
          }
          return send(200, { snapshot: { snapshot: m[2], indices: [parsed.indices], shards: { total: 1, failed: 0, successful: 1 } } });
        }
        return err(400, 'test', `unexpected ${req.method} ${req.url}`);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    wrapperDir = tempDir('curl-wrapper').dir;
    argvLog = path.join(wrapperDir, 'argv.log');
    fs.writeFileSync(path.join(wrapperDir, 'curl'), `#!/bin/sh\nprintf '%s\\n' "$*" >> '${argvLog}'\nexec '${which('curl')}' "$@"\n`, { mode: 0o755 });
  });
  after(() => new Promise<void>((r) => server.close(() => r())));

  const env = (extra: Record<string, string | undefined> = {}) => ({ SEARCH_URL: base, SNAPSHOT_REPOSITORY: 'backups', SEARCH_PASSWORD: PASSWORD, ...extra });
  const runIt = (name: string, extra: Record<string, string | undefined> = {}) => runScript(name, env(extra), { pathPrepend: [wrapperDir] });

  test('snapshot: PUT /_snapshot/<repo>/<name>?wait_for_completion=true with basic auth; password never on argv or in logs', async () => {
    seen.length = 0;
    const r = await runIt('search-snapshot', { SNAPSHOT_NAME: 'nightly-1' });
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /snapshot nightly-1: state SUCCESS \(shards: "total":1,"failed":0,"successful":1\)/);
    assert.deepEqual(seen.map((s) => [s.method, s.url, s.body]), [['PUT', '/_snapshot/backups/nightly-1?wait_for_completion=true', '']]);
    assert.ok(!r.stdout.includes('el4stic') && !r.stderr.includes('el4stic'));
    assert.ok(!fs.readFileSync(argvLog, 'utf8').includes('el4stic'), 'password on the curl command line');

    // default name, and an index pattern in the body
    seen.length = 0;
    const d = await runIt('search-snapshot', { SNAPSHOT_INDICES: 'logs-*' });
    assert.equal(d.code, 0, describeRun(d));
    assert.match(seen[0].url, /^\/_snapshot\/backups\/snapshot-\d{4}\.\d{2}\.\d{2}-\d{6}\?wait_for_completion=true$/);
    assert.deepEqual(JSON.parse(seen[0].body), { indices: 'logs-*' });
  });

  test('snapshot with security disabled: no Authorization header', async () => {
    security = false;
    try {
      const r = await runIt('search-snapshot', { SNAPSHOT_NAME: 'open-1', SEARCH_PASSWORD: '' });
      assert.equal(r.code, 0, describeRun(r));
      assert.match(r.stdout, /auth: none/);
    } finally {
      security = true;
    }
  });

  test('snapshot failures: wrong password, missing repository, PARTIAL, server down', async () => {
    const bad = await runIt('search-snapshot', { SNAPSHOT_NAME: 'x1', SEARCH_PASSWORD: 'wrong-pass' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /ERROR: snapshot backups\/x1: authentication failed at http:\/\/127\.0\.0\.1:\d+ as user 'elastic' \(HTTP 401/);
    assert.ok(!bad.stderr.includes('wrong-pass'));
    const repo = await runIt('search-snapshot', { SNAPSHOT_NAME: 'x2', SNAPSHOT_REPOSITORY: 'nope' });
    assert.notEqual(repo.code, 0);
    assert.match(repo.stderr, /HTTP 404 repository_missing_exception: \[nope\] missing/);
    const partial = await runIt('search-snapshot', { SNAPSHOT_NAME: 'partial-one' });
    assert.notEqual(partial.code, 0);
    assert.match(partial.stderr, /finished PARTIAL: some shards failed/);
    const port = await freePort();
    const down = await runScript('search-snapshot', env({ SEARCH_URL: `http://127.0.0.1:${port}`, SNAPSHOT_NAME: 'x3' }));
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /search engine unreachable at http:\/\/127\.0\.0\.1:\d+ \(curl exit 7/);
    const name = await runIt('search-snapshot', { SNAPSHOT_NAME: 'Bad Name' });
    assert.notEqual(name.code, 0);
    assert.match(name.stderr, /must be lower case/);
  });

  test('restore: POST /_snapshot/<repo>/<snapshot>/_restore with {"indices": ...}; open-index conflict explained', async () => {
    seen.length = 0;
    const r = await runIt('search-restore', { SNAPSHOT_NAME: 'nightly-1', RESTORE_INDICES: 'logs-2023' });
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(seen[0].method, 'POST');
    assert.equal(seen[0].url, '/_snapshot/backups/nightly-1/_restore?wait_for_completion=true');
    assert.deepEqual(JSON.parse(seen[0].body), { indices: 'logs-2023' });
    assert.match(r.stdout, /restore complete; indices: "logs-2023"/);

    const conflict = await runIt('search-restore', { SNAPSHOT_NAME: 'nightly-1', RESTORE_INDICES: 'logs-2024' });
    assert.notEqual(conflict.code, 0);
    assert.match(conflict.stderr, /open index with same name already exists .* delete or close that index first/);
    const missing = await runIt('search-restore', { SNAPSHOT_NAME: 'never-taken', RESTORE_INDICES: 'x' });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /HTTP 404 snapshot_missing_exception/);
    const bad = await runIt('search-restore', { SNAPSHOT_NAME: 'nightly-1', RESTORE_INDICES: 'logs-2023', SEARCH_PASSWORD: 'wrong' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /authentication failed/);
    const noIdx = await runIt('search-restore', { SNAPSHOT_NAME: 'nightly-1' });
    assert.notEqual(noIdx.code, 0);
    assert.match(noIdx.stderr, /required environment variable RESTORE_INDICES is not set/);
    assert.ok(!fs.readFileSync(argvLog, 'utf8').includes('el4stic'));
  });
});
