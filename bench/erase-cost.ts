/**
 * Measures what erasing one long session costs (`DELETE /v1/sessions/{id}`): a session of
 * `ERASE_EVENTS` events (default 1,000) of `ERASE_CHARS` characters each (default 3,000: 3 MB of
 * prose), appended 100 a request, then erased, on the embedded SQLite store and on PostgreSQL with
 * two replicas (two service processes on one database, the erasure sent to the first).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/erase-cost.ts [sqlite|postgres]...
 *
 * Each service runs in a child process, from source (as the e2e specs run it). Per store it
 * prints: the append's wall time, the DELETE's wall time on the replica it was sent to, how long
 * until the other replica's reads no longer show the session (PostgreSQL: a read with the
 * erasure's position as `minPosition` answers 404), and, for each replica, the slowest `/health`
 * probe during the erasure (probes every 10 ms from another process) and the most CPU its event
 * loop ran while one probe waited (what load cannot inflate: the longest stretch it held the loop).
 * Then the machine (CPU, cores, load average). PostgreSQL: `BENCH_DATABASE_URL` (default the test
 * server, `postgres://postgres@127.0.0.1:5432/postgres`), a database of its own created and dropped;
 * `ERASE_PORT` the first port of the replicas (default 0: free ports). `ERASE_TEXT`: `prose` (default:
 * words of a vocabulary of `ERASE_VOCABULARY`, default 200), `cjk` (ideographs, so every event is in
 * the trigram index too: the costliest erasure before newcomer ncretry F5's fix), `sentence`,
 * `letter` (one letter repeated), `random` (letters); `ERASE_PER_REQUEST` events an append (100);
 * `ERASE_KEEP` events of another session of the tenant, appended first and kept (default 0: the
 * erased session is the tenant's whole recall index).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Client } from 'pg';
import { spawnService, type ServiceProcess } from '../test/support/service-process';
import { startHealthProber, type ProbeResults } from '../test/support/health-prober';

const EVENTS = Number(process.env.ERASE_EVENTS ?? 1000);
const CHARS = Number(process.env.ERASE_CHARS ?? 3000);
/** Events of another session of the tenant, appended first (default 0). */
const KEEP = Number(process.env.ERASE_KEEP ?? 0);
const PER_REQUEST = Number(process.env.ERASE_PER_REQUEST ?? 100);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const FIRST_PORT = Number(process.env.ERASE_PORT ?? 0);
/** Distinct words of the prose (default 200: ordinary text repeats its words, so each word's entry in the recall index lists many events). */
const VOCABULARY = Number(process.env.ERASE_VOCABULARY ?? 200);

/** Prose of `chars` characters drawn from a vocabulary of a few thousand words, distinct per event (`seed`). */
function prose(chars: number, seed: number): string {
  if (process.env.ERASE_TEXT === 'cjk') {
    // Pseudo-random ideographs of 20,000: nearly every trigram distinct, as in real text of a large vocabulary.
    let y = seed + 1;
    return Array.from({ length: chars }, () => {
      y = (Math.imul(y, 1103515245) + 12345) >>> 0;
      return String.fromCodePoint(0x4e00 + ((y >>> 8) % 20000));
    }).join('');
  }
  return Array.from({ length: chars }, (_, i) => String.fromCodePoint(0x4e00 + ((seed * 7919 + i * 131) % 3000))).join('');
  if (process.env.ERASE_TEXT === 'letter') return 'x'.repeat(chars);
  if (process.env.ERASE_TEXT === 'sentence')
    return `event ${seed}: the customer asked about the refund of the ticket and the agent answered. `.repeat(chars).slice(0, chars);
  if (process.env.ERASE_TEXT === 'random')
    return Array.from({ length: chars }, (_, i) => 'abcdefghijklmnopqrstuvwxyz'[(seed * 7919 + i * i * 31) % 26]).join('');
  let x = (seed * 2654435761) >>> 0;
  const words: string[] = [];
  let length = 0;
  while (length < chars) {
    x = (x * 1103515245 + 12345) >>> 0;
    const word = `w${(x >>> 8) % VOCABULARY}`;
    words.push(word);
    length += word.length + 1;
  }
  return words.join(' ').slice(0, chars);
}

async function request(base: string, method: string, url: string, body?: unknown): Promise<{ status: number; body: Record<string, string> }> {
  const res = await fetch(base + url, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as Record<string, string> };
}

interface Row {
  store: string;
  events: number;
  chars: number;
  keptEvents: number;
  appendMs: number;
  eraseMs: number;
  otherReplicaGoneMs?: number;
  slowestProbeMs: number[];
  longestLoopCpuMs: (number | null)[];
}

