// redis-backup.sh / redis-restore.sh against real redis-server processes on 127.0.0.1.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, test } from 'node:test';
import {
  REDIS_NEEDS, Resp, assertBinaries, backupEntries, describeRun, runScript, skipUnless, describeNeeding, sleep, startRedis, startScript, tempDir,
  agedBackups, treeHashes, type RedisServer, type RespValue,
} from './servers';

const TTL = 3600;

async function loadData(c: Resp): Promise<void> {
  const cmds: (string | number)[][] = [];
  for (let i = 0; i < 3000; i++) {
    cmds.push(['SET', `str:${i}`, `value ${i} ${'x'.repeat(i % 50)}`]);
    if (i % 3 === 0) cmds.push(['EXPIRE', `str:${i}`, TTL + i]);
  }
  for (let i = 0; i < 300; i++) {
    cmds.push(['HSET', `hash:${i}`, 'name', `n${i}`, 'count', i, 'blob', 'ü'.repeat(i % 20)]);
    cmds.push(['RPUSH', `list:${i % 50}`, `item-${i}`]);
    cmds.push(['SADD', `set:${i % 30}`, `m${i}`]);
    cmds.push(['ZADD', `zset:${i % 20}`, i * 1.5, `z${i}`]);
    if (i % 10 === 0) cmds.push(['PEXPIRE', `hash:${i}`, TTL * 1000]);
  }
  for (let i = 0; i < 100; i++) cmds.push(['XADD', 'events', `${1700000000000 + i}-0`, 'type', 'click', 'n', i]);
  cmds.push(['SET', 'big', 'B'.repeat(200_000)]);
  cmds.push(['EXPIRE', 'set:1', TTL]);
  for (const r of await c.pipeline(cmds)) if (r instanceof Error) throw r;
}

/** Every key: type, full value (order-normalised where the type is unordered) and whether/how long it expires. */
async function snapshot(c: Resp): Promise<Map<string, { type: string; value: string; ttl: number }>> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = (await c.call('SCAN', cursor, 'COUNT', 1000)) as [string, string[]];
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  const types = (await c.pipeline(keys.map((k) => ['TYPE', k]))) as string[];
  const reads = keys.map((k, i): (string | number)[] => {
    switch (types[i]) {
      case 'string': return ['GET', k];
      case 'hash': return ['HGETALL', k];
      case 'list': return ['LRANGE', k, 0, -1];
      case 'set': return ['SMEMBERS', k];
      case 'zset': return ['ZRANGE', k, 0, -1, 'WITHSCORES'];
      case 'stream': return ['XRANGE', k, '-', '+'];
      default: throw new Error(`unexpected type ${types[i]}`);
    }
  });
  const values = await c.pipeline(reads);
  const ttls = (await c.pipeline(keys.map((k) => ['PTTL', k]))) as number[];
  const out = new Map<string, { type: string; value: string; ttl: number }>();
  keys.forEach((k, i) => {
    let v: RespValue = values[i];
    if (types[i] === 'set') v = [...(v as string[])].sort();
    if (types[i] === 'hash') {
      const arr = v as string[];
      const pairs: string[] = [];
      for (let j = 0; j < arr.length; j += 2) pairs.push(`${arr[j]}=${arr[j + 1]}`);
      v = pairs.sort();
    }
    out.set(k, { type: types[i], value: JSON.stringify(v), ttl: ttls[i] });
  });
  return out;
}

function assertSameData(before: Map<string, { type: string; value: string; ttl: number }>, after: Map<string, { type: string; value: string; ttl: number }>): void {
  assert.equal(after.size, before.size, 'same number of keys');
  for (const [k, b] of before) {
    const a = after.get(k);
    assert.ok(a, `key ${k} lost`);
    assert.equal(a.type, b.type, `type of ${k}`);
    assert.equal(a.value, b.value, `value of ${k}`);
    if (b.ttl === -1) assert.equal(a.ttl, -1, `${k} must not get a TTL`);
    else assert.ok(a.ttl > 0 && a.ttl <= b.ttl, `TTL of ${k} kept (${b.ttl} -> ${a.ttl})`);
  }
}

