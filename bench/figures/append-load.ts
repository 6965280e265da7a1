/**
 * Figures 1 and 3: append throughput and latency over HTTP (16 concurrent clients, one session
 * each, token counting on, durable commits) against raw better-sqlite3 single-row transactions
 * with the same durability (WAL + synchronous=FULL); and, under that same load, the projection
 * lag from an append's acknowledgement to the event being visible in the window.
 *
 * Figure 1's service throughput against the ceiling is measured under the ceiling's load alone
 * (16 clients, nothing else); the run after it adds figure 3's read-your-writes probe (a 17th
 * client reading its own session's growing window at each ack), as the service's throughput was
 * measured when issue 14 was filed (749 events/s): that run gives the "against the start of
 * issue 14" row and the projection lag.
 *
 * The clients run in a worker thread (a separate event loop, like real clients in other
 * processes), so the server's event loop is not shared with the load generator. Acks carry
 * `process.hrtime` stamps, which are one monotonic clock across threads; the projector's batch
 * commits are stamped in the main thread when its checkpoint moves (`onCheckpoint`, also with the
 * projector in its worker thread).
 */
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { SQLITE_SCHEMA_SQL, type SqliteEventStore } from '@lib/event-store';
import { SessionProjector, computeEventCosts } from '@lib/session';
import { corpus, textMessages } from '../lib/corpus';
import { freshDir, startService } from '../lib/service';
import { startMinimalAppendServer } from '../lib/minimal-append-server';
import { nowMs, round, summarize } from '../lib/stats';
import { progress, type FigureResult } from '../lib/report';

/** Options of {@link runAppendLoad}. */
export interface AppendLoadOptions {
  /** Concurrent clients, one session each (16). */
  clients: number;
  /** Seconds of measured load. */
  seconds: number;
  /** Seconds of the raw SQLite baseline. */
  baselineSeconds: number;
  /** Root of the temporary data directories (disk-backed). */
  dir?: string;
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { ports, clients, seconds, warmup, messages, eventsPerRequest = 1, probeWindow = true } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: clients + 2 });
const hr = () => Number(process.hrtime.bigint()) / 1e6;
function request(method, path, body, port = ports[0]) {
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path, agent,
      headers: payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {} }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => { try { resolve({ status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }); } catch (e) { reject(e); } });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
