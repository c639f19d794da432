// workflow-backup.sh / workflow-restore.sh.
// database mode: for real, against a PostgreSQL server holding a workflow-tool-like schema.
// cli mode: the workflow tool is not installed here, so WF_CLI points at a STUB CLI that records
// its arguments and writes/reads the export files (proves the commands and file handling only).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  PG_NEEDS, assertBinaries, backupEntries, describeRun, runScript, skipUnless, describeNeeding, startPostgres, tempDir, touchDaysAgo, treeHashes,
  type PgServer,
} from './servers';

async function snapshot(pg: PgServer): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const t of ['workflow_entity', 'credentials_entity', 'execution_entity', 'shared_workflow']) out[t] = await pg.psql(`SELECT * FROM ${t} ORDER BY 1`, 'workflows');
  return out;
}

const needs = PG_NEEDS();
describeNeeding('workflow backup, database mode (real PostgreSQL)', { skip: skipUnless(needs) }, () => {
  let pg: PgServer;
  let backupDir: string;
  const env = (): Record<string, string> => ({ ...pg.env(), PGDATABASE: 'workflows', BACKUP_DIR: backupDir, RETENTION_DAYS: '7', WF_BACKUP_MODE: 'database' });

  before(async () => {
    assertBinaries(needs);
    pg = await startPostgres();
    backupDir = tempDir('wf-db-backups').dir;
    await pg.psql(`CREATE ROLE wf LOGIN PASSWORD 'wf-pw'`);
    await pg.psql(`CREATE DATABASE workflows OWNER wf`);
    await pg.psql(
      `SET ROLE wf;
       CREATE TABLE workflow_entity (id varchar(36) PRIMARY KEY, name text NOT NULL, active boolean, nodes json, connections json);
       CREATE TABLE credentials_entity (id varchar(36) PRIMARY KEY, name text, type text, data text);
       CREATE TABLE shared_workflow (workflow_id varchar(36) REFERENCES workflow_entity(id) ON DELETE CASCADE, project text, PRIMARY KEY (workflow_id, project));
       CREATE TABLE execution_entity (id serial PRIMARY KEY, workflow_id varchar(36) REFERENCES workflow_entity(id), status text, started timestamptz);
       INSERT INTO workflow_entity SELECT 'wf-' || g, 'Workflow ' || g, g % 2 = 0, json_build_array(json_build_object('type', 'webhook', 'n', g)), '{}'
         FROM generate_series(1, 200) g;
       INSERT INTO credentials_entity SELECT 'cred-' || g, 'Cred ' || g, 'httpBasicAuth', encode(sha256(g::text::bytea), 'base64') FROM generate_series(1, 30) g;
       INSERT INTO shared_workflow SELECT 'wf-' || g, 'personal' FROM generate_series(1, 200) g;
       INSERT INTO execution_entity (workflow_id, status, started) SELECT 'wf-' || (1 + g % 200), 'success', timestamptz '2024-05-01' + g * interval '1 second'
         FROM generate_series(1, 5000) g;`,
      'workflows',
    );
  });
  after(() => pg?.stop());

  test('round trip: dump the tool database, drop it, create it empty and load: every row back', async () => {
    const rows = await snapshot(pg);
    const r = await runScript('workflow-backup', env());
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /dumping database 'workflows' \(pg_dump -Fc\)/);
    const [folder] = backupEntries(backupDir);
    assert.match(fs.readFileSync(path.join(backupDir, folder, 'database.tsv'), 'utf8'), /^workflows\twf\tUTF8/);
    await pg.psql('DROP DATABASE workflows');
    const rr = await runScript('workflow-restore', { ...pg.env(), PGDATABASE: 'workflows', BACKUP_DIR: backupDir });
    assert.equal(rr.code, 0, describeRun(rr));
    assert.deepEqual(await snapshot(pg), rows);
    assert.equal(await pg.psql(`SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'workflows'`), 'wf');
    const again = await runScript('workflow-restore', { ...pg.env(), PGDATABASE: 'workflows', BACKUP_DIR: backupDir });
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /database 'workflows' already exists/);
    const replace = await runScript('workflow-restore', { ...pg.env(), PGDATABASE: 'workflows', BACKUP_DIR: backupDir, RESTORE_DROP_EXISTING: 'true' });
    assert.equal(replace.code, 0, describeRun(replace));
    assert.deepEqual(await snapshot(pg), rows);
  });

  test('a bad dump with RESTORE_DROP_EXISTING=true leaves the live database intact (verified in a scratch database first); no SHA256SUMS is refused unless allowed', async () => {
    await pg.psql(`INSERT INTO workflow_entity VALUES ('wf-live', 'created after the backup', true, '[]', '{}')`, 'workflows');
    const live = await snapshot(pg);
    const [folder] = backupEntries(backupDir);
    const root = tempDir('wf-bad').dir;
    const copy = (name: string, edit: (dir: string) => void, rewriteSums: boolean): string => {
      const dir = path.join(root, name);
      fs.cpSync(path.join(backupDir, folder), dir, { recursive: true });
      edit(dir);
      if (rewriteSums) execFileSync('sh', ['-c', 'find . -type f ! -name SHA256SUMS -exec sha256sum {} + > SHA256SUMS'], { cwd: dir });
      return dir;
    };
    const dumpOf = (dir: string): string => path.join(dir, 'workflow-db.dump');
    const cut = (f: string): void => fs.writeFileSync(f, fs.readFileSync(f).subarray(0, Math.floor(fs.statSync(f).size * 0.6)));
    const cases: [string, string, RegExp][] = [
      ['truncated dump', copy('cut', (d) => cut(dumpOf(d)), true), /loading the dump of 'workflows' into the scratch database \(dropped again; 'workflows' is untouched\)/],
      ['not a dump', copy('garbage', (d) => fs.writeFileSync(dumpOf(d), 'garbage'), true), /unreadable \(pg_restore --list\)/],
      ['no SHA256SUMS', copy('nosums', (d) => fs.rmSync(path.join(d, 'SHA256SUMS')), false), /has no SHA256SUMS.*RESTORE_ALLOW_UNVERIFIED=true/],
    ];
    for (const [name, dir, error] of cases) {
      const r = await runScript('workflow-restore', { ...pg.env(), PGDATABASE: 'workflows', BACKUP_DIR: backupDir, RESTORE_FROM: dir, RESTORE_DROP_EXISTING: 'true' });
      assert.notEqual(r.code, 0, `${name}\n${describeRun(r)}`);
      assert.match(r.stderr, error, `${name}\n${describeRun(r)}`);
      assert.deepEqual(await snapshot(pg), live, `${name}: live data changed`);
    }
    const allowed = await runScript('workflow-restore', {
      ...pg.env(), PGDATABASE: 'workflows', BACKUP_DIR: backupDir, RESTORE_FROM: path.join(root, 'nosums'), RESTORE_DROP_EXISTING: 'true', RESTORE_ALLOW_UNVERIFIED: 'true',
    });
    assert.equal(allowed.code, 0, describeRun(allowed));
    assert.equal(await pg.psql(`SELECT count(*) FROM workflow_entity WHERE id = 'wf-live'`, 'workflows'), '0', 'replaced by the backup');
  });

  test('failure (wrong password, server down) and retention', async () => {
    const old = path.join(backupDir, '2020-01-01T000000Z');
    fs.mkdirSync(old);
    fs.writeFileSync(path.join(old, 'workflow-db.dump'), 'old');
    touchDaysAgo(old, 8);
    const hashes = treeHashes(backupDir);
    const bad = await runScript('workflow-backup', { ...env(), PGPASSWORD: 'nope-wrong' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /connection check: authentication failed for user 'postgres'/);
    assert.ok(!bad.stderr.includes('nope-wrong'));
    assert.deepEqual(treeHashes(backupDir), hashes);
    const ok = await runScript('workflow-backup', env());
    assert.equal(ok.code, 0, describeRun(ok));
    assert.ok(!fs.existsSync(old));
    const hashes2 = treeHashes(backupDir);
    pg.stop();
    const down = await runScript('workflow-backup', env());
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /PostgreSQL server unreachable at 127\.0\.0\.1:\d+\/workflows/);
    assert.deepEqual(treeHashes(backupDir), hashes2);
  });
});

