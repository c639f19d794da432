// Shared helpers for the backup script tests: binary discovery (skip outside CI, fail in CI),
// free ports, temporary directories, throw-away PostgreSQL and Redis servers on 127.0.0.1,
// a tiny RESP client, and running a backup script with a controlled environment.
//
// Every server and temporary directory is registered in a cleanup list that also runs on
// process exit, so servers are stopped even when a test fails or throws.
import assert from 'node:assert/strict';
import { suiteNeeding } from '../skip';
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { backupScript } from '../../backups/scripts';

export const REPO_ROOT = path.resolve(__dirname, '..', '..');
export const SCRIPTS_DIR = path.join(REPO_ROOT, 'backups', 'scripts');

// ---------------------------------------------------------------------------------------------
// cleanup registry
const cleanups = new Map<number, () => void>();
let nextCleanup = 1;
function registerCleanup(fn: () => void): number {
  const id = nextCleanup++;
  cleanups.set(id, fn);
  return id;
}
function runCleanup(id: number): void {
  const fn = cleanups.get(id);
  cleanups.delete(id);
  if (fn) {
    try {
      fn();
    } catch {
      /* best effort */
    }
  }
}
process.on('exit', () => {
  for (const id of [...cleanups.keys()].reverse()) runCleanup(id);
});
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    for (const id of [...cleanups.keys()].reverse()) runCleanup(id);
    process.exit(130);
  });
}

// ---------------------------------------------------------------------------------------------
// binaries: skip with a clear message outside CI, fail in CI
export const isCI = (): boolean => {
  const v = process.env.CI;
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
};

export function which(name: string, extraDirs: string[] = []): string | undefined {
  const dirs = [...extraDirs, ...(process.env.PATH ?? '').split(path.delimiter)].filter(Boolean);
  for (const d of dirs) {
    const p = path.join(d, name);
    try {
      fs.accessSync(p, fs.constants.X_OK);
      if (fs.statSync(p).isFile()) return p;
    } catch {
      /* next */
    }
  }
  return undefined;
}

/** Directory of the PostgreSQL server binaries (initdb, pg_ctl): $PG_BINDIR or the newest /usr/lib/postgresql/<v>/bin. */
export function pgBinDir(): string | undefined {
  if (process.env.PG_BINDIR) return process.env.PG_BINDIR;
  const base = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = fs.readdirSync(base).filter((v) => fs.existsSync(path.join(base, v, 'bin', 'initdb')));
  } catch {
    /* none */
  }
  versions.sort((a, b) => Number(b) - Number(a));
  if (versions.length) return path.join(base, versions[0], 'bin');
  const initdb = which('initdb');
  return initdb ? path.dirname(initdb) : undefined;
}

export interface BinaryNeed {
  name: string;
  /** Debian package that provides it */
  apt: string;
  /** extra directories to look in (e.g. the PostgreSQL bin dir) */
  dirs?: string[];
}

export function missingBinaries(needs: BinaryNeed[]): BinaryNeed[] {
  return needs.filter((n) => !which(n.name, n.dirs ?? []));
}

/**
 * For node:test's `skip` option. Outside CI: a message naming the missing binaries and the
 * apt-get command. In CI (CI=true): never skip (returns false) - call `assertBinaries` in a
 * before() hook so the tests fail with the same message.
 */
export function skipUnless(needs: BinaryNeed[]): string | false {
  const missing = missingBinaries(needs);
  if (!missing.length || isCI()) return false;
  return missingMessage(missing);
}

export function assertBinaries(needs: BinaryNeed[]): void {
  const missing = missingBinaries(needs);
  if (missing.length) throw new Error(`${missingMessage(missing)} (CI is set, so this is a failure, not a skip)`);
}

function missingMessage(missing: BinaryNeed[]): string {
  const pkgs = [...new Set(missing.map((m) => m.apt))].join(' ');
  return `missing binary ${missing.map((m) => m.name).join(', ')}; install with: apt-get install -y ${pkgs}`;
}

