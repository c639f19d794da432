// postgres-backup.sh / postgres-restore.sh against a real PostgreSQL server (initdb + pg_ctl on 127.0.0.1).
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { gunzipSync, gzipSync } from 'node:zlib';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import {
  PG_NEEDS, assertBinaries, backupEntries, describeRun, pgBinDir, runScript, skipUnless, describeNeeding, startPostgres, tempDir,
  touchDaysAgo, treeHashes, sleep, tmpfsFor, type PgServer,
} from './servers';

const ODD_DB = 'Reports 2024';
const DATABASES = ['shop', 'inventory', ODD_DB];

async function loadData(pg: PgServer): Promise<void> {
  await pg.psql(`CREATE ROLE app LOGIN PASSWORD 'app-pw'`);
  await pg.psql(`CREATE DATABASE shop OWNER app`);
  await pg.psql(`CREATE DATABASE inventory`);
  await pg.psql(`CREATE DATABASE "${ODD_DB}"`);
  await pg.psql(
    `SET ROLE app;
     CREATE TABLE customers (id serial PRIMARY KEY, email text UNIQUE NOT NULL, created timestamptz NOT NULL);
     CREATE TABLE orders (id serial PRIMARY KEY, customer_id int NOT NULL REFERENCES customers(id), note text,
                          item_count int NOT NULL DEFAULT 0, total numeric(12,2) NOT NULL DEFAULT 0);
     CREATE TABLE order_items (id serial PRIMARY KEY, order_id int NOT NULL REFERENCES orders(id) ON DELETE CASCADE,
                               sku text NOT NULL, qty int NOT NULL, price numeric(12,2) NOT NULL);
     INSERT INTO customers (email, created) SELECT 'user' || g || '@example.test', timestamptz '2024-01-01' + g * interval '1 minute'
       FROM generate_series(1, 2000) g;
     INSERT INTO orders (customer_id, note, item_count, total) SELECT 1 + g % 2000, 'order ' || g || E' with \\'quotes\\' and \\ttab', 3, 60
       FROM generate_series(1, 5000) g;
     INSERT INTO order_items (order_id, sku, qty, price) SELECT o, s.sku, s.qty, s.price
       FROM generate_series(1, 5000) o, (VALUES ('a', 1, 10.00), ('b', 2, 20.00), ('c', 3, 30.00)) s(sku, qty, price);
     CREATE VIEW order_totals AS SELECT order_id, sum(price) AS total FROM order_items GROUP BY order_id;`,
    'shop',
  );
  await pg.psql(
    `CREATE TABLE warehouses (id int PRIMARY KEY, name text NOT NULL);
     CREATE TABLE products (id bigserial PRIMARY KEY, name text NOT NULL, attrs jsonb, tags text[]);
     CREATE TABLE stock (warehouse_id int REFERENCES warehouses(id), product_id bigint REFERENCES products(id), qty int NOT NULL,
                         PRIMARY KEY (warehouse_id, product_id));
     INSERT INTO warehouses VALUES (1, 'north'), (2, 'south'), (3, 'ünïcödé');
     INSERT INTO products (name, attrs, tags) SELECT 'product ' || g, jsonb_build_object('n', g, 'even', g % 2 = 0), ARRAY['t' || g % 7, NULL]
       FROM generate_series(1, 3000) g;
     INSERT INTO stock SELECT w, p, (w * p) % 97 FROM generate_series(1, 3) w, generate_series(1, 3000) p;`,
    'inventory',
  );
  await pg.psql(`CREATE TABLE daily (day date PRIMARY KEY, visits int, payload bytea);
     INSERT INTO daily SELECT date '2024-01-01' + g, g * 3, decode(md5(g::text), 'hex') FROM generate_series(0, 365) g;`, ODD_DB);
}

/** Every row of every table in every database, as text, ordered: the thing that must survive. */
async function snapshot(pg: PgServer, dbs: string[]): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const db of dbs) {
    const tables = (await pg.psql(`SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1`, db)).split('\n').filter(Boolean);
    for (const t of tables) out[`${db}.${t}`] = await pg.psql(`SELECT * FROM "${t}" ORDER BY 1, 2`, db);
    out[`${db}.owner`] = await pg.psql(`SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = current_database()`, db);
    out[`${db}.fks`] = await pg.psql(`SELECT conrelid::regclass || ' ' || pg_get_constraintdef(oid) FROM pg_constraint WHERE contype = 'f' ORDER BY 1`, db);
  }
  return out;
}