const STUB_CLI = `#!${process.execPath}
// stub workflow CLI: records argv, emulates export:* / import:* with files
const fs = require('node:fs');
const args = process.argv.slice(2);
fs.appendFileSync(process.env.WF_STUB_LOG, JSON.stringify(args) + '\\n');
const opt = (name) => (args.find((a) => a.startsWith('--' + name + '=')) || '').split('=').slice(1).join('=');
const store = process.env.WF_STUB_STORE;
const [cmd] = args;
if (process.env.WF_STUB_FAIL === cmd) { console.error('Error: There was an error exporting: connect ECONNREFUSED 127.0.0.1:5432'); process.exit(1); }
// n8n 1.68.0 on an instance without any (run here against the real n8n: exit 1, no file written, these two lines).
if (process.env.WF_STUB_NONE === cmd) { const kind = cmd.split(':')[1].replace(/^workflow$/, 'workflows'); console.log('Error exporting ' + kind + '. See log messages for details.'); console.log('No ' + kind + ' found with specified filters'); process.exit(1); }
if (cmd === 'export:workflow' || cmd === 'export:credentials') {
  const kind = cmd.split(':')[1];
  fs.copyFileSync(store + '/' + kind + '.json', opt('output'));
  console.log('Successfully exported ' + kind);
} else if (cmd === 'import:workflow' || cmd === 'import:credentials') {
  const kind = cmd.split(':')[1];
  fs.copyFileSync(opt('input'), store + '/' + kind + '.json');
  console.log('Successfully imported ' + kind);
} else { console.error('unknown command ' + cmd); process.exit(2); }
`;