describeNeeding('redis backup scripts (real redis-server)', { skip: skipUnless(REDIS_NEEDS) }, () => {
  let redis: RedisServer;
  let backupDir: string;
  const env = (): Record<string, string> => ({ ...redis.env(), BACKUP_DIR: backupDir, RETENTION_DAYS: '7' });

  before(async () => {
    assertBinaries(REDIS_NEEDS);
    redis = await startRedis();
    backupDir = tempDir('redis-backups').dir;
  });
  after(async () => redis?.stop());

  test('round trip: BGSAVE, fetch, FLUSHALL, copy back, restart: every key, value and TTL back', async () => {
    const c = await redis.client();
    await loadData(c);
    const before1 = await snapshot(c);
    assert.equal(before1.size, 3402);
    const r = await runScript('redis-backup', env());
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /triggering BGSAVE SCHEDULE/);
    assert.match(r.stdout, /BGSAVE SCHEDULE completed \(rdb_last_bgsave_status:ok\)/);
    assert.ok(!r.stdout.includes(redis.password) && !r.stderr.includes(redis.password), 'password printed');
    const [folder] = backupEntries(backupDir);
    assert.ok(fs.statSync(path.join(backupDir, folder, 'dump.rdb')).size > 50_000, 'dump has the data');
    // The restore runs as the redis user, in the group the backup runs as: the group reads, others nothing.
    assert.equal(fs.statSync(path.join(backupDir, folder)).mode & 0o777, 0o750);
    for (const f of ['dump.rdb', 'SHA256SUMS']) assert.equal(fs.statSync(path.join(backupDir, folder, f)).mode & 0o777, 0o640, f);
    // the server's own dump.rdb was written by the BGSAVE, too
    assert.ok(fs.existsSync(path.join(redis.dataDir, 'dump.rdb')));

    await c.call('FLUSHALL');
    c.close();
    // restore refuses while Redis is running
    const running = await runScript('redis-restore', { BACKUP_DIR: backupDir, REDIS_DATA_DIR: redis.dataDir, REDIS_HOST: '127.0.0.1', REDIS_PORT: String(redis.port) });
    assert.notEqual(running.code, 0);
    assert.match(running.stderr, /is still running; stop it first/);

    await redis.stop();
    fs.rmSync(path.join(redis.dataDir, 'dump.rdb'));
    const rr = await runScript('redis-restore', { BACKUP_DIR: backupDir, REDIS_DATA_DIR: redis.dataDir, REDIS_HOST: '127.0.0.1', REDIS_PORT: String(redis.port) });
    assert.equal(rr.code, 0, describeRun(rr));
    await redis.start();
    const c2 = await redis.client();
    assertSameData(before1, await snapshot(c2));
    c2.close();
  });

  test('consistency: snapshot taken while a writer runs MULTI/EXEC transactions is transaction-consistent', async () => {
    const c = await redis.client();
    await c.call('FLUSHALL');
    const writer = await redis.client();
    let stop = false;
    let committed = 0;
    const loop = (async () => {
      while (!stop) {
        const batch: (string | number)[][] = [];
        for (let i = 0; i < 50; i++) {
          const n = committed + i + 1;
          batch.push(['MULTI'], ['INCR', 'tx:counter'], ['RPUSH', 'tx:log', `entry-${n}`], ['HSET', `tx:item:${n}`, 'n', n], ['SADD', 'tx:items', n], ['EXEC']);
        }
        const res = await writer.pipeline(batch);
        for (const x of res) if (x instanceof Error) throw x;
        committed += 50;
      }
    })();
    try {
      while (committed < 2000) await new Promise((r) => setTimeout(r, 10));
      const atStart = committed;
      const r = await runScript('redis-backup', env());
      assert.equal(r.code, 0, describeRun(r));
      const atEnd = committed;
      assert.ok(atEnd > atStart, 'writer kept writing during the backup');
      stop = true;
      await loop;
    } finally {
      stop = true;
      await loop.catch(() => undefined);
      writer.close();
    }
    c.close();
    await redis.stop();
    const rr = await runScript('redis-restore', { BACKUP_DIR: backupDir, REDIS_DATA_DIR: redis.dataDir });
    assert.equal(rr.code, 0, describeRun(rr));
    assert.match(rr.stdout, /kept the previous file as .*dump\.rdb\.before-restore-/);
    await redis.start();
    const c2 = await redis.client();
    const counter = Number(await c2.call('GET', 'tx:counter'));
    assert.ok(counter > 0);
    assert.equal(await c2.call('LLEN', 'tx:log'), counter, 'list length equals counter: no torn transaction');
    assert.equal(await c2.call('SCARD', 'tx:items'), counter);
    assert.equal(((await c2.call('KEYS', 'tx:item:*')) as string[]).length, counter);
    assert.equal(await c2.call('LINDEX', 'tx:log', -1), `entry-${counter}`);
    c2.close();
  });

  test('AOF mode: BGREWRITEAOF, then the dump restored as the AOF base of a server with appendonly yes', async () => {
    const aof = await startRedis('aof-pw', ['--appendonly', 'yes']);
    const dir = tempDir('redis-aof-backups').dir;
    try {
      const c = await aof.client();
      await loadData(c);
      const before1 = await snapshot(c);
      const noAof = await runScript('redis-backup', { ...env(), BACKUP_DIR: dir, REDIS_PERSISTENCE_MODE: 'aof' });
      assert.notEqual(noAof.code, 0, 'the rdb-only server refuses aof mode');
      assert.match(noAof.stderr, /appendonly disabled/);
      const r = await runScript('redis-backup', { ...aof.env(), BACKUP_DIR: dir, RETENTION_DAYS: '7', REDIS_PERSISTENCE_MODE: 'aof' });
      assert.equal(r.code, 0, describeRun(r));
      assert.match(r.stdout, /BGREWRITEAOF completed \(aof_last_bgrewrite_status:ok\)/);
      await c.call('FLUSHALL');
      c.close();
      await aof.stop();
      const rr = await runScript('redis-restore', { BACKUP_DIR: dir, REDIS_DATA_DIR: aof.dataDir, REDIS_PERSISTENCE_MODE: 'aof' });
      assert.equal(rr.code, 0, describeRun(rr));
      await aof.start();
      const c2 = await aof.client();
      assertSameData(before1, await snapshot(c2));
      c2.close();
    } finally {
      await aof.stop();
    }
  });

  test('retention and failure: wrong password / server down fail clearly, delete nothing, change nothing', async () => {
    const { old, young } = agedBackups(backupDir, 'dump.rdb', 'REDIS-old');
    const hashes = treeHashes(backupDir);

    const bad = await runScript('redis-backup', { ...env(), REDISCLI_AUTH: 'wrong-password' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /ERROR: connection check: authentication failed at Redis 127\.0\.0\.1:\d+ \(check the REDISCLI_AUTH secret\)/);
    assert.ok(!bad.stderr.includes('wrong-password') && !bad.stdout.includes('wrong-password'));
    assert.deepEqual(treeHashes(backupDir), hashes);

    const ok = await runScript('redis-backup', env());
    assert.equal(ok.code, 0, describeRun(ok));
    assert.ok(!fs.existsSync(old), '8 days old: deleted');
    assert.ok(fs.existsSync(young), '6 days old: kept');

    const hashes2 = treeHashes(backupDir);
    await redis.stop();
    const down = await runScript('redis-backup', env());
    assert.notEqual(down.code, 0);
    assert.match(down.stderr, /Redis server unreachable at 127\.0\.0\.1:\d+/);
    assert.deepEqual(treeHashes(backupDir), hashes2, 'earlier backups byte-identical');
    assert.deepEqual(fs.readdirSync(backupDir).filter((n) => n.startsWith('.partial')), []);
  });

  // A network policy engine may admit a new pod only at its next sync (kube-router: the e2e's real node saw
  // every backup Job's first connection refused), so the first connection is tried again for CONNECT_WAIT_SECONDS.
  test('first connection refused: tried again for CONNECT_WAIT_SECONDS, then the backup runs; bounded; one try without it', async () => {
    const dir = tempDir('redis-connect-wait').dir;
    await redis.stop();
    const once = await runScript('redis-backup', { ...env(), BACKUP_DIR: dir });
    assert.notEqual(once.code, 0, 'unset: one try, as before');
    assert.doesNotMatch(once.stdout, /trying again/);

    const t0 = Date.now();
    const bounded = await runScript('redis-backup', { ...env(), BACKUP_DIR: dir, CONNECT_WAIT_SECONDS: '3' });
    const took = Date.now() - t0;
    assert.notEqual(bounded.code, 0);
    assert.match(bounded.stderr, /ERROR: connection check: Redis server unreachable at 127\.0\.0\.1:\d+/);
    assert.ok(took >= 3000 && took < 15_000, `a server that stays down fails after the wait (${took} ms)`);

    const bad = await runScript('redis-backup', { ...env(), BACKUP_DIR: dir, CONNECT_WAIT_SECONDS: 'soon' });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /CONNECT_WAIT_SECONDS must be a whole number of seconds \(0 to 99999\), got 'soon'/);

    const job = startScript('redis-backup', { ...env(), BACKUP_DIR: dir, CONNECT_WAIT_SECONDS: '60' });
    await sleep(3000);
    await redis.start();
    const r = await job.done;
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, /connection refused or unreachable \(try 1\); trying again in 2 s, for up to 60 s: Could not connect to Redis/);
    assert.equal(backupEntries(dir).length, 1, 'the backup was written once the server answered');
  });
});