let m = 0;
function nextEvent(id) { const t = messages[m++ % messages.length]; return { id, type: t.type, text: t.text }; }
// Ids unique across the runs of one bench on the same sessions (single, then batched).
const runId = Math.random().toString(36).slice(2, 8);
function nextEvents(prefix) { const out = []; for (let i = 0; i < eventsPerRequest; i++) out.push(nextEvent(runId + '.' + prefix + '.' + i)); return out; }
async function client(k, until, record) {
  let n = 0; const lat = []; const acks = []; let errors = 0;
  while (hr() < until) {
    const t0 = hr();
    const res = await request('POST', '/v1/sessions/load-' + k + '/events', { events: nextEvents((record ? 'r' : 'w') + n++) }, ports[k % ports.length]);
    const t1 = hr();
    if (res.status !== 201 && res.status !== 200) { errors++; if (errors < 3) console.error('append failed', res.status, JSON.stringify(res.body).slice(0, 200)); continue; }
    if (record) { lat.push(t1 - t0); acks.push([Number(res.body.position), t1]); }
  }
  return { lat, acks, errors };
}
async function probe(until) {
  const rtt = []; const statuses = {}; let n = 0;
  while (hr() < until) {
    const res = await request('POST', '/v1/sessions/probe/events', { events: [nextEvent('p' + n++)] });
    const t0 = hr();
    const win = await request('GET', '/v1/sessions/probe/window?minPosition=' + res.body.position);
    statuses[win.status] = (statuses[win.status] || 0) + 1;
    if (win.status === 200) rtt.push(hr() - t0); else if (!statuses.first) statuses.first = JSON.stringify(win.body).slice(0, 160);
    await new Promise((r) => setTimeout(r, 20));
  }
  return { rtt, statuses };
}
(async () => {
  let until = hr() + warmup * 1000;
  await Promise.all(Array.from({ length: clients }, (_, k) => client(k, until, false)));
  parentPort.postMessage({ phase: 'measuring' });
  const start = hr();
  until = start + seconds * 1000;
  const [results, rtt] = await Promise.all([
    Promise.all(Array.from({ length: clients }, (_, k) => client(k, until, true))),
    probeWindow ? probe(until) : { rtt: [], statuses: {} },
  ]);
  const end = hr();
  agent.destroy();
  parentPort.postMessage({ phase: 'done', start, end, results, rtt: rtt.rtt, windowStatuses: rtt.statuses });
})().catch((e) => parentPort.postMessage({ phase: 'error', message: String(e && e.stack || e) }));
`;

/** What the load worker reports: per-client latencies (ms) and acks ([position, hrtime ms]), and the probe's round trips. */
export interface WorkerDone {
  phase: 'done';
  start: number;
  end: number;
  results: Array<{ lat: number[]; acks: Array<[number, number]>; errors: number }>;
  rtt: number[];
  windowStatuses: Record<string, number | string>;
}

/**
 * Runs the HTTP load in a worker thread: `clients` clients (client k on `ports[k % ports.length]`,
 * session `load-k`) append one event per request for `warmup` then `seconds` seconds, while a
 * probe on `ports[0]` appends and reads its window at the acked position.
 */
export function runWorker(data: {
  ports: number[];
  clients: number;
  seconds: number;
  warmup: number;
  messages: unknown[];
  /** Events per request (default 1); each event gets its own id. */
  eventsPerRequest?: number;
  /** Run the read-your-writes probe on `ports[0]` (default true; the minimal server has no window). */
  probeWindow?: boolean;
}): Promise<WorkerDone> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: data });
    worker.on('message', (msg: { phase: string; message?: string }) => {
      if (msg.phase === 'measuring') progress('append load: warm-up done, measuring');
      else if (msg.phase === 'done') resolve(msg as unknown as WorkerDone);
      else if (msg.phase === 'error') reject(new Error(msg.message));
    });
    worker.on('error', reject);
  });
}

/**
 * Raw better-sqlite3 baseline: one INSERT per transaction into the event store's own schema,
 * WAL + synchronous=FULL, for `seconds`. Returns events/s and per-transaction latencies.
 */
export function rawSqliteBaseline(dir: string | undefined, seconds: number, payloads: string[]): { eventsPerSecond: number; latencies: number[] } {
  const d = freshDir(dir, 'raw-sqlite');
  const db = new Database(path.join(d, 'raw.sqlite'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SQLITE_SCHEMA_SQL);
    const insert = db.prepare('INSERT INTO events (stream, revision, id, type, data, metadata, created) VALUES (?, ?, ?, ?, ?, ?, ?)');
    const one = db.transaction((stream: string, revision: number, id: string, data: string) =>
      insert.run(stream, revision, id, 'ConversationEventAppended', data, '{"tenantId":"default"}', Date.now()),
    );
    const latencies: number[] = [];
    const revisions = new Array(16).fill(0);
    const start = nowMs();
    const until = start + seconds * 1000;
    let n = 0;
    while (nowMs() < until) {
      const k = n % 16;
      const t0 = nowMs();
      one(`session-default.raw-${k}`, revisions[k]++, `raw-${n}`, payloads[n % payloads.length]);
      latencies.push(nowMs() - t0);
      n++;
    }
    return { eventsPerSecond: n / ((nowMs() - start) / 1000), latencies };
  } finally {
    db.close();
    fs.rmSync(d, { recursive: true, force: true });
  }
}

/** Throughput (events/s) and request latencies (ms) of one load run. */
interface LoadFigures {
  eventsPerSecond: number;
  latency: ReturnType<typeof summarize>;
  requests: number;
  errors: number;
}

function loadFigures(done: WorkerDone, eventsPerRequest: number): LoadFigures {
  const latencies = done.results.flatMap((r) => r.lat);
  const seconds = (done.end - done.start) / 1000;
  return {
    eventsPerSecond: (latencies.length * eventsPerRequest) / seconds,
    latency: summarize(latencies),
    requests: latencies.length,
    errors: done.results.reduce((s, r) => s + r.errors, 0),
  };
}

/**
 * The ceiling (issue 14): {@link startMinimalAppendServer} under the same load worker, one event
 * per request then `batchSize` events per request (`batchSeconds` each).
 */
async function measureCeiling(
  options: AppendLoadOptions,
  messages: unknown[],
  batchSize: number,
  batchSeconds: number,
): Promise<{ single: LoadFigures; batched: LoadFigures; appendsPerFsync: number }> {
  const dir = freshDir(options.dir, 'minimal');
  const server = await startMinimalAppendServer(dir);
  try {
    progress(`minimal append server (the ceiling): ${options.clients} clients, ${options.seconds}s, then ${batchSize} events per request ${batchSeconds}s`);
    const base = { ports: [server.port], clients: options.clients, warmup: 1, messages, probeWindow: false };
    const single = loadFigures(await runWorker({ ...base, seconds: options.seconds }), 1);
    const appendsPerFsync = server.stats.appends / Math.max(1, server.stats.transactions);
    const batched = loadFigures(await runWorker({ ...base, seconds: batchSeconds, warmup: 0.5, eventsPerRequest: batchSize }), batchSize);
    return { single, batched, appendsPerFsync };
  } finally {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Single-event appends per second of the service when issue 14 was filed (docs/performance.md, same load). */
export const ISSUE_14_START_EVENTS_PER_SECOND = 749;

/** Runs figures 1 and 3. */
export async function runAppendLoad(options: AppendLoadOptions): Promise<FigureResult[]> {
  const { conversations } = corpus();
  const messages = textMessages(conversations).slice(0, 2000);
  const payloads = messages
    .slice(0, 500)
    .map((m, i) => JSON.stringify({ event: { id: `x${i}`, ...m }, costs: computeEventCosts({ id: `x${i}`, type: m.type, text: m.text }) }));
  const batchSize = 50;
  // Half the single-event runs (10 s of the full run's 20; 1 s of the quick run's 2).
  const batchSeconds = Math.max(1, Math.round(options.seconds / 2));

  progress(`raw better-sqlite3 baseline (${options.baselineSeconds}s)`);
  const baseline = rawSqliteBaseline(options.dir, options.baselineSeconds, payloads);
  const ceiling = await measureCeiling(options, messages, batchSize, batchSeconds);

  const running = await startService(options.dir, 'append');
  const projector = running.service.app.get(SessionProjector);
  const batches: Array<[number, number, number]> = []; // [checkpoint, commit hrtime ms, hrtime ms when this thread's checkpoint moved]
  const stopStamping = projector.onCheckpoint((checkpoint, committedAt) => batches.push([Number(checkpoint), committedAt, nowMs()]));
  const store = running.service.store as SqliteEventStore;
  try {
    // The ceiling's load: the same clients and nothing else (the ratio to the ceiling compares these).
    progress(`HTTP append load: ${options.clients} clients, ${options.seconds}s (+1s warm-up), the ceiling's load`);
    const statsBefore = { ...store.stats };
    const done = await runWorker({ ports: [running.port], clients: options.clients, seconds: options.seconds, warmup: 1, messages, probeWindow: false });
    const statsAfter = store.stats;
    const single = loadFigures(done, 1);
    const groupFactor = (statsAfter.operations - statsBefore.operations) / Math.max(1, statsAfter.transactions - statsBefore.transactions);

    // The same load plus figure 3's read-your-writes probe (one more client appending to its own
    // session and reading that session's whole window at each ack, 20 ms apart): how issue 14's
    // 749 events/s was measured, and where the projection lag is measured.
    // Half a second of warm-up: the service is warm from the run before (the probe starts with the measurement).
    progress(`HTTP append load with the read-your-writes probe: ${options.clients} clients + 1, ${options.seconds}s (+0.5s warm-up)`);
    const probed = await runWorker({ ports: [running.port], clients: options.clients, seconds: options.seconds, warmup: 0.5, messages });
    // Let the projector catch up with the last acks.
    const lastPosition = Math.max(0, ...probed.results.flatMap((r) => r.acks.map((a) => a[0])));
    await projector.waitForPosition(BigInt(lastPosition), 10_000);
    const withProbe = loadFigures(probed, 1);
    const acks = probed.results.flatMap((r) => r.acks).sort((a, b) => a[0] - b[0]);

    progress(`HTTP append load, ${batchSize} events per request: ${options.clients} clients, ${batchSeconds}s`);
    const batchedDone = await runWorker({
      ports: [running.port],
      clients: options.clients,
      seconds: batchSeconds,
      warmup: 0.5,
      messages,
      eventsPerRequest: batchSize,
      probeWindow: false,
    });
    const batched = loadFigures(batchedDone, batchSize);
    const lat = single.latency;
    const base = summarize(baseline.latencies);
    const ceil = ceiling.single.latency;

    // Projection lag: for each ack, the first projector batch whose checkpoint covers it.
    // With the projector in its worker thread the rows are visible from the commit, `minPosition`
    // waits until the event loop took the worker's answer: both are reported.
    const lags: number[] = [];
    const checkpointLags: number[] = [];
    let b = 0;
    for (const [position, ackAt] of acks) {
      while (b < batches.length && batches[b][0] < position) b++;
      if (b === batches.length) break;
      lags.push(Math.max(0, batches[b][1] - ackAt));
      checkpointLags.push(Math.max(0, batches[b][2] - ackAt));
    }
    const lag = summarize(lags);
    const checkpointLag = summarize(checkpointLags);
    const rtt = summarize(probed.rtt);
    const ratio = single.eventsPerSecond / ceiling.single.eventsPerSecond;
    const sinceStart = withProbe.eventsPerSecond / ISSUE_14_START_EVENTS_PER_SECOND;
    const batchedRatio = batched.eventsPerSecond / ceiling.batched.eventsPerSecond;
    const ceilingName = 'minimal Fastify + better-sqlite3 server';

    const f1: FigureResult = {
      figure: 1,
      title: 'append throughput and latency over HTTP',
      rows: [
        {
          figure: 1,
          metric: `append throughput, ${options.clients} clients, 1 event/request (events/s)`,
          value: round(single.eventsPerSecond, 1),
          baseline: round(ceiling.single.eventsPerSecond, 1),
          baselineName: ceilingName,
          ratio: round(ratio, 3),
          target: '≥ 0.5×',
          met: ratio >= 0.5,
        },
        {
          figure: 1,
          metric: 'append throughput with the read-your-writes probe, as at the start of issue 14 (events/s)',
          value: round(withProbe.eventsPerSecond, 1),
          baseline: ISSUE_14_START_EVENTS_PER_SECOND,
          baselineName: 'service at issue 14',
          ratio: round(sinceStart, 2),
          target: '≥ 3×',
          met: sinceStart >= 3,
        },
        {
          figure: 1,
          metric: 'append latency p50 (ms)',
          value: round(lat.p50),
          baseline: round(ceil.p50),
          baselineName: 'minimal server',
          ratio: round(lat.p50 / ceil.p50, 2),
        },
        {
          figure: 1,
          metric: 'append latency p99 (ms)',
          value: round(lat.p99),
          baseline: round(ceil.p99),
          baselineName: 'minimal server',
          ratio: round(lat.p99 / ceil.p99, 2),
        },
        {
          figure: 1,
          metric: `append throughput, ${batchSize} events/request (events/s)`,
          value: round(batched.eventsPerSecond, 1),
          baseline: round(ceiling.batched.eventsPerSecond, 1),
          baselineName: 'minimal server, same batches',
          ratio: round(batchedRatio, 3),
        },
        {
          figure: 1,
          metric: `append latency p99, ${batchSize} events/request (ms)`,
          value: round(batched.latency.p99),
          baseline: round(ceiling.batched.latency.p99),
          baselineName: 'minimal server',
          ratio: round(batched.latency.p99 / ceiling.batched.latency.p99, 2),
        },
        {
          figure: 1,
          metric: 'raw durable transaction, 1 row (events/s)',
          value: round(baseline.eventsPerSecond, 1),
          baseline: round(base.p99),
          baselineName: 'its p99 (ms)',
        },
        {
          figure: 1,
          metric: 'group commit: appends per fsync',
          value: round(groupFactor, 2),
          baseline: round(ceiling.appendsPerFsync, 2),
          baselineName: 'minimal server',
        },
      ],
      details: {
        clients: options.clients,
        seconds: (done.end - done.start) / 1000,
        single,
        withProbe,
        batched: { eventsPerRequest: batchSize, ...batched },
        ceiling,
        baseline: { eventsPerSecond: baseline.eventsPerSecond, latency: base, transactions: baseline.latencies.length },
        groupCommitFactor: groupFactor,
      },
    };
    const f3: FigureResult = {
      figure: 3,
      title: 'projection lag under the append load',
      rows: [
        { figure: 3, metric: 'projection lag ack → visible p50 (ms)', value: round(lag.p50) },
        { figure: 3, metric: 'projection lag ack → visible p99 (ms)', value: round(lag.p99), target: '< 50 ms', met: lag.p99 < 50 },
        {
          figure: 3,
          metric: 'projection lag ack → checkpoint on the event loop (minPosition) p50 / p99 (ms)',
          value: `${round(checkpointLag.p50)} / ${round(checkpointLag.p99)}`,
        },
        probed.rtt.length > 0
          ? { figure: 3, metric: 'read-your-writes GET window?minPosition p99 (ms)', value: round(rtt.p99), baseline: round(rtt.p50), baselineName: 'its p50' }
          : { figure: 3, metric: 'read-your-writes GET window?minPosition', value: `no 200 answer: ${JSON.stringify(probed.windowStatuses).slice(0, 60)}` },
      ],
      details: { lag, checkpointLag, readYourWritesRoundTrip: rtt, windowStatuses: probed.windowStatuses, projectorBatches: batches.length },
      notes: ['lag = time of the projector commit that covers the acked position minus the client-side ack time (0 when already visible at ack)'],
    };
    return [f1, f3];
  } finally {
    stopStamping();
    await running.stop();
  }
}
