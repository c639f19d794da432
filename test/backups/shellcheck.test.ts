// shellcheck over exactly what the CronJobs run: each catalogued script with the shared prelude joined in
// (backups/scripts.ts `content`), as POSIX sh, at shellcheck's default severity (style and up): no finding.
// Without shellcheck the test skips with the install command; under CI=true it fails instead.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { BACKUP_SCRIPTS } from '../../backups/scripts';
import { assertBinaries, skipUnless, describeNeeding, tempDir, type BinaryNeed } from './servers';

const NEEDS: BinaryNeed[] = [{ name: 'shellcheck', apt: 'shellcheck' }];

describeNeeding('shellcheck: every backup/restore script as mounted (prelude joined in)', { skip: skipUnless(NEEDS) }, () => {
  // one shellcheck process over all joined scripts (each written to a temp file named after the script)
  let findings: Map<string, string[]> | undefined;
  const check = (): Map<string, string[]> => {
    if (findings) return findings;
    assertBinaries(NEEDS);
    const dir = tempDir('shellcheck').dir;
    for (const s of BACKUP_SCRIPTS) fs.writeFileSync(path.join(dir, s.name), s.content);
    const r = spawnSync('shellcheck', ['--shell=sh', '--severity=style', '--format=gcc', ...BACKUP_SCRIPTS.map((s) => s.name)], { cwd: dir, encoding: 'utf8' });
    assert.equal(r.error, undefined, String(r.error));
    assert.ok(r.status === 0 || r.status === 1, `shellcheck failed to run: ${r.stderr}`);
    findings = new Map(BACKUP_SCRIPTS.map((s) => [s.name, r.stdout.split('\n').filter((l) => l.startsWith(`${s.name}:`))]));
    return findings;
  };
  for (const s of BACKUP_SCRIPTS) {
    test(`${s.name} is shellcheck-clean`, () => {
      assert.deepEqual(check().get(s.name), [], `${s.name}: shellcheck findings (line numbers are in the joined text)`);
    });
  }

  test('shellcheck finds the problem class this test guards against (ls | grep)', () => {
    assertBinaries(NEEDS);
    const r = spawnSync('shellcheck', ['--shell=sh', '--format=gcc', '-'], { input: '#!/bin/sh\nls -1 "$1" | grep x\n', encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /SC2010/);
  });
});
