/**
 * What time travel costs on a long session with a small window (newcomer nclongrun F2): the window
 * at a past revision (`GET …/window?atRevision=`, and `atTime`, which resolves to a revision and
 * reads the same) and a compaction's diff (`GET …/compactions/{id}/diff`), computed from the log.
 *
 * Builds one session of `TT_EVENTS` events (default 20,000) through the real append and compaction
 * handlers: a system prompt, then user / assistant events of ~90 characters appended
 * `TT_EVERY` (default 100) a request, each request followed by a sliding-window compaction keeping
 * `TT_KEEP` (default 150) events, so the window stays ~150 events whatever the log's length. Then
 * measures, interleaved, `TT_REPEAT` (default 30) runs of each read, new and old in the same
 * process on the same store:
 *
 * - `atRevision` at the latest revision, in the middle of the log and near its start: the new
 *   `loadSessionWindowAt` (from the last compaction decision at or before it) against
 *   `replaySessionWindowAt` (the fold from revision 0 it replaced);
 * - the diff's two windows of the last compaction: `compactionWindows` against `replayCompactionWindows`;
 * - the projected window (the read models' rows, `getWindowInTurns`: what `GET …/window` without
 *   `atRevision` reads), as the reference a read of ~150 events costs.
 *
 * Per read it prints median, p90 and min wall time (ms), the events read from the store per call,
 * and the ratio old / new of the medians; then the machine (CPU, cores, Node) and the load average
 * before and after. Stores: the arguments, `sqlite` and / or `postgres` (default both; PostgreSQL at
 * `BENCH_DATABASE_URL`, default `postgres://postgres@127.0.0.1:5432/postgres`, on a database of its
 * own, `timetravel_bench_<hex>`, created and dropped; skipped with one line when none answers).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/time-travel-cost.ts [sqlite|postgres]...
 */
import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import type { EventBus } from '@nestjs/cqrs';
import { parseStrategy, type SessionEvent } from '@lib/compaction';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { ReadModelStore, SessionProjector } from '@lib/session';
import { ExtractiveSummarizer } from '../libs/session/src/summarizers/extractive-summarizer';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from '../libs/session/src/write-side/append-session-events';
import { CompactSessionCommand, CompactSessionHandler } from '../libs/session/src/write-side/compact-session';
import { SessionStateCache } from '../libs/session/src/write-side/session-state-cache';
import { loadSessionWindowAt } from '../libs/session/src/write-side/session-loader';
import { replayCompactionWindows, replaySessionWindowAt } from '../libs/session/src/write-side/testing/full-replay';
import { compactionWindows } from '../libs/session/src/queries/compaction-windows';
import { getWindowInTurns } from '../libs/session/src/read-side/queries/window-query';
import { COMPACTION_COMPLETED, sessionKey, sessionStream } from '../libs/session/src/events/session-stream-events';
import { orderedWindow } from '../libs/session/src/domain/session-window';
import { machineInfo } from './lib/report';
import { nowMs, percentile } from './lib/stats';

const EVENTS = Number(process.env.TT_EVENTS ?? 20_000);
const EVERY = Number(process.env.TT_EVERY ?? 100);
const KEEP = Number(process.env.TT_KEEP ?? 150);
const REPEAT = Number(process.env.TT_REPEAT ?? 30);
const DATABASE_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TENANT = 't';
const SESSION = 'long';
const noBus = { publish: () => undefined } as unknown as EventBus;

/** `store` with a counter of the events its `readStream` returned since the last `take()`. */
function countingReads(store: EventStore): { store: EventStore; take: () => number } {
  let read = 0;
  const counting: EventStore = Object.create(store);
  counting.readStream = async (stream, options) => {
    const events = await store.readStream(stream, options);
    read += events.length;
    return events;
  };
  return {
    store: counting,
    take: () => {
      const n = read;
      read = 0;
      return n;
    },
  };
}

/** Appends the session (see the module doc) and projects it into `readModels`. */
async function build(store: EventStore, readModels: ReadModelStore): Promise<void> {
  const cache = new SessionStateCache(store);
  const append = new AppendSessionEventsHandler(store, cache, noBus);
  const compact = new CompactSessionHandler(store, cache, new ExtractiveSummarizer());
  const strategy = parseStrategy({ type: 'sliding-window', maxEvents: KEEP });
  await append.execute(new AppendSessionEventsCommand(TENANT, SESSION, [{ event: { id: 'sys', type: 'system', text: 'You are a travel agent.' } }]));
  let k = 0;
  let total = 1;
  const started = nowMs();
  // Each request adds EVERY events and its compaction 2 (EventsArchived, CompactionCompleted).
  for (; total + EVERY + 2 <= EVENTS; total += EVERY + 2) {
    const events = Array.from({ length: EVERY }, (_, j): { event: SessionEvent } => {
      const n = k + j;
      return {
        event: { id: `e${n}`, type: n % 2 ? 'assistant' : 'user', text: `hotel reservation flight alpha bravo charlie delta echo foxtrot golf tok${n}` },
      };
    });
    await append.execute(new AppendSessionEventsCommand(TENANT, SESSION, events));
    await compact.execute(new CompactSessionCommand(TENANT, SESSION, strategy, null, 'chars', false));
    k += EVERY;
    if (k % 5000 === 0) process.stderr.write(`  … ${k.toLocaleString('en-US')} events appended (${((nowMs() - started) / 1000).toFixed(1)} s)\n`);
  }
  const projector = new SessionProjector(readModels);
  for (let after = 0n; ;) {
    const page = await store.readAll({ fromPosition: after, maxCount: 2000 });
    if (page.length === 0) break;
    projector.applyBatch(page);
    after = page[page.length - 1].position;
  }
}

