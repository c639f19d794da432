// shellcheck over exactly what the CronJobs run: each catalogued script with the shared prelude joined in
// (backups/scripts.ts `content`), as POSIX sh, at shellcheck's default severity (style and up): no finding.
// Without shellcheck the test skips with the install command; under CI=true it fails instead.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { BACKUP_SCRIPTS } from '../../backups/scripts';
import { assertBinaries, skipUnless, type BinaryNeed } from './servers';

const NEEDS: BinaryNeed[] = [{ name: 'shellcheck', apt: 'shellcheck' }];

describe('shellcheck: every backup/restore script as mounted (prelude joined in)', { skip: skipUnless(NEEDS) }, () => {
  for (const s of BACKUP_SCRIPTS) {
    test(`${s.name} is shellcheck-clean`, () => {
      assertBinaries(NEEDS);
      const r = spawnSync('shellcheck', ['--shell=sh', '--severity=style', '--format=gcc', '-'], { input: s.content, encoding: 'utf8' });
      assert.equal(r.error, undefined, String(r.error));
      assert.equal(r.status, 0, `${s.name}: shellcheck findings (line numbers are in the joined text):\n${r.stdout}${r.stderr}`);
    });
  }

  test('shellcheck finds the problem class this test guards against (ls | grep)', () => {
    assertBinaries(NEEDS);
    const r = spawnSync('shellcheck', ['--shell=sh', '--format=gcc', '-'], { input: '#!/bin/sh\nls -1 "$1" | grep x\n', encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /SC2010/);
  });
});
