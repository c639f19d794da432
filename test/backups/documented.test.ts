// The backup scripts run by hand as docs/backups.md shows them (issue 30): `sh backups/scripts/<x>.sh`
// from the repository, the files themselves (not the joined text the CronJobs mount).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { CURL_NEEDS, REPO_ROOT, SCRIPTS_DIR, describeNeeding, skipUnless, tempDir } from './servers';

function sh(command: string, env: Record<string, string>, cwd = REPO_ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile('sh', ['-c', command], { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/tmp', ...env } }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }));
  });
}

const DOC = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'backups.md'), 'utf8');
/** The command lines of docs/backups.md that run a script of backups/scripts by hand. */
const documented = DOC.split('\n').map((l) => l.trim()).filter((l) => /\bsh backups\/scripts\/[a-z-]+\.sh\b/.test(l));

describeNeeding('backup scripts run by hand as documented', { skip: skipUnless(CURL_NEEDS) }, () => {
  test('docs/backups.md shows at least one command that runs a script by hand', () => {
    assert.ok(documented.length >= 1, 'the search restore is documented as `... sh backups/scripts/search-restore.sh`');
  });

  test('every documented `sh backups/scripts/...` command works as written (placeholders filled in), against a fake search API', async () => {
    const seen: string[] = [];
    const server = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ snapshot: { snapshot: 'snap-1', indices: ['logs-2024'], shards: { total: 1, failed: 0, successful: 1 } }, accepted: true }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      for (const line of documented) {
        const cmd = line
          .replace(/SEARCH_URL=…/, `SEARCH_URL=${url}`)
          .replace(/SEARCH_PASSWORD=…/, 'SEARCH_PASSWORD=pw')
          .replace(/<snapshot>/g, 'snap-1');
        assert.doesNotMatch(cmd, /[…<>]/, `a placeholder this test does not know: ${cmd}`);
        const r = await sh(cmd, {});
        assert.equal(r.code, 0, `${cmd}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`);
        assert.doesNotMatch(r.stderr, /not found/);
      }
      assert.ok(seen.some((s) => s.startsWith('POST /_snapshot/backups/snap-1/_restore')), seen.join('\n'));
    } finally {
      server.close();
    }
  });

  for (const file of fs.readdirSync(SCRIPTS_DIR).filter((f) => f.endsWith('.sh')).sort()) {
    test(`sh backups/scripts/${file} run by hand finds its shared helpers (from the repository root and from its own folder)`, async () => {
      const empty = tempDir('by-hand').dir;
      for (const [cmd, cwd] of [[`sh backups/scripts/${file}`, REPO_ROOT], [`sh ./${file}`, SCRIPTS_DIR], [`sh ${path.join(SCRIPTS_DIR, file)}`, empty]] as const) {
        const r = await sh(cmd, {}, cwd);
        assert.notEqual(r.code, 0, `${cmd}: without settings it must refuse`);
        assert.doesNotMatch(r.stderr, /not found|No such file/, `${cmd} (in ${cwd}):\n${r.stderr}`);
        assert.match(r.stderr, /ERROR: (required environment variable [A-Z_]+ is not set|set [A-Z_]+)/, `${cmd}:\n${r.stderr}`);
      }
    });
  }
});