interface Read {
  name: string;
  run: () => Promise<number>;
}

/** Runs `reads` interleaved `REPEAT` times; per read: wall times (ms) and the events read in its last run. */
async function measure(reads: readonly Read[], counter: { take: () => number }): Promise<Map<string, { times: number[]; read: number; size: number }>> {
  const results = new Map(reads.map((r) => [r.name, { times: [] as number[], read: 0, size: 0 }]));
  for (const r of reads) await r.run(); // warm-up
  for (let i = 0; i < REPEAT; i++) {
    for (const r of reads) {
      counter.take();
      const t0 = nowMs();
      const size = await r.run();
      const result = results.get(r.name)!;
      result.times.push(nowMs() - t0);
      result.read = counter.take();
      result.size = size;
    }
  }
  return results;
}

async function runOn(name: string, store: EventStore): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'time-travel-cost-'));
  const readModels = ReadModelStore.open(path.join(dir, 'read-models.sqlite'));
  try {
    const t0 = nowMs();
    await build(store, readModels);
    const key = sessionKey(TENANT, SESSION);
    const stream = sessionStream(key);
    const last = (await store.streamRevision(stream))!;
    const [closing] = await store.readStream(stream, { direction: 'backwards', maxCount: 1 });
    if (closing.type !== COMPACTION_COMPLETED) throw new Error(`the log ends with ${closing.type}, not a compaction`);
    const firstRevision = closing.revision - 1n; // its EventsArchived
    process.stderr.write(`  … ${name}: ${(last + 1n).toLocaleString('en-US')} events built and projected in ${((nowMs() - t0) / 1000).toFixed(1)} s\n`);
    const counter = countingReads(store);
    const at = (revision: bigint, label: string): Read[] => [
      { name: `atRevision ${label} (${revision}), new`, run: async () => orderedWindow((await loadSessionWindowAt(counter.store, key, revision))!).length },
      { name: `atRevision ${label} (${revision}), old`, run: async () => orderedWindow((await replaySessionWindowAt(counter.store, key, revision))!).length },
    ];
    const reads: Read[] = [
      { name: 'projected window (read models)', run: async () => (await getWindowInTurns(readModels, TENANT, SESSION))!.entries.length },
      ...at(last, 'latest'),
      ...at(last / 2n, 'middle'),
      ...at(200n, 'near the start'),
      {
        name: 'diff windows of the last compaction, new',
        run: async () => (await compactionWindows(counter.store, stream, firstRevision, closing.revision)).before.entries.length,
      },
      {
        name: 'diff windows of the last compaction, old',
        run: async () => (await replayCompactionWindows(counter.store, stream, firstRevision, closing.revision)).before.entries.length,
      },
    ];
    const results = await measure(reads, counter);
    console.log(`\n${name}: one session of ${(last + 1n).toLocaleString('en-US')} events, window ~${KEEP + 1} events, ${REPEAT} interleaved runs each (ms)`);
    console.log('| read | median | p90 | min | window | events read | old / new (median) |');
    console.log('| --- | --- | --- | --- | --- | --- | --- |');
    for (const [read, r] of results) {
      const old = read.endsWith(', new') ? results.get(read.replace(/, new$/, ', old')) : undefined;
      const ratio = old ? `${(percentile(old.times, 50) / percentile(r.times, 50)).toFixed(1)}×` : '';
      const cells = [percentile(r.times, 50), percentile(r.times, 90), Math.min(...r.times)].map((x) => x.toFixed(2));
      console.log(
        `| ${read} | ${cells.join(' | ')} | ${r.size} | ${read.startsWith('projected') ? '(read models)' : r.read.toLocaleString('en-US')} | ${ratio} |`,
      );
    }
  } finally {
    readModels.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function withPostgres(fn: (store: EventStore) => Promise<void>): Promise<void> {
  const name = `timetravel_bench_${randomBytes(4).toString('hex')}`;
  const admin = new Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (err) {
    console.log(`\npostgres: skipped, no PostgreSQL answers at ${DATABASE_URL.replace(/\/\/[^@]*@/, '//')} (${(err as Error).message})`);
    return;
  }
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  const store = PostgresEventStore.connect(url.toString());
  try {
    await fn(store);
  } finally {
    await store.close();
    await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
    await admin.end();
  }
}

async function main(): Promise<void> {
  const stores = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['sqlite', 'postgres'];
  const loadBefore = os.loadavg();
  for (const name of stores) {
    if (name === 'sqlite') {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'time-travel-sqlite-'));
      const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
      try {
        await runOn('sqlite', store);
      } finally {
        await store.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    } else if (name === 'postgres') await withPostgres((store) => runOn('postgres', store));
    else throw new Error(`unknown store ${name}: sqlite or postgres`);
  }
  const m = machineInfo();
  const load = (l: number[]) => l.map((x) => x.toFixed(1)).join(' ');
  console.log(
    `\n${m.cpuModel}, ${m.cores} cores, ${m.totalMemGiB} GiB, Node ${m.node}, ${m.platform}, ${m.date}; load average ${load(loadBefore)} before, ${load(os.loadavg())} after`,
  );
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
