// git-mirror.sh / git-restore.sh with real git and local repositories (file:// URLs).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { before, test } from 'node:test';
import { GIT_NEEDS, assertBinaries, backupEntries, describeRun, run, runScript, skipUnless, describeNeeding, tempDir, touchDaysAgo, treeHashes } from './servers';

const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Test',
  GIT_AUTHOR_EMAIL: 'test@example.test',
  GIT_COMMITTER_NAME: 'Test',
  GIT_COMMITTER_EMAIL: 'test@example.test',
  GIT_CONFIG_NOSYSTEM: '1',
  HOME: '/nonexistent',
};
const git = (cwd: string, ...args: string[]): Promise<string> => run('git', args, { cwd, env: GIT_ENV }).then((s) => s.trim());

async function makeRepo(root: string, name: string, commits: number): Promise<{ work: string; bare: string }> {
  const work = path.join(root, `${name}-work`);
  const bare = path.join(root, `${name}.git`);
  fs.mkdirSync(work);
  await git(work, 'init', '-q', '-b', 'main');
  for (let i = 0; i < commits; i++) {
    fs.writeFileSync(path.join(work, `file-${i}.txt`), `${name} ${i}\n`);
    await git(work, 'add', '.');
    await git(work, 'commit', '-q', '-m', `commit ${i}`);
  }
  await git(work, 'branch', 'feature');
  await git(work, 'tag', '-a', 'v1.0', '-m', 'release');
  await git(root, 'clone', '-q', '--bare', work, bare);
  await git(work, 'remote', 'add', 'origin', bare);
  return { work, bare };
}

const refs = (repo: string): Promise<string> => git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');