describe('workflow backup, cli mode (stub workflow CLI)', () => {
  test('export:workflow/export:credentials into a dated folder, import:credentials then import:workflow on restore', async () => {
    const bin = tempDir('wf-cli').dir;
    const cli = path.join(bin, 'wf-cli');
    fs.writeFileSync(cli, STUB_CLI, { mode: 0o755 });
    const store = tempDir('wf-store').dir;
    const workflows = JSON.stringify([{ id: '1', name: 'Daily report', nodes: [] }, { id: '2', name: 'Webhook', nodes: [] }]);
    const credentials = JSON.stringify([{ id: 'c1', name: 'SMTP', data: 'U2FsdGVkX1-encrypted' }]);
    fs.writeFileSync(path.join(store, 'workflow.json'), workflows);
    fs.writeFileSync(path.join(store, 'credentials.json'), credentials);
    const log = path.join(tempDir('wf-log').dir, 'calls.jsonl');
    const backupDir = tempDir('wf-cli-backups').dir;
    const env = { BACKUP_DIR: backupDir, RETENTION_DAYS: '7', WF_BACKUP_MODE: 'cli', WF_CLI: cli, WF_STUB_LOG: log, WF_STUB_STORE: store };
    const calls = (): string[][] => fs.readFileSync(log, 'utf8').trim().split('\n').map((l) => JSON.parse(l));

    const r = await runScript('workflow-backup', env);
    assert.equal(r.code, 0, describeRun(r));
    const [folder] = backupEntries(backupDir);
    const dir = path.join(backupDir, folder);
    assert.equal(fs.readFileSync(path.join(dir, 'workflows.json'), 'utf8'), workflows);
    assert.equal(fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8'), credentials);
    const partial = calls()[0][2].replace(/^--output=/, '').replace(/\/workflows\.json$/, '');
    assert.match(partial, /\/\.partial-/);
    assert.deepEqual(calls(), [
      ['export:workflow', '--all', `--output=${partial}/workflows.json`],
      ['export:credentials', '--all', `--output=${partial}/credentials.json`],
    ]);
    assert.ok(!calls().flat().includes('--decrypted'), 'credentials are never exported decrypted');

    fs.rmSync(path.join(store, 'workflow.json'));
    fs.rmSync(path.join(store, 'credentials.json'));
    const rr = await runScript('workflow-restore', { ...env });
    assert.equal(rr.code, 0, describeRun(rr));
    assert.deepEqual(calls().slice(2), [
      ['import:credentials', `--input=${dir}/credentials.json`],
      ['import:workflow', `--input=${dir}/workflows.json`],
    ]);
    assert.equal(fs.readFileSync(path.join(store, 'workflow.json'), 'utf8'), workflows);
    assert.equal(fs.readFileSync(path.join(store, 'credentials.json'), 'utf8'), credentials);

    // failing export: clear message, nothing written, earlier backup untouched
    const hashes = treeHashes(backupDir);
    const bad = await runScript('workflow-backup', { ...env, WF_STUB_FAIL: 'export:credentials' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /credentials export \(.*wf-cli export:credentials\) failed: Error: There was an error exporting/);
    assert.deepEqual(treeHashes(backupDir), hashes);
    assert.deepEqual(fs.readdirSync(backupDir).filter((n) => n.startsWith('.partial')), []);
    const missing = await runScript('workflow-backup', { ...env, WF_CLI: 'no-such-cli' });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /workflow CLI 'no-such-cli' not found/);
  });

  test('an instance without credentials or workflows (the tool refuses an export of nothing) is backed up as empty lists its import reads', async () => {
    const bin = tempDir('wf-cli-none').dir;
    const cli = path.join(bin, 'wf-cli');
    fs.writeFileSync(cli, STUB_CLI, { mode: 0o755 });
    const store = tempDir('wf-store-none').dir;
    const workflows = JSON.stringify([{ id: '1', name: 'Daily report', nodes: [] }]);
    fs.writeFileSync(path.join(store, 'workflow.json'), workflows);
    const log = path.join(tempDir('wf-log-none').dir, 'calls.jsonl');
    const backupDir = tempDir('wf-cli-backups-none').dir;
    const env = { BACKUP_DIR: backupDir, RETENTION_DAYS: '7', WF_BACKUP_MODE: 'cli', WF_CLI: cli, WF_STUB_LOG: log, WF_STUB_STORE: store };

    const r = await runScript('workflow-backup', { ...env, WF_STUB_NONE: 'export:credentials' });
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout + r.stderr, /the tool has no credentials: an empty list/);
    const [folder] = backupEntries(backupDir);
    const dir = path.join(backupDir, folder);
    assert.equal(fs.readFileSync(path.join(dir, 'workflows.json'), 'utf8'), workflows);
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(dir, 'credentials.json'), 'utf8')), []);
    const rr = await runScript('workflow-restore', env);
    assert.equal(rr.code, 0, describeRun(rr));
    assert.deepEqual(JSON.parse(fs.readFileSync(path.join(store, 'credentials.json'), 'utf8')), []);

    // A fresh instance: no workflows either.
    const again = await runScript('workflow-backup', { ...env, WF_STUB_NONE: 'export:workflow' });
    assert.equal(again.code, 0, describeRun(again));
    assert.match(again.stdout + again.stderr, /the tool has no workflows: an empty list/);
    // Any other failure of the export still fails the backup.
    const bad = await runScript('workflow-backup', { ...env, WF_STUB_FAIL: 'export:workflow' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /workflow export \(.*wf-cli export:workflow\) failed: Error: There was an error exporting/);
  });
});
