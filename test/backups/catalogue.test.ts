// backups/scripts.ts: the catalogue matches the files, and the declared environment matches what the scripts read.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { describe, test } from 'node:test';
import { BACKUP_SCRIPTS, PRELUDE_FILE, backupScript, imageFor, joinPrelude } from '../../backups/scripts';
import { SCRIPTS_DIR } from './servers';

/** Upper-case names a script reads: $NAME / ${NAME...} and the arguments of `require`, minus its own assignments. */
function readsFromEnv(text: string): Set<string> {
  const code = text.split('\n').filter((l) => !l.trimStart().startsWith('#')).join('\n');
  const refs = new Set<string>();
  const awkFields = new Set(['NF', 'NR']); // $NF inside awk programs
  for (const m of code.matchAll(/\$\{?([A-Z][A-Z0-9_]*)/g)) if (!awkFields.has(m[1])) refs.add(m[1]);
  for (const m of code.matchAll(/^\s*require ([A-Z0-9_ ]+)$/gm)) for (const n of m[1].split(/\s+/)) refs.add(n);
  const assigned = new Set<string>();
  for (const m of code.matchAll(/(?:^|[\s;(])(?:export )?([A-Z][A-Z0-9_]*)=/gm)) assigned.add(m[1]);
  // a name assigned from itself with a default (WF_CLI="${WF_CLI:-n8n}") is still read from the environment
  const selfDefault = (n: string): boolean => new RegExp(`${n}="?\\$\\{${n}:-`).test(code);
  return new Set([...refs].filter((n) => !assigned.has(n) || selfDefault(n)));
}

const PRELUDE = fs.readFileSync(PRELUDE_FILE, 'utf8');

/** The prelude's functions: name -> body text. */
function preludeFunctions(): Map<string, string> {
  const fns = new Map<string, string>();
  const lines = PRELUDE.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const m = /^([a-z_]+)\(\) \{(.*)$/.exec(lines[i]);
    if (!m) continue;
    if (/\}\s*$/.test(m[2])) { fns.set(m[1], m[2]); continue; }
    let j = i + 1;
    while (lines[j] !== '}') j++;
    fns.set(m[1], lines.slice(i + 1, j).join('\n'));
    i = j;
  }
  return fns;
}
const FNS = preludeFunctions();
const calls = (text: string): string[] => [...FNS.keys()].filter((f) => new RegExp(`(^|[^A-Za-z0-9_])${f}([^A-Za-z0-9_(]|$)`, 'm').test(text.replace(/^\s*#.*$/gm, '')));

/** What a script reads from the environment: its own text plus every prelude function it calls (transitively). */
function scriptReads(own: string): Set<string> {
  const seen = new Set<string>();
  const todo = calls(own);
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    todo.push(...calls(FNS.get(f)!));
  }
  const preludeAssigned = new Set(['TAB', 'RETENTION_MAX_DAYS', 'DIED', 'PG_LOCK_KEY']);
  const reads = new Set([...readsFromEnv(own)].filter((n) => !preludeAssigned.has(n)));
  for (const f of seen) for (const n of readsFromEnv(FNS.get(f)!)) if (!preludeAssigned.has(n) && !new RegExp(`(^|[\\s;(])(?:export )?${n}=`, 'm').test(own)) reads.add(n);
  return reads;
}

describe('backup script catalogue (backups/scripts.ts)', () => {
  test('every script file is catalogued, and every catalogued script exists with its content', () => {
    const files = fs.readdirSync(SCRIPTS_DIR).filter((f) => f.endsWith('.sh')).sort();
    assert.deepEqual(BACKUP_SCRIPTS.map((s) => s.name).sort(), files);
    for (const s of BACKUP_SCRIPTS) {
      const own = fs.readFileSync(path.join(SCRIPTS_DIR, s.name), 'utf8');
      assert.equal(s.content, joinPrelude(s.name, own, PRELUDE), `${s.name}: content is the file with the prelude joined in`);
      assert.equal(s.content.split(PRELUDE).length, 2, `${s.name}: the prelude appears exactly once`);
    }
    assert.equal(backupScript('redis-backup.sh').image, 'redis');
    assert.throws(() => backupScript('nope.sh'), /unknown backup script nope\.sh/);
    const wf = backupScript('workflow-backup.sh');
    assert.equal(imageFor(wf, 'cli'), 'workflow');
    assert.equal(imageFor(wf, 'database'), 'postgres');
    assert.equal(imageFor(backupScript('sqlite-backup.sh'), 'cli'), 'sqlite');
  });

  test('joinPrelude refuses a script without exactly one "# @prelude" line', () => {
    assert.throws(() => joinPrelude('x.sh', '#!/bin/sh\nset -eu\n', PRELUDE), /x\.sh: expected exactly one "# @prelude" line.*found 0/);
    assert.throws(() => joinPrelude('x.sh', '# @prelude\n# @prelude\n', PRELUDE), /found 2/);
  });

  for (const s of BACKUP_SCRIPTS) {
    test(`${s.name}: POSIX sh, set -eu, no tracing, declared environment = what it reads`, () => {
      assert.match(s.content, /^#!\/bin\/sh\n/);
      assert.match(s.content, /^set -eu$/m);
      assert.doesNotMatch(s.content, /^\s*set -[a-z]*x/m, 'tracing would print secrets');
      execFileSync('sh', ['-n'], { input: s.content }); // dash parses what the CronJob runs
      const own = fs.readFileSync(path.join(SCRIPTS_DIR, s.name), 'utf8');
      for (const f of FNS.keys()) assert.doesNotMatch(own, new RegExp(`^${f}\\(\\)`, 'm'), `${s.name} defines its own copy of the prelude's ${f}()`);
      const reads = scriptReads(own);
      const declared = new Set(s.env);
      for (const n of reads) assert.ok(declared.has(n), `${s.name} reads ${n} but the catalogue does not list it`);
      for (const n of declared) assert.ok(s.content.includes(n), `${s.name}: declared ${n} is not mentioned in the script`);
      for (const n of s.secrets) assert.ok(declared.has(n), `${s.name}: secret ${n} not in env`);
      assert.ok(fs.statSync(path.join(SCRIPTS_DIR, s.name)).mode & 0o100, 'executable');
      // no literal schedules, retention windows or hosts: those come from the environment
      assert.doesNotMatch(s.content.replace(/^#.*$/gm, ''), /\b\d+ \d+ \* \* \*|127\.0\.0\.1|localhost|\.svc\b/);
    });
  }
});
