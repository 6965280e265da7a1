/**
 * Figure 8: append throughput over HTTP with 1, 2 and 3 service replicas (separate processes,
 * compiled and started as `npm start` does, see compiled-service.ts) sharing one PostgreSQL database, against raw `pg` single-row INSERTs into a
 * table of the same shape (autocommit, as many connections as HTTP clients) in the same run.
 *
 * Each replica count gets a fresh database, so the runs are comparable. The load is the worker of
 * figure 1 (clients spread over the replicas, one session each, one event per request). Needs a
 * PostgreSQL server: `BENCH_DATABASE_URL` (an admin URL, default the test server of
 * `POSTGRES_TEST_URL` or `postgres://postgres@127.0.0.1:5432/postgres`); skipped when none answers.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { randomBytes, randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import { withoutCredentials } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { computeEventCosts } from '@lib/session';
import type { ServiceProcess } from '../../test/support/service-process';
import { spawnCompiledService } from '../lib/compiled-service';
import { corpus, textMessages } from '../lib/corpus';
import { freshDir } from '../lib/service';
import { progress, type FigureResult, type FigureRow } from '../lib/report';
import { nowMs, round, summarize } from '../lib/stats';
import { runWorker } from './append-load';

/** Options of {@link runPostgresReplicas}. */
export interface PostgresReplicasOptions {
  /** Concurrent HTTP clients (and raw connections). */
  clients: number;
  /** Seconds of measured load per replica count. */
  seconds: number;
  /** Seconds of the raw `pg` baseline. */
  baselineSeconds: number;
  /** Replica counts to measure (default 1, 2, 3). */
  replicaCounts?: number[];
  /** Root of the replicas' data directories (default: the OS temp dir). */
  dir?: string;
}

const ADMIN_URL = process.env.BENCH_DATABASE_URL || process.env.POSTGRES_TEST_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

async function withAdmin<T>(fn: (c: Client) => Promise<T>): Promise<T> {
  const c = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 3000 });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Drops of the databases not dropped yet (see {@link dropOpenDatabases}). */
const openDatabases = new Set<() => Promise<void>>();

