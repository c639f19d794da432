// shellcheck over exactly what the CronJobs run: each catalogued script with the shared prelude joined in
// (backups/scripts.ts `content`), as POSIX sh, at shellcheck's default severity (style and up): no finding.
// Without shellcheck the test skips with the install command; under CI=true it fails instead.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { BACKUP_SCRIPTS } from '../../backups/scripts';
import { assertBinaries, skipUnless, describeNeeding, tempDir, type BinaryNeed } from './servers';

const NEEDS: BinaryNeed[] = [{ name: 'shellcheck', apt: 'shellcheck' }];

describeNeeding('shellcheck: every backup/restore script as mounted (prelude joined in)', { skip: skipUnless(NEEDS) }, () => {
  // shellcheck over all joined scripts (each written to a temp file named after the script), in one
  // process per core side by side (each script is checked on its own, so how they are dealt changes nothing)
  let findings: Promise<Map<string, string[]>> | undefined;
  const shellcheck = (dir: string, names: string[]) =>
    new Promise<string>((resolve, reject) => {
      execFile('shellcheck', ['--shell=sh', '--severity=style', '--format=gcc', ...names], { cwd: dir, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        const code = err ? (err as { code?: unknown }).code : 0;
        if (code !== 0 && code !== 1) return reject(new Error(`shellcheck failed to run: ${err} ${stderr}`));
        resolve(stdout);
      });
    });
  const check = (): Promise<Map<string, string[]>> =>
    (findings ??= (async () => {
      assertBinaries(NEEDS);
      const dir = tempDir('shellcheck').dir;
      for (const s of BACKUP_SCRIPTS) fs.writeFileSync(path.join(dir, s.name), s.content);
      const n = Math.max(1, Math.min(os.availableParallelism(), BACKUP_SCRIPTS.length));
      const names = BACKUP_SCRIPTS.map((s) => s.name);
      const stdout = (await Promise.all(Array.from({ length: n }, (_, k) => shellcheck(dir, names.filter((_, i) => i % n === k))))).join('\n');
      return new Map(BACKUP_SCRIPTS.map((s) => [s.name, stdout.split('\n').filter((l) => l.startsWith(`${s.name}:`))]));
    })());
  for (const s of BACKUP_SCRIPTS) {
    test(`${s.name} is shellcheck-clean`, async () => {
      assert.deepEqual((await check()).get(s.name), [], `${s.name}: shellcheck findings (line numbers are in the joined text)`);
    });
  }

  test('shellcheck finds the problem class this test guards against (ls | grep)', () => {
    assertBinaries(NEEDS);
    const r = spawnSync('shellcheck', ['--shell=sh', '--format=gcc', '-'], { input: '#!/bin/sh\nls -1 "$1" | grep x\n', encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /SC2010/);
  });
});