const needs = PG_NEEDS();
describeNeeding('postgres backup scripts (real PostgreSQL)', { skip: skipUnless(needs) }, () => {
  let pg: PgServer;
  let backupDir: string;
  let env: () => Record<string, string>;

  before(async () => {
    assertBinaries(needs);
    pg = await startPostgres();
    backupDir = tempDir('pg-backups').dir;
    env = () => ({ ...pg.env(), BACKUP_DIR: backupDir, RETENTION_DAYS: '7' });
    await loadData(pg);
  });
  after(() => pg?.stop());

  let firstBackup: string;
  let before1: Record<string, string>;

  test('full round trip: dump, drop every database and the role, feed the dump to psql, every row back', async () => {
    before1 = await snapshot(pg, DATABASES);
    assert.ok(before1['shop.order_items'].split('\n').length === 15000);
    const r = await runScript('postgres-backup', env());
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /full-cluster dump \(pg_dumpall\)/);
    assert.match(r.stdout, /dumping database 'shop'/);
    assert.ok(!r.stdout.includes(pg.password) && !r.stderr.includes(pg.password), 'password printed');
    const entries = backupEntries(backupDir);
    assert.equal(entries.length, 1);
    firstBackup = entries[0];
    const folder = path.join(backupDir, firstBackup);
    assert.ok(fs.existsSync(path.join(folder, 'cluster.sql.gz')));
    assert.ok(fs.existsSync(path.join(folder, 'databases', 'shop.dump')));
    const tsv = fs.readFileSync(path.join(folder, 'databases.tsv'), 'utf8');
    assert.match(tsv, /^shop\.dump\tshop\tapp\tUTF8/m);
    assert.match(tsv, /^db-\d+\.dump\tReports 2024\t/m, 'odd database name mapped to a safe file name');
    assert.ok(!/template/.test(tsv), 'templates excluded');

    for (const db of DATABASES) await pg.psql(`DROP DATABASE "${db}"`);
    await pg.psql(`DROP ROLE app`);
    const rr = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir });
    assert.equal(rr.code, 0, describeRun(rr));
    assert.match(rr.stdout, /full-cluster restore complete/);
    assert.deepEqual(await snapshot(pg, DATABASES), before1);
    assert.equal(await pg.psql(`SELECT rolcanlogin FROM pg_roles WHERE rolname = 'app'`), 't');
  });

  test('full restore refuses to overwrite existing databases unless RESTORE_DROP_EXISTING=true', async () => {
    const r = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /database '.*' already exists/);
    await pg.psql(`INSERT INTO warehouses VALUES (99, 'added after backup')`, 'inventory');
    const r2 = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir, RESTORE_DROP_EXISTING: 'true' });
    assert.equal(r2.code, 0, describeRun(r2));
    assert.deepEqual(await snapshot(pg, DATABASES), before1);
  });

  test('single-database restore: created empty first, then loaded; other databases untouched', async () => {
    await pg.psql(`DROP DATABASE shop`);
    await pg.psql(`INSERT INTO warehouses VALUES (42, 'not in the backup')`, 'inventory');
    const r = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir, RESTORE_DATABASE: 'shop', RESTORE_FROM: firstBackup });
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /creating empty database 'shop' \(owner app/);
    const now = await snapshot(pg, ['shop']);
    for (const [k, v] of Object.entries(now)) assert.equal(v, before1[k], k);
    assert.match(await pg.psql(`SELECT name FROM warehouses WHERE id = 42`, 'inventory'), /not in the backup/);
    const odd = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir, RESTORE_DATABASE: ODD_DB, RESTORE_DROP_EXISTING: 'true' });
    assert.equal(odd.code, 0, describeRun(odd));
    assert.equal((await snapshot(pg, [ODD_DB]))[`${ODD_DB}.daily`], before1[`${ODD_DB}.daily`]);
    const missing = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir, RESTORE_DATABASE: 'nope' });
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /has no dump of database 'nope'/);
  });

  test('a bad backup never touches live data, even with RESTORE_DROP_EXISTING=true: verified (checksums, --list, scratch restore, check) before anything is replaced', async () => {
    await pg.psql(`INSERT INTO warehouses VALUES (77, 'live only, not in any backup')`, 'inventory');
    await pg.psql(`INSERT INTO customers (email, created) VALUES ('live-only@example.test', now())`, 'shop');
    const live = await snapshot(pg, DATABASES);
    const scratchRoot = tempDir('pg-bad').dir;
    const copy = (name: string, edit: (dir: string) => void, sums: 'rewrite' | 'keep' | 'remove'): string => {
      const dir = path.join(scratchRoot, name);
      fs.cpSync(path.join(backupDir, firstBackup), dir, { recursive: true });
      edit(dir);
      if (sums === 'rewrite') execFileSync('sh', ['-c', 'find . -type f ! -name SHA256SUMS -exec sha256sum {} + > SHA256SUMS'], { cwd: dir });
      if (sums === 'remove') fs.rmSync(path.join(dir, 'SHA256SUMS'));
      return dir;
    };
    const truncate = (file: string, fraction: number): void => {
      const b = fs.readFileSync(file);
      fs.writeFileSync(file, b.subarray(0, Math.floor(b.length * fraction)));
    };
    const editSql = (dir: string, f: (sql: string) => string): void => {
      const gz = path.join(dir, 'cluster.sql.gz');
      fs.writeFileSync(gz, gzipSync(f(gunzipSync(fs.readFileSync(gz)).toString('utf8'))));
    };
    const shopDump = (dir: string): string => path.join(dir, 'databases', 'shop.dump');
    const cases: { name: string; single: boolean; dir: string; error: RegExp }[] = [
      { name: 'single: dump cut off after its table of contents (pg_restore fails in the scratch database)', single: true,
        dir: copy('truncated', (d) => truncate(shopDump(d), 0.6), 'rewrite'),
        error: /loading the dump of 'shop' into the scratch database \(dropped again; 'shop' is untouched\)/ },
      { name: 'single: not a dump at all', single: true, dir: copy('garbage', (d) => fs.writeFileSync(shopDump(d), 'not a dump'), 'rewrite'),
        error: /unreadable \(pg_restore --list\).*nothing was changed/ },
      { name: 'single: checksum mismatch', single: true, dir: copy('mismatch', (d) => truncate(shopDump(d), 0.9), 'keep'),
        error: /checksum verification of .* failed.*nothing was changed/ },
      { name: 'single: no SHA256SUMS', single: true, dir: copy('nosums', () => {}, 'remove'),
        error: /has no SHA256SUMS.*set RESTORE_ALLOW_UNVERIFIED=true/ },
      { name: 'full: no SHA256SUMS', single: false, dir: copy('nosums-full', () => {}, 'remove'), error: /has no SHA256SUMS/ },
      { name: 'full: cluster dump cut off (no end marker)', single: false,
        dir: copy('cut', (d) => editSql(d, (sql) => sql.slice(0, Math.floor(sql.length * 0.7))), 'rewrite'), error: /cluster\.sql\.gz .* is incomplete/ },
      { name: 'full: an SQL error while feeding (rolled back: restored databases dropped, originals renamed back)', single: false,
        dir: copy('sqlerror', (d) => editSql(d, (sql) => sql.replace('-- PostgreSQL database cluster dump complete', 'SELECT 1/0;\n-- PostgreSQL database cluster dump complete')), 'rewrite'),
        error: /unexpected error\(s\).*every database that existed before is back as it was \(Reports 2024, inventory, shop\)/ },
      { name: 'full: per-database dump unreadable', single: false, dir: copy('garbage-full', (d) => fs.writeFileSync(shopDump(d), 'x'), 'rewrite'),
        error: /the dump of 'shop' .* is unreadable.*nothing was changed/ },
    ];
    for (const c of cases) {
      const r = await runScript('postgres-restore', {
        ...pg.env(), BACKUP_DIR: backupDir, RESTORE_FROM: c.dir, RESTORE_DROP_EXISTING: 'true', ...(c.single ? { RESTORE_DATABASE: 'shop' } : {}),
      });
      assert.notEqual(r.code, 0, `${c.name}: must fail\n${describeRun(r)}`);
      assert.match(r.stderr, c.error, `${c.name}\n${describeRun(r)}`);
      assert.deepEqual(await snapshot(pg, DATABASES), live, `${c.name}: live data changed`);
      assert.equal(await pg.psql(`SELECT string_agg(datname, ',') FROM pg_database WHERE datname LIKE 'restore\\_%' OR datname LIKE 'pre\\_restore\\_%'`), '', `${c.name}: scratch or set-aside database left behind`);
    }
    // explicitly allowed: a folder without SHA256SUMS restores (and says it was not verified)
    const allowed = await runScript('postgres-restore', {
      ...pg.env(), BACKUP_DIR: backupDir, RESTORE_FROM: path.join(scratchRoot, 'nosums'), RESTORE_DROP_EXISTING: 'true', RESTORE_DATABASE: 'shop', RESTORE_ALLOW_UNVERIFIED: 'true',
    });
    assert.equal(allowed.code, 0, describeRun(allowed));
    assert.match(allowed.stdout, /WARNING: .* has no SHA256SUMS; restoring without checksum verification/);
    assert.match(allowed.stdout, /verified: 3 tables restored \(3 in the dump\)/);
    assert.equal(await pg.psql(`SELECT count(*) FROM customers WHERE email = 'live-only@example.test'`, 'shop'), '0', 'shop replaced by the backup');
  });

  test('consistency: backup taken while a writer process commits parent+child transactions', async () => {
    const script = path.join(tempDir('pgbench').dir, 'writer.sql');
    fs.writeFileSync(
      script,
      `\\set c random(1, 2000)
BEGIN;
INSERT INTO orders (customer_id, note) VALUES (:c, 'writer') RETURNING id AS oid \\gset
INSERT INTO order_items (order_id, sku, qty, price) VALUES (:oid, 'a', 1, 10), (:oid, 'b', 2, 20), (:oid, 'c', 3, 30);
UPDATE orders SET item_count = 3, total = 60 WHERE id = :oid;
COMMIT;
`,
    );
    const writer = spawn(path.join(pgBinDir()!, 'pgbench'), ['-n', '-c', '2', '-T', '60', '-f', script, 'shop'], {
      env: { ...process.env, ...pg.env() },
      stdio: 'ignore',
    });
    const count = async (): Promise<number> => Number(await pg.psql(`SELECT count(*) FROM orders WHERE note = 'writer'`, 'shop'));
    try {
      for (let i = 0; i < 200 && (await count()) < 200; i++) await sleep(25);
      const atStart = await count();
      assert.ok(atStart >= 200, 'writer is running');
      const r = await runScript('postgres-backup', env());
      assert.equal(r.code, 0, describeRun(r));
      const atEnd = await count();
      assert.ok(atEnd > atStart, `writer kept writing during the backup (${atStart} -> ${atEnd})`);
      writer.kill('SIGINT');
      await new Promise((res) => writer.once('exit', res));

      const latest = backupEntries(backupDir).at(-1)!;
      for (const mode of ['single', 'full'] as const) {
        if (mode === 'single') {
          const rr = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir, RESTORE_FROM: latest, RESTORE_DATABASE: 'shop', RESTORE_DROP_EXISTING: 'true' });
          assert.equal(rr.code, 0, describeRun(rr));
        } else {
          const rr = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir, RESTORE_FROM: latest, RESTORE_DROP_EXISTING: 'true' });
          assert.equal(rr.code, 0, describeRun(rr));
        }
        const restored = await count();
        assert.ok(restored >= atStart && restored <= atEnd, `${mode}: restored ${restored} writer orders, expected between ${atStart} and ${atEnd}`);
        const torn = await pg.psql(
          `SELECT count(*) FROM orders o LEFT JOIN (SELECT order_id, count(*) n, sum(price) s FROM order_items GROUP BY order_id) i ON i.order_id = o.id
           WHERE o.item_count <> coalesce(i.n, 0) OR o.total <> coalesce(i.s, 0)`,
          'shop',
        );
        assert.equal(torn, '0', `${mode}: no torn parent/child rows`);
        const orphans = await pg.psql(`SELECT count(*) FROM order_items i LEFT JOIN orders o ON o.id = i.order_id WHERE o.id IS NULL`, 'shop');
        assert.equal(orphans, '0', `${mode}: foreign keys hold`);
      }
    } finally {
      if (writer.exitCode === null) writer.kill('SIGKILL');
    }
  });

  test('retention: only dated backups older than RETENTION_DAYS go, and only after a successful dump', async () => {
    const mk = (name: string, days: number): string => {
      const p = path.join(backupDir, name);
      fs.mkdirSync(p, { recursive: true });
      fs.writeFileSync(path.join(p, 'cluster.sql.gz'), `old ${name}`);
      touchDaysAgo(p, days);
      return p;
    };
    const old = mk('2020-01-01T030000Z', 8);
    const young = mk('2020-01-02T030000Z', 6);
    const foreign = mk('lost+found', 30);

    // failing dump (wrong password): nothing deleted, nothing changed
    const hashes = treeHashes(backupDir);
    const bad = await runScript('postgres-backup', { ...env(), PGPASSWORD: 'wrong-password' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /authentication failed for user 'postgres'/);
    assert.ok(fs.existsSync(old), 'old backup must survive a failed dump');
    assert.deepEqual(treeHashes(backupDir), hashes);

    const ok = await runScript('postgres-backup', env());
    assert.equal(ok.code, 0, describeRun(ok));
    assert.match(ok.stdout, /retention: deleting .*2020-01-01T030000Z/);
    assert.ok(!fs.existsSync(old), '8-day-old backup deleted');
    assert.ok(fs.existsSync(young), '6-day-old backup kept');
    assert.ok(fs.existsSync(foreign), 'foreign folders are never touched');
    assert.ok(backupEntries(backupDir).includes(firstBackup), 'recent backups kept');
  });

  test('retention in days that would overflow the arithmetic is refused before anything runs; recent backups stay', async () => {
    const recent = path.join(backupDir, '2020-06-01T030000Z');
    fs.mkdirSync(recent, { recursive: true });
    fs.writeFileSync(path.join(recent, 'cluster.sql.gz'), 'one day old');
    touchDaysAgo(recent, 1);
    const hashes = treeHashes(backupDir);
    // 12810238940076078 * 1440 wraps to 704 minutes in 64-bit shell arithmetic: the old script then deleted every backup older than ~12 hours
    for (const days of ['12810238940076078', '99999999999999999999', '36501']) {
      const r = await runScript('postgres-backup', { ...env(), RETENTION_DAYS: days });
      assert.notEqual(r.code, 0, `RETENTION_DAYS=${days} must be refused\n${describeRun(r)}`);
      assert.match(r.stderr, new RegExp(`RETENTION_DAYS=${days} is out of range: expected 0 to 36500 days`));
      assert.deepEqual(treeHashes(backupDir), hashes, `RETENTION_DAYS=${days}: nothing written or deleted`);
    }
    const bad = await runScript('postgres-backup', { ...env(), RETENTION_DAYS: '7d' });
    assert.match(bad.stderr, /RETENTION_DAYS must be a whole number of days \(0 keeps everything\), got '7d'/);
    const ok = await runScript('postgres-backup', { ...env(), RETENTION_DAYS: '0036500' });
    assert.equal(ok.code, 0, describeRun(ok));
    assert.ok(fs.existsSync(recent), 'a one-day-old backup survives the largest allowed retention');
    fs.rmSync(recent, { recursive: true });
  });

  test('a full disk during pg_dumpall fails with the cause printed (a real 256 KiB tmpfs as BACKUP_DIR), nothing left behind', async (t) => {
    const disk = tmpfsFor(t, '256k');
    if (!disk) return;
    const r = await runScript('postgres-backup', { ...env(), BACKUP_DIR: disk.dir });
    assert.notEqual(r.code, 0, describeRun(r));
    assert.match(r.stderr, /ERROR: pg_dumpall: the disk is full \(No space left on device\)/, describeRun(r));
    assert.deepEqual(fs.readdirSync(disk.dir), [], 'partial folder removed');
  });

  test('failure: wrong credentials and server down give a clear message, non-zero exit, earlier backups untouched', async () => {
    const hashes = treeHashes(backupDir);
    const count = backupEntries(backupDir).length;
    const bad = await runScript('postgres-backup', { ...env(), PGPASSWORD: 'wrong-password' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /ERROR: connection check: authentication failed for user 'postgres' at 127\.0\.0\.1:\d+/);
    assert.ok(!bad.stderr.includes('wrong-password') && !bad.stdout.includes('wrong-password'), 'password printed');

    pg.stop();
    const down = await runScript('postgres-backup', env());
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /PostgreSQL server unreachable at 127\.0\.0\.1:\d+/);
    const restoreDown = await runScript('postgres-restore', { ...pg.env(), BACKUP_DIR: backupDir, RESTORE_DATABASE: 'shop' });
    assert.notEqual(restoreDown.code, 0);
    assert.match(restoreDown.stderr, /PostgreSQL server unreachable/);

    assert.deepEqual(treeHashes(backupDir), hashes, 'earlier backups byte-identical');
    assert.equal(backupEntries(backupDir).length, count);
    assert.deepEqual(fs.readdirSync(backupDir).filter((n) => n.startsWith('.partial')), [], 'no partial folder left behind');
  });
});