async function freshDatabase(label: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `fig8_${label}_${randomBytes(4).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  const drop = () => {
    openDatabases.delete(drop);
    return withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined);
  };
  openDatabases.add(drop);
  return { url: url.toString(), drop };
}

/** Drops the databases of a figure 8 still running (the bench interrupted by Ctrl-C); never rejects. */
export async function dropOpenDatabases(): Promise<void> {
  await Promise.allSettled([...openDatabases].map((drop) => drop()));
}

/** Raw `pg`: `connections` loops of single-row autocommit INSERTs for `seconds`. Returns rows/s and latencies (ms). */
async function rawPgBaseline(url: string, connections: number, seconds: number, payloads: string[]): Promise<{ eventsPerSecond: number; latencies: number[] }> {
  const pool = new Pool({ connectionString: url, max: connections });
  pool.on('error', () => undefined); // an idle connection ended by the server must not end the run
  try {
    await pool.query(
      'CREATE TABLE raw_events (position bigserial PRIMARY KEY, stream text NOT NULL, revision bigint NOT NULL, id uuid NOT NULL UNIQUE, type text NOT NULL, data text NOT NULL, metadata text, created timestamptz NOT NULL DEFAULT now(), UNIQUE (stream, revision))',
    );
    const latencies: number[] = [];
    const until = nowMs() + seconds * 1000;
    const start = nowMs();
    await Promise.all(
      Array.from({ length: connections }, async (_, k) => {
        for (let n = 0; nowMs() < until; n++) {
          const t0 = nowMs();
          await pool.query('INSERT INTO raw_events (stream, revision, id, type, data, metadata) VALUES ($1, $2, gen_random_uuid(), $3, $4, $5)', [
            `session-default.raw-${k}`,
            n,
            'ConversationEventAppended',
            payloads[n % payloads.length],
            '{"tenantId":"default"}',
          ]);
          latencies.push(nowMs() - t0);
        }
      }),
    );
    return { eventsPerSecond: latencies.length / ((nowMs() - start) / 1000), latencies };
  } finally {
    await pool.end();
  }
}

/** The adapter alone, in this process: `appenders` concurrent loops of single-event appends for `seconds`. Returns events/s. */
async function storeAppendRate(url: string, appenders: number, seconds: number, payloads: string[]): Promise<number> {
  const store = PostgresEventStore.connect(url, { maxConnections: appenders });
  try {
    await store.headPosition();
    let n = 0;
    const start = nowMs();
    const until = start + seconds * 1000;
    await Promise.all(
      Array.from({ length: appenders }, async (_, k) => {
        while (nowMs() < until) {
          await store.appendToStream(`session-default.store-${k}`, [
            { id: randomUUID(), type: 'ConversationEventAppended', data: payloads[n % payloads.length] },
          ]);
          n++;
        }
      }),
    );
    return n / ((nowMs() - start) / 1000);
  } finally {
    await store.close();
  }
}

/** CPU seconds (user + system) a process has used so far, from /proc (null where there is none). */
function cpuSeconds(pid: number): number | null {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

/** Runs figure 8, or returns it skipped when no PostgreSQL answers. */
export async function runPostgresReplicas(options: PostgresReplicasOptions): Promise<FigureResult> {
  const title = 'append throughput with 1–3 replicas on PostgreSQL';
  try {
    await withAdmin((c) => c.query('SELECT 1'));
  } catch (error) {
    return {
      figure: 8,
      title,
      rows: [],
      skipped: `no PostgreSQL at ${withoutCredentials(ADMIN_URL)}: ${(error as Error).message} (set BENCH_DATABASE_URL)`,
    };
  }
  const { conversations } = corpus();
  const messages = textMessages(conversations).slice(0, 2000);
  const payloads = messages
    .slice(0, 500)
    .map((m, i) => JSON.stringify({ event: { id: `x${i}`, ...m }, costs: computeEventCosts({ id: `x${i}`, type: m.type, text: m.text }) }));

  const rawDb = await freshDatabase('raw');
  progress(`raw pg baseline: ${options.clients} connections, single-row INSERTs (${options.baselineSeconds}s)`);
  const baseline = await rawPgBaseline(rawDb.url, options.clients, options.baselineSeconds, payloads).finally(() => rawDb.drop());
  const base = summarize(baseline.latencies);

  const storeDb = await freshDatabase('store');
  progress(`PostgresEventStore alone: 1 and ${options.clients} appenders (${options.baselineSeconds}s each)`);
  const storeOne = await storeAppendRate(storeDb.url, 1, options.baselineSeconds, payloads);
  const storeMany = await storeAppendRate(storeDb.url, options.clients, options.baselineSeconds, payloads).finally(() => storeDb.drop());

  const rows: FigureRow[] = [
    { figure: 8, metric: `raw pg single-row INSERT, ${options.clients} connections (rows/s)`, value: round(baseline.eventsPerSecond, 1) },
    {
      figure: 8,
      metric: `PostgresEventStore.appendToStream alone, 1 / ${options.clients} appenders (events/s)`,
      value: `${round(storeOne, 1)} / ${round(storeMany, 1)}`,
      baseline: round(baseline.eventsPerSecond, 1),
      baselineName: 'raw pg INSERT',
      ratio: round(storeMany / baseline.eventsPerSecond, 3),
    },
  ];
  const details: Record<string, unknown> = { baseline: { eventsPerSecond: baseline.eventsPerSecond, latency: base }, loadAverageBefore: os.loadavg() };
  let single = 0;
  for (const replicas of options.replicaCounts ?? [1, 2, 3]) {
    const db = await freshDatabase(`r${replicas}`);
    const dirs = Array.from({ length: replicas }, () => freshDir(options.dir, 'replica'));
    const running: ServiceProcess[] = [];
    try {
      progress(`starting ${replicas} replica(s) on one PostgreSQL database`);
      running.push(...(await Promise.all(dirs.map((dataDir) => spawnCompiledService({ dataDir, env: { DATABASE_URL: db.url, LOG_LEVEL: 'error' } })))));
      const ports = running.map((svc) => Number(new URL(svc.url).port));
      progress(`HTTP append load: ${options.clients} clients over ${replicas} replica(s), ${options.seconds}s (+1s warm-up)`);
      const cpuBefore = running.map((svc) => cpuSeconds(svc.pid));
      const done = await runWorker({ ports, clients: options.clients, seconds: options.seconds, warmup: 1, messages });
      const cpuAfter = running.map((svc) => cpuSeconds(svc.pid));
      const latencies = done.results.flatMap((r) => r.lat);
      const errors = done.results.reduce((s, r) => s + r.errors, 0);
      const throughput = latencies.length / ((done.end - done.start) / 1000);
      if (replicas === 1) single = throughput;
      const lat = summarize(latencies);
      const cpuUsed = cpuAfter.every((c, i) => c !== null && cpuBefore[i] !== null)
        ? cpuAfter.reduce<number>((sum, c, i) => sum + (c! - cpuBefore[i]!), 0)
        : null;
      // CPU of the replicas per acknowledged append (warm-up included in the CPU, so an upper bound).
      const cpuMsPerAppend = cpuUsed === null ? null : (cpuUsed * 1000) / Math.max(1, latencies.length);
      rows.push(
        {
          figure: 8,
          metric: `append throughput, ${replicas} replica${replicas > 1 ? 's' : ''} (events/s)`,
          value: round(throughput, 1),
          baseline: round(baseline.eventsPerSecond, 1),
          baselineName: 'raw pg INSERT',
          ratio: round(throughput / baseline.eventsPerSecond, 3),
        },
        {
          figure: 8,
          metric: `append latency p50 / p99, ${replicas} replica${replicas > 1 ? 's' : ''} (ms)`,
          value: `${round(lat.p50)} / ${round(lat.p99)}`,
          baseline: `${round(base.p50)} / ${round(base.p99)}`,
          baselineName: 'raw INSERT',
        },
        ...(cpuMsPerAppend === null
          ? []
          : [{ figure: 8, metric: `service CPU per append, ${replicas} replica${replicas > 1 ? 's' : ''} (ms)`, value: round(cpuMsPerAppend, 2) }]),
      );
      details[`replicas${replicas}`] = {
        throughput,
        scaleVsOne: single ? throughput / single : null,
        latency: lat,
        errors,
        requests: latencies.length,
        cpuMsPerAppend,
      };
    } finally {
      await Promise.all(running.map((svc) => svc.stop()));
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
      await db.drop();
    }
  }
  details.loadAverageAfter = os.loadavg();
  details.store = { oneAppender: storeOne, manyAppenders: storeMany };
  return {
    figure: 8,
    title,
    rows,
    details,
    notes: [
      `replicas are separate processes on this machine (${os.cpus().length} cores shared with PostgreSQL and the load generator); load average before/after: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
      'every append commits alone under the es_head row lock (positions in commit order), so the store side is bounded by one commit at a time; raw INSERTs commit concurrently',
    ],
  };
}