export const PG_NEEDS = (): BinaryNeed[] => {
  const dir = pgBinDir();
  const dirs = dir ? [dir] : [];
  return [
    { name: 'initdb', apt: 'postgresql', dirs },
    { name: 'pg_ctl', apt: 'postgresql', dirs },
    { name: 'psql', apt: 'postgresql', dirs },
    { name: 'pg_dump', apt: 'postgresql', dirs },
    { name: 'pg_dumpall', apt: 'postgresql', dirs },
    { name: 'pg_restore', apt: 'postgresql', dirs },
  ];
};
export const REDIS_NEEDS: BinaryNeed[] = [
  { name: 'redis-server', apt: 'redis-server' },
  { name: 'redis-cli', apt: 'redis-server' },
];
export const SQLITE_NEEDS: BinaryNeed[] = [{ name: 'sqlite3', apt: 'sqlite3' }];
export const GIT_NEEDS: BinaryNeed[] = [{ name: 'git', apt: 'git' }];
export const CURL_NEEDS: BinaryNeed[] = [{ name: 'curl', apt: 'curl' }];

// ---------------------------------------------------------------------------------------------
// ports, directories, files
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A temporary directory removed at the end of the process (or earlier by calling the returned remove()). */
export function tempDir(prefix: string): { dir: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `bk-${prefix}-`));
  const id = registerCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, remove: () => runCleanup(id) };
}

/** Set the modification time of a path like `touch -d "<n> days ago"`. */
export function touchDaysAgo(p: string, days: number): void {
  execFileSync('touch', ['-d', `${days} days ago`, p]);
}

/**
 * Two dated folders in a backup directory for the retention tests: `old` 8 days old (deleted by
 * RETENTION_DAYS=7) and `young` 6 days old (kept), each holding `file` (a path inside the folder).
 */
export function agedBackups(backupDir: string, file: string, content = 'old'): { old: string; young: string } {
  const old = path.join(backupDir, '2020-01-01T040000Z');
  const young = path.join(backupDir, '2020-01-02T040000Z');
  for (const p of [old, young]) {
    fs.mkdirSync(path.dirname(path.join(p, file)), { recursive: true });
    fs.writeFileSync(path.join(p, file), content);
  }
  touchDaysAgo(old, 8);
  touchDaysAgo(young, 6);
  return { old, young };
}

/** The stamp that fixedStampDate's `date` answers. */
export const FIXED_STAMP = '2030-01-01T000000Z';

/**
 * A folder holding a `date` that gives every backup the same dated folder name (FIXED_STAMP), as two
 * CronJob runs started in the same second get, and runs the real date otherwise: put it first on PATH.
 */
export function fixedStampDate(): string {
  const bin = tempDir('fixed-date').dir;
  fs.writeFileSync(path.join(bin, 'date'), `#!/bin/sh\ncase "$*" in *%H%M%SZ*) echo ${FIXED_STAMP} ;; *) exec /bin/date "$@" ;; esac\n`, { mode: 0o755 });
  return bin;
}

/** Two backups published under one stamp: both folders there, neither holding the other (or a partial folder). */
export function assertTwoFoldersOneStamp(dir: string): void {
  assert.deepEqual(fs.readdirSync(dir).sort(), [FIXED_STAMP, `${FIXED_STAMP}-2`]);
  for (const e of fs.readdirSync(dir)) {
    assert.ok(!fs.readdirSync(path.join(dir, e)).some((inner) => inner.startsWith('.partial') || inner.startsWith(FIXED_STAMP.slice(0, 4))), `${e} holds another backup`);
  }
}

/** Relative path -> sha256 of every file under dir (to prove earlier backups stay byte-identical). */
export function treeHashes(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out[path.relative(dir, p)] = createHash('sha256').update(fs.readFileSync(p)).digest('hex');
    }
  };
  walk(dir);
  return out;
}

