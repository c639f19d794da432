// git-mirror.sh / git-restore.sh (issue 42, class 2), with real git: ref names compared as text (release-1.2 is
// not release-1x2), RESTORE_FROM=latest taking per repository the newest snapshot that holds it, and no user
// name or token ever kept in a mirror's config (a dumb-HTTP server with basic authentication on loopback).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { test } from 'node:test';
import { GIT_NEEDS, backupEntries, describeNeeding, describeRun, run, runScript, skipUnless, tempDir } from './servers';

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' };
const git = (cwd: string, ...args: string[]): Promise<string> => run('git', args, { cwd, env: GIT_ENV }).then((s) => s.trim());

/** A bare repository `name` under root with one commit (file `name`), made from a work tree. */
async function repo(root: string, name: string): Promise<{ work: string; bare: string }> {
  const work = path.join(root, `${name}-work`);
  fs.mkdirSync(work);
  await git(work, 'init', '-q', '-b', 'main');
  fs.writeFileSync(path.join(work, name), `${name}\n`);
  await git(work, 'add', '.');
  await git(work, 'commit', '-q', '-m', name);
  const bare = path.join(root, `${name}.git`);
  await git(root, 'clone', '-q', '--bare', work, bare);
  return { work, bare };
}

/** Every file under dir whose bytes hold `needle`. */
function filesHolding(dir: string, needle: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile() && fs.readFileSync(p).includes(needle)) out.push(path.relative(dir, p));
    }
  };
  walk(dir);
  return out;
}

