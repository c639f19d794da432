// git-restore.sh with RESTORE_PUSH_URL at a repository that is not empty, and git-mirror.sh's mirror
// paths for host:port and scp-like URLs (issue 22), with real git.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { GIT_NEEDS, REPO_ROOT, describeRun, run, runScript, skipUnless, describeNeeding, tempDir } from './servers';

const GIT_ENV = { ...process.env, GIT_AUTHOR_NAME: 'T', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 'T', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' };
const git = (cwd: string, ...args: string[]): Promise<string> => run('git', args, { cwd, env: GIT_ENV }).then((s) => s.trim());
const refs = (repo: string): Promise<string> => git(repo, 'for-each-ref', '--format=%(refname) %(objectname)');

describeNeeding('git-restore push and mirror paths (real git)', { skip: skipUnless(GIT_NEEDS) }, () => {
  async function mirrored() {
    const root = tempDir('git-push').dir;
    const work = path.join(root, 'work');
    fs.mkdirSync(work);
    await git(work, 'init', '-q', '-b', 'main');
    fs.writeFileSync(path.join(work, 'a.txt'), 'a\n');
    await git(work, 'add', '.');
    await git(work, 'commit', '-q', '-m', 'one');
    await git(work, 'tag', 'v1');
    await git(work, 'branch', 'side');
    const upstream = path.join(root, 'upstream.git');
    await git(root, 'clone', '-q', '--bare', work, upstream);
    const backupDir = path.join(root, 'backups');
    fs.mkdirSync(backupDir);
    const m = await runScript('git-mirror', { BACKUP_DIR: backupDir, REPOSITORIES: `file://${upstream}`, RETENTION_DAYS: '0' });
    assert.equal(m.code, 0, describeRun(m));
    // The hosted repository after the snapshot: main moved on, a new branch was created.
    const target = path.join(root, 'target.git');
    await git(root, 'clone', '-q', '--bare', upstream, target);
    fs.writeFileSync(path.join(work, 'b.txt'), 'b\n');
    await git(work, 'add', '.');
    await git(work, 'commit', '-q', '-m', 'two');
    await git(work, 'push', '-q', target, 'main', 'main:after-snapshot');
    return { root, backupDir, upstream, target };
  }

  test('a push to a non-empty repository never moves a branch backwards: main that moved on is refused and listed, the rest is restored, exit 1', async () => {
    const { root, backupDir, upstream, target } = await mirrored();
    // A branch the target lost since the snapshot, and one that is behind it: both are restored.
    await git(target, 'branch', '-D', 'side');
    const work = path.join(root, 'work');
    const movedOn = await git(target, 'rev-parse', 'main');
    const r = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${upstream}`, RESTORE_PUSH_URL: `file://${target}` });
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(await git(target, 'rev-parse', 'main'), movedOn, 'main was not rewound');
    assert.equal(await git(target, 'rev-parse', 'side'), await git(upstream, 'rev-parse', 'side'), 'a lost branch is restored');
    assert.ok((await refs(target)).includes('refs/heads/after-snapshot'), 'a branch created after the snapshot is kept');
    assert.match(r.stderr, /refused to move backwards \(the target moved on after the snapshot\): refs\/heads\/main \(target [0-9a-f]{7,}, snapshot [0-9a-f]{7,}\); RESTORE_PUSH_FORCE=true rewinds them/);
    assert.ok(work);
  });

  test('a tag the target moved elsewhere is not moved back without RESTORE_PUSH_FORCE=true; a setting that is not true/false is refused before anything is pushed', async () => {
    const { root, backupDir, upstream, target } = await mirrored();
    const work = path.join(root, 'work');
    await git(work, 'tag', '-f', 'v1', 'main');
    await git(work, 'push', '-q', '--force', target, 'refs/tags/v1');
    const movedTag = await git(target, 'rev-parse', 'v1');
    const bad = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${upstream}`, RESTORE_PUSH_URL: `file://${target}`, RESTORE_PUSH_FORCE: 'yes' });
    assert.equal(bad.code, 1, describeRun(bad));
    assert.match(bad.stderr, /RESTORE_PUSH_FORCE must be true or false, got 'yes'/);
    await git(target, 'branch', '-D', 'side');
    const r = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${upstream}`, RESTORE_PUSH_URL: `file://${target}` });
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(await git(target, 'rev-parse', 'v1'), movedTag);
    assert.match(r.stderr, /refused to move backwards .*refs\/tags\/v1 \(target/);
  });

  test('RESTORE_PUSH_FORCE=true rewinds them, and says which', async () => {
    const { backupDir, upstream, target } = await mirrored();
    const r = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${upstream}`, RESTORE_PUSH_URL: `file://${target}`, RESTORE_PUSH_FORCE: 'true' });
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(await git(target, 'rev-parse', 'main'), await git(upstream, 'rev-parse', 'main'), 'main is the snapshot');
    assert.match(r.stdout, /RESTORE_PUSH_FORCE=true: moved backwards to the snapshot: refs\/heads\/main/);
    assert.match(r.stdout, /kept 1 branch\(es\) or tag\(s\) that the snapshot does not have \(after-snapshot\); RESTORE_PUSH_PRUNE=true deletes them/);
    assert.match(r.stdout, /verified: the target has every branch and tag of the source/);
  });

  test('RESTORE_PUSH_PRUNE=true makes the target exactly the snapshot', async () => {
    const { backupDir, upstream, target } = await mirrored();
    const r = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${upstream}`, RESTORE_PUSH_URL: `file://${target}`, RESTORE_PUSH_PRUNE: 'true', RESTORE_PUSH_FORCE: 'true' });
    assert.equal(r.code, 0, describeRun(r));
    assert.equal(await refs(target), await refs(upstream));
  });

  test('a target that accepts the push but does not hold what was pushed: exit 1, naming the refs', async () => {
    const { backupDir, upstream, target } = await mirrored();
    // A post-receive hook that puts main back where it was: git push itself reports success.
    const before = await git(target, 'rev-parse', 'main');
    fs.writeFileSync(path.join(target, 'hooks', 'post-receive'), `#!/bin/sh\ngit update-ref refs/heads/main ${before}\n`, { mode: 0o755 });
    const r = await runScript('git-restore', { BACKUP_DIR: backupDir, RESTORE_REPOSITORY: `file://${upstream}`, RESTORE_PUSH_URL: `file://${target}`, RESTORE_PUSH_FORCE: 'true' });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /the push reported success but the target does not hold what was pushed: refs\/heads\/main/);
  });

  test('mirror paths: host:port stays the host (not a folder named after the port), scp-like host:path is host/path', () => {
    const prelude = path.join(REPO_ROOT, 'backups', 'scripts', 'lib', 'prelude.sh');
    const mp = (url: string) => execFileSync('sh', ['-c', `. "$0"; mirror_path "$1"`, prelude, url], { encoding: 'utf8' });
    assert.equal(mp('ssh://git@git.example.test:2222/org/repo.git'), 'git.example.test_2222/org/repo.git');
    assert.equal(mp('https://user@git.example.test:8443/org/repo'), 'git.example.test_8443/org/repo');
    assert.equal(mp('https://git.example.test/org/repo.git'), 'git.example.test/org/repo.git');
    assert.equal(mp('git@git.example.test:org/repo.git'), 'git.example.test/org/repo.git');
    assert.equal(mp('git.example.test:org/repo.git'), 'git.example.test/org/repo.git');
    assert.equal(mp('file:///srv/git/repo.git'), 'srv/git/repo.git');
    assert.notEqual(mp('ssh://host:2222/org/repo.git'), mp('ssh://host/2222/org/repo.git'), 'two different repositories, two mirrors');
  });
});