const probeSummary = (r: ProbeResults) => ({
  slowest: Math.max(0, ...r.latencies),
  loopCpu: r.eventLoopCpuMs ? Math.max(0, ...r.eventLoopCpuMs) : null,
});

async function measure(store: 'sqlite' | 'postgres'): Promise<Row> {
  const root = fs.mkdtempSync(path.join(process.env.BENCH_DIR ?? os.tmpdir(), `erase-cost-${store}-`));
  const database = `erase_cost_${process.pid}`;
  const admin = store === 'postgres' ? new Client({ connectionString: DATABASE_URL }) : null;
  const replicas: ServiceProcess[] = [];
  let t0 = 0;
  try {
    const env: Record<string, string> = {};
    if (admin) {
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${database}`);
      await admin.query(`CREATE DATABASE ${database}`);
      const url = new URL(DATABASE_URL);
      url.pathname = `/${database}`;
      env.DATABASE_URL = url.toString();
    }
    for (let i = 0; i < (admin ? 2 : 1); i++)
      replicas.push(await spawnService({ dataDir: path.join(root, `r${i}`), env: { ...env, ...(FIRST_PORT ? { PORT: String(FIRST_PORT + i) } : {}) } }));
    const [a, b] = replicas;
    let position = '0';
    // Another session of the tenant first (`ERASE_KEEP` events of the same kind): the erased one is then a share of its recall index.
    for (const [session, count, seed] of [
      ['kept', KEEP, EVENTS],
      ['long', EVENTS, 0],
    ] as const) {
      if (session === 'long') t0 = performance.now();
      for (let from = 0; from < count; from += PER_REQUEST) {
        const events = Array.from({ length: Math.min(PER_REQUEST, count - from) }, (_, k) => ({
          id: `e${from + k}`,
          type: (from + k) % 2 ? 'assistant' : 'user',
          text: prose(CHARS, seed + from + k),
        }));
        const res = await request(a.url, 'POST', `/v1/sessions/${session}/events`, { events });
        if (res.status !== 201) throw new Error(`append answered ${res.status}: ${JSON.stringify(res.body)}`);
        position = res.body.position;
      }
    }
    const appendMs = performance.now() - t0;
    // Both replicas' read models hold the session before the erasure starts.
    for (const r of replicas) {
      const res = await request(r.url, 'GET', `/v1/sessions/long?minPosition=${position}`);
      if (res.status !== 200) throw new Error(`read answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    const probers = await Promise.all(replicas.map((r) => startHealthProber(r.url, { pauseMs: 10, servicePid: r.pid })));
    const t1 = performance.now();
    const erased = await request(a.url, 'DELETE', '/v1/sessions/long');
    const eraseMs = performance.now() - t1;
    if (erased.status !== 200) throw new Error(`DELETE answered ${erased.status}: ${JSON.stringify(erased.body)}`);
    let otherReplicaGoneMs: number | undefined;
    if (b) {
      for (;;) {
        const res = await request(b.url, 'GET', `/v1/sessions/long?minPosition=${erased.body.position}`);
        if (res.status === 404) break;
        if (res.status !== 503) throw new Error(`other replica's read answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
      otherReplicaGoneMs = performance.now() - t1;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
    const probes = (await Promise.all(probers.map((p) => p.stop()))).map(probeSummary);
    for (const r of replicas) if (/database is locked/.test(r.stderr() + r.stdout())) console.error(`${store}: a replica logged "database is locked"`);
    for (const r of replicas)
      console.error(
        r
          .stderr()
          .split('\n')
          .filter((l) => l.includes('ERASE'))
          .join('\n'),
      );
    return {
      store: admin ? 'postgres, 2 replicas' : 'sqlite',
      events: EVENTS,
      chars: CHARS,
      keptEvents: KEEP,
      appendMs: Math.round(appendMs),
      eraseMs: Math.round(eraseMs),
      ...(otherReplicaGoneMs === undefined ? {} : { otherReplicaGoneMs: Math.round(otherReplicaGoneMs) }),
      slowestProbeMs: probes.map((p) => p.slowest),
      longestLoopCpuMs: probes.map((p) => p.loopCpu),
    };
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
      await admin.end();
    }
    fs.rmSync(root, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const stores = (process.argv.slice(2).length ? process.argv.slice(2) : ['sqlite', 'postgres']) as Array<'sqlite' | 'postgres'>;
  for (const store of stores) {
    if (store !== 'sqlite' && store !== 'postgres') throw new Error(`unknown store ${store as string}: sqlite or postgres`);
    console.log(JSON.stringify(await measure(store)));
  }
  const cpus = os.cpus();
  console.log(
    JSON.stringify({ machine: `${cpus[0]?.model ?? '?'} × ${cpus.length}`, node: process.version, loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))) }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