describeNeeding('git refs, snapshots and credentials (real git)', { skip: skipUnless(GIT_NEEDS) }, () => {
  test('ref names are compared as text: release-1.2 and v1.0 are pushed though the target has release-1x2 and v1x0 elsewhere', async () => {
    const root = tempDir('git-literal').dir;
    const { work, bare } = await repo(root, 'app');
    for (const b of ['release-1.2', 'a$b', 'x|y', 'v(1)']) await git(work, 'branch', b);
    await git(work, 'tag', 'v1.0');
    await git(work, 'push', '-q', bare, '--all');
    await git(work, 'push', '-q', bare, '--tags');
    const backupDir = path.join(root, 'backups');
    fs.mkdirSync(backupDir);
    const m = await runScript('git-mirror', { BACKUP_DIR: backupDir, REPOSITORIES: `file://${bare}`, RETENTION_DAYS: '0' });
    assert.equal(m.code, 0, describeRun(m));
    // The target: another history, with refs whose names match the snapshot's only as patterns.
    const other = await repo(root, 'other');
    await git(other.work, 'branch', 'release-1x2');
    await git(other.work, 'branch', 'axb');
    await git(other.work, 'tag', 'v1x0');
    const target = path.join(root, 'target.git');
    await git(root, 'init', '-q', '--bare', target);
    await git(other.work, 'push', '-q', target, 'refs/heads/release-1x2', 'refs/heads/axb', 'refs/tags/v1x0');
    const r = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${bare}`, RESTORE_PUSH_URL: `file://${target}` });
    assert.equal(r.code, 0, describeRun(r));
    const head = await git(bare, 'rev-parse', 'main');
    for (const ref of ['refs/heads/main', 'refs/heads/release-1.2', 'refs/heads/a$b', 'refs/heads/x|y', 'refs/heads/v(1)', 'refs/tags/v1.0']) {
      assert.equal(await git(target, 'rev-parse', `${ref}^{commit}`), head, ref);
    }
    for (const ref of ['refs/heads/release-1x2', 'refs/heads/axb', 'refs/tags/v1x0']) assert.equal(await git(target, 'rev-parse', `${ref}^{commit}`), await git(other.work, 'rev-parse', 'main'), `${ref} kept`);
    assert.match(r.stdout, /kept 3 branch\(es\) or tag\(s\) that the snapshot does not have \((heads\/)?axb, (heads\/)?release-1x2, (tags\/)?v1x0\)/);
    assert.doesNotMatch(r.stdout + r.stderr, /refused to move backwards/);
  });

  test('RESTORE_FROM=latest takes the newest snapshot that holds the repository, naming the newer ones without it', async () => {
    const root = tempDir('git-latest').dir;
    const alpha = await repo(root, 'alpha');
    const beta = await repo(root, 'beta');
    const backupDir = path.join(root, 'backups');
    fs.mkdirSync(backupDir);
    const env = { BACKUP_DIR: backupDir, REPOSITORIES: `file://${alpha.bare} file://${beta.bare}`, RETENTION_DAYS: '0' };
    const first = await runScript('git-mirror', env);
    assert.equal(first.code, 0, describeRun(first));
    // beta's server is down for the next run: that snapshot holds alpha only
    fs.renameSync(beta.bare, `${beta.bare}.away`);
    const second = await runScript('git-mirror', env);
    assert.equal(second.code, 1, describeRun(second));
    const [older, newer] = backupEntries(backupDir);
    assert.ok(newer, backupEntries(backupDir).join(' '));
    const betaRel = `${beta.bare.replace(/^\//, '').replace(/\.git$/, '')}.bundle`;
    assert.ok(fs.existsSync(path.join(backupDir, older, betaRel)) && !fs.existsSync(path.join(backupDir, newer, betaRel)));
    fs.renameSync(`${beta.bare}.away`, beta.bare);
    const target = path.join(root, 'beta-restored');
    const r = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${beta.bare}`, RESTORE_FROM: 'latest', RESTORE_TARGET: target });
    assert.equal(r.code, 0, describeRun(r));
    assert.ok(r.stdout.includes(`backup folder: ${path.join(backupDir, older)}`), r.stdout);
    assert.ok(r.stdout.includes(`newer backup folders do not hold ${betaRel}: ${newer}`), r.stdout);
    assert.equal(fs.readFileSync(path.join(target, 'beta'), 'utf8'), 'beta\n');
    const a = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${alpha.bare}`, RESTORE_FROM: 'latest', RESTORE_TARGET: path.join(root, 'alpha-restored') });
    assert.equal(a.code, 0, describeRun(a));
    assert.ok(a.stdout.includes(`backup folder: ${path.join(backupDir, newer)}`), a.stdout);
  });

  test('a user name or token is never kept in a mirror\'s config: a URL holding one is refused, the Secret is used instead, an old mirror\'s config is cleaned', async () => {
    const root = tempDir('git-creds').dir;
    const served = path.join(root, 'served');
    fs.mkdirSync(served);
    const { bare } = await repo(served, 'repo');
    await git(bare, 'update-server-info');
    const TOKEN = 'tok-3f9a1c7e55';
    const expected = `Basic ${Buffer.from(`bot:${TOKEN}`).toString('base64')}`;
    // git's dumb HTTP protocol: plain files, behind basic authentication
    const srv = http.createServer((req, res) => {
      if (req.headers.authorization !== expected) {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
        return res.end();
      }
      const file = path.join(served, decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
      if (!file.startsWith(served + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
        res.writeHead(404);
        return res.end();
      }
      res.writeHead(200, { 'Content-Type': 'application/octet-stream' });
      fs.createReadStream(file).pipe(res);
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as AddressInfo).port;
    const plain = `http://127.0.0.1:${port}/repo.git`;
    const withToken = `http://bot:${TOKEN}@127.0.0.1:${port}/repo.git`;
    try {
      const backupDir = path.join(root, 'backups');
      fs.mkdirSync(backupDir);
      const mirror = path.join(backupDir, `127.0.0.1_${port}`, 'repo.git');
      const inUrl = await runScript('git-mirror', { BACKUP_DIR: backupDir, REPOSITORIES: withToken, RETENTION_DAYS: '0', HOME: root });
      assert.equal(inUrl.code, 1, describeRun(inUrl));
      assert.match(inUrl.stderr, /http:\/\/\*\*\*@127\.0\.0\.1:\d+\/repo\.git: a user name or token in the URL is refused .* set GIT_USERNAME and the GIT_PASSWORD Secret; skipped/);
      assert.deepEqual(filesHolding(backupDir, TOKEN), [], 'the token is in no file of the backup volume');
      assert.ok(!(inUrl.stdout + inUrl.stderr).includes(TOKEN));

      const viaSecret = { BACKUP_DIR: backupDir, REPOSITORIES: plain, GIT_USERNAME: 'bot', GIT_PASSWORD: TOKEN, RETENTION_DAYS: '0', HOME: root };
      const ok = await runScript('git-mirror', viaSecret);
      assert.equal(ok.code, 0, describeRun(ok));
      assert.equal(await git(mirror, 'config', 'remote.origin.url'), plain);
      assert.deepEqual(filesHolding(backupDir, TOKEN), []);

      // A mirror an earlier version cloned from a URL with the token: the next run takes it out of the config.
      await git(mirror, 'config', 'remote.origin.url', withToken);
      const cleaned = await runScript('git-mirror', viaSecret);
      assert.equal(cleaned.code, 0, describeRun(cleaned));
      assert.match(cleaned.stdout, /removed the user name and password from the remote URL in 127\.0\.0\.1_\d+\/repo\.git\/config/);
      assert.equal(await git(mirror, 'config', 'remote.origin.url'), plain);
      assert.deepEqual(filesHolding(backupDir, TOKEN), []);

      // the push side: a RESTORE_PUSH_URL with the token is refused too
      const push = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: plain, RESTORE_PUSH_URL: withToken });
      assert.equal(push.code, 1, describeRun(push));
      assert.match(push.stderr, /RESTORE_PUSH_URL=http:\/\/\*\*\*@127\.0\.0\.1:\d+\/repo\.git has a user name or password in it/);
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
  });
});