describeNeeding('git mirror scripts (real git, file:// repositories)', { skip: skipUnless(GIT_NEEDS) }, () => {
  before(() => assertBinaries(GIT_NEEDS));

  test('first run clones --mirror, later runs remote update --prune; restore clones from the mirror', async () => {
    const root = tempDir('git-src').dir;
    const backupDir = tempDir('git-mirrors').dir;
    const a = await makeRepo(root, 'alpha', 5);
    const b = await makeRepo(root, 'beta', 3);
    const urls = [`file://${a.bare}`, `file://${b.bare}`];
    const env = { BACKUP_DIR: backupDir, REPOSITORIES: urls.join('\n'), HOME: backupDir, RETENTION_DAYS: '7' };

    const r1 = await runScript('git-mirror', env);
    assert.equal(r1.code, 0, describeRun(r1));
    assert.match(r1.stdout, /first run, git clone --mirror/);
    const mirrorA = path.join(backupDir, a.bare.replace(/^\//, ''));
    const mirrorB = path.join(backupDir, b.bare.replace(/^\//, ''));
    assert.equal(await refs(mirrorA), await refs(a.bare));
    assert.equal(await refs(mirrorB), await refs(b.bare));
    assert.equal(await git(mirrorA, 'config', 'remote.origin.mirror'), 'true');

    // upstream moves on: new commit, new branch, deleted branch
    fs.writeFileSync(path.join(a.work, 'new.txt'), 'new\n');
    await git(a.work, 'add', '.');
    await git(a.work, 'commit', '-q', '-m', 'new');
    await git(a.work, 'push', '-q', 'origin', 'main', 'main:release');
    await git(a.work, 'push', '-q', 'origin', ':feature');
    const r2 = await runScript('git-mirror', env);
    assert.equal(r2.code, 0, describeRun(r2));
    assert.match(r2.stdout, /updating mirror .*alpha\.git \(git remote update --prune\)/);
    assert.equal(await refs(mirrorA), await refs(a.bare), 'mirror follows upstream, deleted branch pruned');
    assert.ok(!(await refs(mirrorA)).includes('refs/heads/feature'));

    // restore = clone from the mirror
    const target = path.join(tempDir('git-restore').dir, 'alpha');
    const rr = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: urls[0], RESTORE_TARGET: target });
    assert.equal(rr.code, 0, describeRun(rr));
    assert.equal(await git(target, 'rev-parse', 'HEAD'), await git(a.bare, 'rev-parse', 'main'));
    assert.equal(fs.readFileSync(path.join(target, 'new.txt'), 'utf8'), 'new\n');
    assert.match(await git(target, 'tag'), /v1\.0/);

    // restore = push --mirror into a new empty hosted repository
    const fresh = path.join(root, 'recreated.git');
    await git(root, 'init', '-q', '--bare', fresh);
    const rp = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: urls[1], RESTORE_PUSH_URL: `file://${fresh}` });
    assert.equal(rp.code, 0, describeRun(rp));
    assert.equal(await refs(fresh), await refs(b.bare));
  });

  test('force-push and deleted branch upstream: the mirror follows, the dated bundle snapshots keep the old commits, restore from a bundle', async () => {
    const root = tempDir('git-force').dir;
    const backupDir = tempDir('git-force-backups').dir;
    const a = await makeRepo(root, 'epsilon', 4);
    const url = `file://${a.bare}`;
    const env = { BACKUP_DIR: backupDir, REPOSITORIES: url, HOME: backupDir, RETENTION_DAYS: '7' };
    const r1 = await runScript('git-mirror', env);
    assert.equal(r1.code, 0, describeRun(r1));
    assert.match(r1.stdout, /snapshot .*epsilon\.bundle verified/);
    const [snap1] = backupEntries(backupDir);
    const bundle1 = path.join(backupDir, snap1, a.bare.replace(/^\//, '').replace(/\.git$/, '.bundle'));
    assert.ok(fs.existsSync(bundle1), `bundle at ${bundle1}`);
    await git(root, 'bundle', 'verify', bundle1).catch(async () => git(a.bare, 'bundle', 'verify', bundle1));
    const oldMain = await git(a.bare, 'rev-parse', 'main');
    const oldFeature = await git(a.bare, 'rev-parse', 'feature');

    // upstream history is rewritten: main force-pushed to an unrelated commit, feature deleted
    await git(a.work, 'checkout', '-q', '--orphan', 'rewrite');
    fs.writeFileSync(path.join(a.work, 'rewritten.txt'), 'history rewritten\n');
    await git(a.work, 'add', '-A');
    await git(a.work, 'commit', '-q', '-m', 'rewritten');
    await git(a.work, 'push', '-q', '--force', 'origin', 'rewrite:main');
    await git(a.work, 'push', '-q', 'origin', ':feature');
    await git(a.bare, 'gc', '-q', '--prune=now');
    const r2 = await runScript('git-mirror', env);
    assert.equal(r2.code, 0, describeRun(r2));
    const mirror = path.join(backupDir, a.bare.replace(/^\//, ''));
    assert.notEqual(await git(mirror, 'rev-parse', 'main'), oldMain, 'the mirror followed the force-push');
    assert.equal(backupEntries(backupDir).length, 2, 'one dated snapshot per run');

    // the first snapshot still holds the old history: restore it
    const target = path.join(tempDir('git-force-restore').dir, 'epsilon');
    const rr = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: url, RESTORE_FROM: snap1, RESTORE_TARGET: target });
    assert.equal(rr.code, 0, describeRun(rr));
    assert.match(rr.stdout, /snapshot .* verified/);
    assert.equal(await git(target, 'rev-parse', 'HEAD'), oldMain, 'old main recovered');
    assert.equal(await git(target, 'rev-parse', 'origin/feature'), oldFeature, 'deleted branch recovered');
    // and push it back as a new hosted repository
    const fresh = path.join(root, 'recovered.git');
    await git(root, 'init', '-q', '--bare', fresh);
    const rp = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: url, RESTORE_FROM: snap1, RESTORE_PUSH_URL: `file://${fresh}` });
    assert.equal(rp.code, 0, describeRun(rp));
    assert.equal(await git(fresh, 'rev-parse', 'feature'), oldFeature);

    // a damaged bundle is refused before anything is written
    const broken = path.join(root, 'broken.bundle');
    fs.writeFileSync(broken, fs.readFileSync(bundle1).subarray(0, 200));
    const target2 = path.join(root, 'never');
    const rb = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: url, RESTORE_FROM: broken, RESTORE_TARGET: target2 });
    assert.notEqual(rb.code, 0);
    assert.match(rb.stderr, /reading snapshot .*broken\.bundle failed: .*early EOF.*nothing was written/, 'a cut-off bundle passes git bundle verify (header only) but not the full read');
    // inside a snapshot folder the bundle is covered by SHA256SUMS: a damaged one is refused before git reads it
    const damaged = path.join(backupDir, 'damaged');
    fs.cpSync(path.join(backupDir, snap1), damaged, { recursive: true });
    const inside = path.join(damaged, path.relative(path.join(backupDir, snap1), bundle1));
    fs.appendFileSync(inside, 'x');
    const rs = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: url, RESTORE_FROM: 'damaged', RESTORE_TARGET: target2 });
    assert.notEqual(rs.code, 0);
    assert.match(rs.stderr, /checksum verification of .*damaged failed.*nothing was changed/);
    fs.rmSync(damaged, { recursive: true });
    assert.ok(!fs.existsSync(target2));

    // retention: snapshots older than RETENTION_DAYS go (the mirror is never touched by retention)
    touchDaysAgo(path.join(backupDir, snap1), 8);
    const r3 = await runScript('git-mirror', env);
    assert.equal(r3.code, 0, describeRun(r3));
    assert.match(r3.stdout, new RegExp(`retention: deleting .*${snap1}`));
    assert.ok(!backupEntries(backupDir).includes(snap1));
    assert.equal(backupEntries(backupDir).length, 2);
    assert.ok(fs.existsSync(mirror));
  });

  test('failures: a missing repository and an unreachable one fail clearly, the others still mirror, existing mirrors untouched', async () => {
    const root = tempDir('git-src2').dir;
    const backupDir = tempDir('git-mirrors2').dir;
    const a = await makeRepo(root, 'gamma', 2);
    const b = await makeRepo(root, 'delta', 2);
    const env = { BACKUP_DIR: backupDir, REPOSITORIES: `file://${a.bare} file://${b.bare}`, HOME: backupDir, RETENTION_DAYS: '7' };
    const r1 = await runScript('git-mirror', env);
    assert.equal(r1.code, 0, describeRun(r1));
    const mirrorB = path.join(backupDir, b.bare.replace(/^\//, ''));
    // FETCH_HEAD is git's scratch note of the last fetch (rewritten by every attempt, even a failed one); refs/objects are the data
    const data = (d: string): Record<string, string> => Object.fromEntries(Object.entries(treeHashes(d)).filter(([k]) => k !== 'FETCH_HEAD'));
    const hashes = data(mirrorB);

    // delta disappears upstream, a never-existing repository is added, gamma gets a new commit
    fs.renameSync(b.bare, b.bare + '.moved');
    fs.writeFileSync(path.join(a.work, 'more.txt'), 'more\n');
    await git(a.work, 'add', '.');
    await git(a.work, 'commit', '-q', '-m', 'more');
    await git(a.work, 'push', '-q', 'origin', 'main');
    const missing = path.join(root, 'never.git');
    const r2 = await runScript('git-mirror', { ...env, REPOSITORIES: `file://${a.bare} file://${b.bare} file://${missing}` });
    assert.notEqual(r2.code, 0);
    assert.match(r2.stderr, new RegExp(`file://${b.bare}: repository (not found|server unreachable).*the existing mirror is unchanged`));
    assert.match(r2.stderr, new RegExp(`file://${missing}: repository (not found|server unreachable)`));
    assert.match(r2.stderr, /1 repositories mirrored, failed:/);
    assert.deepEqual(data(mirrorB), hashes, 'existing mirror byte-identical (refs, objects, config)');
    assert.ok(!fs.existsSync(path.join(backupDir, missing.replace(/^\//, ''))), 'no half-made mirror');
    assert.equal(await refs(path.join(backupDir, a.bare.replace(/^\//, ''))), await refs(a.bare), 'the healthy repository was still mirrored');
    const leftovers = fs.readdirSync(path.dirname(path.join(backupDir, missing.replace(/^\//, '')))).filter((n) => n.startsWith('.partial'));
    assert.deepEqual(leftovers, []);
  });

  test('credentials for https go through a credential helper reading the environment, never the URL or logs', async () => {
    const backupDir = tempDir('git-mirrors3').dir;
    // a fake smart-HTTP server: 401 without credentials; records what git sends after asking the helper
    const seenAuth: string[] = [];
    const srv = http.createServer((req, res) => {
      seenAuth.push(req.headers.authorization ?? '');
      if (!req.headers.authorization) {
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' });
        return res.end();
      }
      res.writeHead(404);
      res.end();
    });
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
    const port = (srv.address() as AddressInfo).port;
    try {
      const r = await runScript('git-mirror', {
        BACKUP_DIR: backupDir,
        RETENTION_DAYS: '7',
        REPOSITORIES: `http://127.0.0.1:${port}/org/repo.git`,
        GIT_USERNAME: 'bot',
        GIT_PASSWORD: 'env-token-secret',
        HOME: backupDir,
      });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /http:\/\/127\.0\.0\.1:\d+\/org\/repo\.git: repository not found/);
      assert.ok(seenAuth.includes('Basic ' + Buffer.from('bot:env-token-secret').toString('base64')), 'helper supplied the credentials');
      assert.ok(!r.stdout.includes('env-token-secret') && !r.stderr.includes('env-token-secret'), 'token printed');

      const wrong = await runScript('git-mirror', { BACKUP_DIR: backupDir, RETENTION_DAYS: '7', REPOSITORIES: `http://127.0.0.1:${port}/org/repo.git`, HOME: backupDir });
      assert.notEqual(wrong.code, 0);
      assert.match(wrong.stderr, /authentication failed \(check GIT_USERNAME\/GIT_PASSWORD or the deploy key\)/);
    } finally {
      await new Promise<void>((r) => srv.close(() => r()));
    }
    // user info inside a URL is refused (git would keep it in the mirror's config), and masked in the message
    const masked = await runScript('git-mirror', { BACKUP_DIR: backupDir, RETENTION_DAYS: '7', REPOSITORIES: 'https://bot:inline-token@127.0.0.1:9/org/repo.git', HOME: backupDir });
    assert.notEqual(masked.code, 0);
    assert.match(masked.stderr, /https:\/\/\*\*\*@127\.0\.0\.1:9\/org\/repo\.git: a user name or token in the URL is refused/);
    assert.ok(!masked.stderr.includes('inline-token') && !masked.stdout.includes('inline-token'));
  });
});