/** Dated backup folders / files (names starting with YYYY-MM-DDT) in a backup directory, sorted. */
export function backupEntries(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((n) => /^\d{4}-\d{2}-\d{2}T/.test(n))
    .sort();
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------
// running scripts
export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The PATH the scripts see: the PostgreSQL bin dir first (pg_dump matching the server), then the normal PATH. */
export function scriptPath(extra: string[] = []): string {
  const pg = pgBinDir();
  return [...extra, ...(pg ? [pg] : []), process.env.PATH ?? '/usr/bin:/bin'].join(path.delimiter);
}

const joined = new Map<string, string>();
/**
 * The text the CronJob mounts for backups/scripts/<name>.sh (the catalogue's `content`: the script
 * with the shared prelude joined in), written once per test process to a private temp file.
 */
export function joinedScript(name: string): string {
  let file = joined.get(name);
  if (!file) {
    file = path.join(tempDir('joined-script').dir, `${name}.sh`);
    fs.writeFileSync(file, backupScript(`${name}.sh`).content, { mode: 0o555 });
    joined.set(name, file);
  }
  return file;
}

/**
 * Run what the CronJob runs for backups/scripts/<name>.sh (prelude joined in) with /bin/sh (dash on Debian: proves the scripts are POSIX sh)
 * and only the given environment (plus PATH/HOME/LANG), like a CronJob container would.
 */
export function runScript(
  name: string,
  env: Record<string, string | undefined>,
  opts: { pathPrepend?: string[]; timeoutMs?: number } = {},
): Promise<RunResult> {
  const file = joinedScript(name);
  const cleanEnv: Record<string, string> = {
    PATH: scriptPath(opts.pathPrepend),
    HOME: env.HOME ?? os.tmpdir(),
    LANG: 'C.UTF-8',
  };
  for (const [k, v] of Object.entries(env)) if (v !== undefined) cleanEnv[k] = v;
  return new Promise((resolve, reject) => {
    const child = spawn('sh', [file], { env: cleanEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * Start what the CronJob runs for backups/scripts/<name>.sh in its own process group, without waiting:
 * `done` resolves when it ends, `kill` ends it and everything it started (SIGKILL, as a lost pod).
 */
export function startScript(name: string, env: Record<string, string>, pathPrepend: string[] = []): { done: Promise<RunResult>; kill: () => void } {
  const child = spawn('sh', [joinedScript(name)], { env: { PATH: scriptPath(pathPrepend), HOME: os.tmpdir(), LANG: 'C.UTF-8', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const done = new Promise<RunResult>((resolve) => child.on('close', (code) => resolve({ code, stdout, stderr })));
  return { done, kill: () => process.kill(-child.pid!, 'SIGKILL') };
}

/**
 * A PATH folder holding a `name` that, when its arguments match the shell pattern `when`, stops at a gate:
 * `reached` appears, and it waits until release() (or until it is killed, as a lost pod is); `after`: the real
 * command runs first, then it waits (what it wrote stays), otherwise it waits first. Other calls run the real one.
 */
export function gatedCommand(name: string, when: string, order: 'before' | 'after'): { bin: string; reached: string; release: () => void } {
  const bin = tempDir(`gated-${name}`).dir;
  const gate = path.join(bin, 'gate');
  const reached = path.join(bin, 'reached');
  fs.writeFileSync(gate, '');
  const real = which(name, pgBinDir() ? [pgBinDir()!] : []);
  if (!real) throw new Error(`${name} not found`);
  const wait = `: > ${reached}; while [ -e ${gate} ]; do sleep 0.1; done`;
  const body = order === 'after' ? `"${real}" "$@" || exit $?; ${wait}; exit 0` : `${wait}; exec "${real}" "$@"`;
  fs.writeFileSync(path.join(bin, name), `#!/bin/sh
case "$*" in ${when}) ${body} ;; esac
exec "${real}" "$@"
`, { mode: 0o755 });
  return { bin, reached, release: () => fs.rmSync(gate, { force: true }) };
}

/** Wait until a file exists (a gate in a PATH wrapper says it was reached). */
export async function waitForFile(file: string, ms = 30_000): Promise<void> {
  const end = Date.now() + ms;
  while (!fs.existsSync(file)) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${file}`);
    await sleep(50);
  }
}

/** Assert-friendly description of a script run. */
export function describeRun(r: RunResult): string {
  return `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
}

export function run(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${cmd} ${args.join(' ')} failed: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
    if (opts.input !== undefined) child.stdin?.end(opts.input);
  });
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL
export interface PgServer {
  host: string;
  port: number;
  user: string;
  password: string;
  dir: string;
  /** libpq environment for scripts and clients */
  env(): Record<string, string>;
  psql(sql: string, db?: string): Promise<string>;
  stop(): void;
}

function asPostgresUser(args: string[]): [string, string[]] {
  if (process.getuid && process.getuid() === 0) return ['runuser', ['-u', 'postgres', '--', ...args]];
  return [args[0], args.slice(1)];
}

/** initdb + pg_ctl start on a free port, loopback only, as the postgres user when we are root (`settings`: more -c name=value). */
export async function startPostgres(password = 'test-secret-pw', settings: string[] = []): Promise<PgServer> {
  const bin = pgBinDir();
  if (!bin) throw new Error('PostgreSQL server binaries not found (apt-get install -y postgresql)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bk-pg-'));
  const data = path.join(dir, 'data');
  const pwfile = path.join(dir, 'pw');
  fs.writeFileSync(pwfile, password + '\n', { mode: 0o600 });
  if (process.getuid && process.getuid() === 0) execFileSync('chown', ['-R', 'postgres:', dir]);
  const port = await freePort();
  let started = false;
  const stopSync = (): void => {
    if (started) {
      try {
        const [c, a] = asPostgresUser([path.join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
        execFileSync(c, a, { stdio: 'ignore' });
      } catch {
        /* already down */
      }
      started = false;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const id = registerCleanup(stopSync);
  const [c1, a1] = asPostgresUser([
    path.join(bin, 'initdb'), '-D', data, '-U', 'postgres', '-A', 'scram-sha-256', `--pwfile=${pwfile}`, '-N', '-E', 'UTF8', '--locale=C.UTF-8',
  ]);
  execFileSync(c1, a1, { stdio: 'pipe' });
  const opts = [
    '-c listen_addresses=127.0.0.1',
    `-c port=${port}`,
    `-c unix_socket_directories=${dir}`,
    '-c fsync=off',
    '-c synchronous_commit=off',
    '-c full_page_writes=off',
    '-c max_connections=50',
    ...settings.map((x) => `-c ${x}`),
  ].join(' ');
  const [c2, a2] = asPostgresUser([path.join(bin, 'pg_ctl'), '-D', data, '-w', '-t', '60', '-l', path.join(dir, 'server.log'), '-o', opts, 'start']);
  started = true;
  execFileSync(c2, a2, { stdio: 'pipe' });
  const env = (): Record<string, string> => ({ PGHOST: '127.0.0.1', PGPORT: String(port), PGUSER: 'postgres', PGPASSWORD: password });
  return {
    host: '127.0.0.1',
    port,
    user: 'postgres',
    password,
    dir,
    env,
    psql: (sql, db = 'postgres') =>
      run(path.join(bin, 'psql'), ['-X', '-A', '-t', '-q', '-v', 'ON_ERROR_STOP=1', '-d', db, '-c', sql], {
        env: { ...process.env, ...env(), PGCONNECT_TIMEOUT: '5' },
      }).then((s) => s.replace(/\n$/, '')),
    stop: () => runCleanup(id),
  };
}

// ---------------------------------------------------------------------------------------------
// full disks
/**
 * A tmpfs of `size` (e.g. "1m") on a fresh folder, for runs against a full disk: `fill()` writes a file
 * (.fill) until the tmpfs is full. Needs root (mount); where it cannot be mounted the test is skipped
 * with the reason, and under CI=true it fails instead. Unmounted at the end of the test.
 */
export function tmpfsFor(t: { skip: (m: string) => void; after: (fn: () => void) => void }, size: string): { dir: string; fill: () => void } | undefined {
  const dir = tempDir('tmpfs').dir;
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    const why = `cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN): ${String((e as Error).message).split('\n')[0]}`;
    if (isCI()) throw new Error(`${why} (CI is set, so this is a failure, not a skip)`);
    t.skip(why);
    return undefined;
  }
  t.after(() => {
    // a child of the script may still hold the folder open for a moment after the script ended
    for (let i = 0; i < 50; i++) {
      try {
        execFileSync('umount', [dir], { stdio: 'pipe' });
        return;
      } catch {
        execFileSync('sleep', ['0.1']);
      }
    }
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  });
  const fill = (): void => {
    execFileSync('sh', ['-c', 'dd if=/dev/zero of="$1/.fill" bs=4k 2>/dev/null; true', 'sh', dir]);
  };
  return { dir, fill };
}

/** Runs `body` (shell code) with the shared prelude of the backup scripts sourced, as `sh -c`; args are $1... */
export function withPrelude(body: string, args: string[], opts: { input?: string | Buffer; pathPrepend?: string[]; env?: Record<string, string> } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = spawn('sh', ['-c', `SCRIPT=test; . "${path.join(SCRIPTS_DIR, 'lib', 'prelude.sh')}"; ${body}`, 'sh', ...args], {
      env: { PATH: scriptPath(opts.pathPrepend), HOME: os.tmpdir(), LANG: 'C.UTF-8', ...opts.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(opts.input ?? '');
  });
}

// ---------------------------------------------------------------------------------------------
// Redis: a tiny RESP2 client (enough for tests) and a server on a free port
export type RespValue = string | number | null | RespValue[] | Error;

export class Resp {
  private buf = Buffer.alloc(0);
  private waiting: { resolve: (v: RespValue) => void }[] = [];
  private constructor(private sock: net.Socket) {
    sock.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.drain();
    });
    sock.on('error', () => {
      /* reported through pending promises */
    });
    sock.on('close', () => {
      for (const w of this.waiting.splice(0)) w.resolve(new Error('connection closed'));
    });
  }

  static connect(port: number, password?: string): Promise<Resp> {
    return new Promise((resolve, reject) => {
      const sock = net.connect({ host: '127.0.0.1', port });
      sock.once('error', reject);
      sock.once('connect', async () => {
        sock.removeListener('error', reject);
        const c = new Resp(sock);
        if (password) {
          const r = await c.send(['AUTH', password]);
          if (r instanceof Error) return reject(r);
        }
        resolve(c);
      });
    });
  }

  private parse(off: number): [RespValue, number] | undefined {
    const b = this.buf;
    const eol = b.indexOf('\r\n', off);
    if (eol < 0) return undefined;
    const type = String.fromCharCode(b[off]);
    const line = b.toString('utf8', off + 1, eol);
    const next = eol + 2;
    switch (type) {
      case '+':
        return [line, next];
      case '-':
        return [new Error(line), next];
      case ':':
        return [Number(line), next];
      case '$': {
        const len = Number(line);
        if (len < 0) return [null, next];
        if (b.length < next + len + 2) return undefined;
        return [b.toString('utf8', next, next + len), next + len + 2];
      }
      case '*': {
        const n = Number(line);
        if (n < 0) return [null, next];
        const arr: RespValue[] = [];
        let p = next;
        for (let i = 0; i < n; i++) {
          const r = this.parse(p);
          if (!r) return undefined;
          arr.push(r[0]);
          p = r[1];
        }
        return [arr, p];
      }
      default:
        throw new Error(`bad RESP type ${type}`);
    }
  }

  private drain(): void {
    while (this.waiting.length) {
      const r = this.parse(0);
      if (!r) return;
      this.buf = this.buf.subarray(r[1]);
      this.waiting.shift()!.resolve(r[0]);
    }
  }

  private encode(args: (string | number)[]): string {
    let s = `*${args.length}\r\n`;
    for (const a of args) {
      const v = String(a);
      s += `$${Buffer.byteLength(v)}\r\n${v}\r\n`;
    }
    return s;
  }

  /** Send one command; error replies are returned as Error values. */
  send(args: (string | number)[]): Promise<RespValue> {
    return new Promise((resolve) => {
      this.waiting.push({ resolve });
      this.sock.write(this.encode(args));
    });
  }

  /** Send one command; error replies throw. */
  async call(...args: (string | number)[]): Promise<RespValue> {
    const r = await this.send(args);
    if (r instanceof Error) throw r;
    return r;
  }

  /** Pipeline many commands in one write. */
  pipeline(cmds: (string | number)[][]): Promise<RespValue[]> {
    const ps = cmds.map(
      (c) =>
        new Promise<RespValue>((resolve) => {
          this.waiting.push({ resolve });
        }),
    );
    this.sock.write(cmds.map((c) => this.encode(c)).join(''));
    return Promise.all(ps);
  }

  close(): void {
    this.sock.destroy();
  }
}

export interface RedisServer {
  port: number;
  password: string;
  dataDir: string;
  client(): Promise<Resp>;
  env(): Record<string, string>;
  /** stop the server (SHUTDOWN NOSAVE, then SIGKILL if needed) */
  stop(): Promise<void>;
  /** start (again) on the same data dir and port */
  start(): Promise<void>;
}

export async function startRedis(password = 'redis-test-pw', extraArgs: string[] = []): Promise<RedisServer> {
  const { dir: dataDir } = tempDir('redis');
  const logFile = path.join(tempDir('redis-log').dir, 'redis.log');
  const port = await freePort();
  let child: ChildProcess | undefined;
  const killSync = (): void => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
  };
  registerCleanup(killSync);
  const server: RedisServer = {
    port,
    password,
    dataDir,
    client: () => Resp.connect(port, password),
    env: () => ({ REDIS_HOST: '127.0.0.1', REDIS_PORT: String(port), REDISCLI_AUTH: password }),
    async start() {
      const log = fs.openSync(logFile, 'a');
      child = spawn(
        'redis-server',
        [
          '--port', String(port), '--bind', '127.0.0.1', '--dir', dataDir, '--requirepass', password, '--save', '', '--appendonly', 'no', '--daemonize', 'no',
          // redis-cli --rdb is a diskless replica sync; the default 5 s wait for more replicas only slows the tests down
          '--repl-diskless-sync-delay', '0',
          ...extraArgs,
        ],
        { stdio: ['ignore', log, log] },
      );
      fs.closeSync(log);
      const deadline = Date.now() + 15_000;
      for (;;) {
        try {
          const c = await Resp.connect(port, password);
          const pong = await c.send(['PING']);
          c.close();
          if (pong === 'PONG') return;
        } catch {
          /* not yet */
        }
        if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
        if (Date.now() > deadline) throw new Error('redis-server did not start');
        await sleep(50);
      }
    },
    async stop() {
      if (!child || child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child!.once('exit', () => r()));
      try {
        const c = await Resp.connect(port, password);
        c.send(['SHUTDOWN', 'NOSAVE']).catch(() => undefined);
      } catch {
        child.kill('SIGKILL');
      }
      const t = setTimeout(() => child?.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
  await server.start();
  return server;
}

/**
 * `describe` of a suite that needs binaries, as node:test's `describe(name, { skip }, fn)`, but a
 * skipped suite is counted: node:test (Node 20) leaves a skipped `describe` out of the summary's
 * "skipped", so the suite becomes one skipped test naming what is missing (test/skip.ts).
 */
export function describeNeeding(name: string, opts: { skip: string | false }, fn: () => void): void {
  suiteNeeding(name, fn, opts.skip || undefined);
}

// ---------------------------------------------------------------------------------------------
// the mc image's tools
/**
 * The pinned mc image (minio/mc, Dockerfile.release: FROM ubi9/ubi-micro, mc copied in) has a shell
 * and coreutils but no sed, awk, grep or find: a folder holding exactly that (sh, these coreutils
 * and the given mc), to be the whole PATH of a script run as in that image.
 */
export const MC_IMAGE_COREUTILS = ['date', 'tr', 'cut', 'sort', 'head', 'tail', 'wc', 'du', 'df', 'sha256sum', 'mktemp', 'mkdir', 'rm', 'mv', 'cp', 'cat',
  'sync', 'ls', 'basename', 'dirname', 'stat', 'touch', 'env', 'sleep', 'chmod', 'printf', 'test', '[', 'true', 'false', 'id', 'uname', 'tee', 'ln'];
export function mcImagePath(mc: string): string {
  const bin = tempDir('ubi-micro-path').dir;
  fs.symlinkSync('/bin/sh', path.join(bin, 'sh'));
  for (const c of MC_IMAGE_COREUTILS) {
    const found = ['/usr/bin', '/bin'].map((d) => path.join(d, c)).find((p) => fs.existsSync(p));
    if (found) fs.symlinkSync(found, path.join(bin, c));
  }
  fs.symlinkSync(mc, path.join(bin, 'mc'));
  for (const absent of ['sed', 'awk', 'grep', 'find', 'gzip']) {
    if (fs.existsSync(path.join(bin, absent))) throw new Error(`${absent} is not in the mc image`);
  }
  return bin;
}
