/**
 * Micro-benchmark (issue 14): what the read-side projector costs per appended event.
 *
 * Projects `PROJ_EVENTS` (default 6000) conversation events made from the τ-bench corpus' plain
 * user/assistant texts (the events of figure 1's load: 16 sessions, one text event per append,
 * token costs computed once per text) through the real `SessionProjector.applyBatch`, in batches of
 * `PROJ_BATCH` (default 9, what the append load gives) events per read-model transaction, into a
 * fresh read-model file in a disk-backed temporary directory (`PROJ_DIR`, default the OS temp dir).
 * Prints µs per event of CPU (user + system of the process) and of wall time, the median of
 * `PROJ_ROUNDS` (default 3) rounds, each round running every variant once in turn.
 *
 * Variants:
 * - `baseline`: the same events as plain rows (position, stream, JSON data) in one table without
 *   secondary index, same pragmas and batches: the reference the projector is compared to, so
 *   that the ratio survives a noisy shared machine;
 * - `projector`: the read models as the service writes them;
 * - `projector, old settings`: the same, as before issue 14's projector work (WAL checkpointed
 *   every 1000 pages, an index on the window order);
 * - with `--ablate`, experiments that change the schema after opening (not what the service does;
 *   they show what each part costs): each FTS index replaced by a plain table, each secondary
 *   index dropped;
 * - with `--settings`, connection and FTS5 settings that were measured and not kept;
 * - `projector, read models 15`: the service's read models with the `session_log_by_archive` of
 *   versions 13–15 (it also listed every row not archived: one more entry per event).
 *
 * With `--pages`, each variant also projects the events once more with the WAL never checkpointed
 * and prints the pages each commit wrote to it (WAL frames per transaction), by table or index
 * (SQLite's `dbstat`), after a first half of the events that fills the tables: each page is one
 * more write of the WAL at COMMIT, which is most of the projector's cost.
 *
 * Also prints the 99th percentile and the longest wall time of one batch (a checkpoint makes a
 * batch long). The service's projector runs on the event loop, so its CPU per event is what it
 * takes from request handling.
 *
 * Needs the shared τ-bench file (`../shared/data`, `SHARED_DIR` overrides); without it, prints one
 * line saying so and exits 0. Run:
 *   npx ts-node --transpile-only -r tsconfig-paths/register bench/projector-cost.ts [--ablate] [--settings]
 */
import Database from 'better-sqlite3';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import type { RecordedEvent } from '@lib/event-store';
import {
  CONVERSATION_EVENT,
  ReadModelStore,
  SessionProjector,
  computeEventCosts,
  createdTenantRecallIndexTables,
  type ConversationEventData,
  type RecallIndexTables,
} from '@lib/session';
import { loadTauBench, textMessages, TAU_BENCH_PATH } from './lib/corpus';
import { freshDir } from './lib/service';

const EVENTS = Number(process.env.PROJ_EVENTS ?? 6000);
const BATCH = Number(process.env.PROJ_BATCH ?? 9);
const ROUNDS = Number(process.env.PROJ_ROUNDS ?? 3);
const SESSIONS = 16;

/** One variant: how to open its database and apply one batch. */
interface Variant {
  name: string;
  /** `db`: the connection that writes, when the variant is the read models. */
  open(file: string): { applyBatch(events: readonly RecordedEvent[]): void; close(): void; db?: Database.Database };
}

/** The events of the run: `count` text events over {@link SESSIONS} sessions, positions from 1. */
function makeEvents(count: number): RecordedEvent[] {
  const conversations = loadTauBench();
  if (!conversations) throw new Error('no corpus');
  const texts = textMessages(conversations);
  const costs = texts.map((t) => computeEventCosts({ id: 'x', type: t.type, text: t.text }));
  const revisions = new Array<bigint>(SESSIONS).fill(0n);
  const out: RecordedEvent[] = [];
  const start = Date.now();
  for (let i = 0; i < count; i++) {
    const k = i % SESSIONS;
    const t = texts[i % texts.length];
    const data: ConversationEventData = { event: { id: `r${i}.0`, type: t.type, text: t.text }, costs: costs[i % texts.length] };
    out.push({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      type: CONVERSATION_EVENT,
      data,
      metadata: { tenantId: 'default', sessionId: `load-${k}` },
      streamId: `session-default.load-${k}`,
      revision: revisions[k]++,
      position: BigInt(i + 1),
      created: new Date(start + i),
    });
  }
  return out;
}

/**
 * The service's read models, optionally with `alter` run on the connection after opening, the
 * recall indexes of the bench's tenant (`default`) made (`recall`, their names, as it gets them).
 */
function projectorVariant(name: string, alter?: (db: Database.Database, recall: RecallIndexTables) => void): Variant {
  return {
    name,
    open(file) {
      const store = ReadModelStore.open(file);
      if (alter)
        alter(
          store.db,
          store.transaction(() => createdTenantRecallIndexTables(store.db, 'default')),
        );
      const projector = new SessionProjector(store);
      return { applyBatch: (events) => projector.applyBatch(events), close: () => store.close(), db: store.db };
    },
  };
}

const baseline: Variant = {
  name: 'baseline',
  open(file) {
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('CREATE TABLE log (position INTEGER PRIMARY KEY, stream TEXT NOT NULL, data_json TEXT NOT NULL)');
    const insert = db.prepare('INSERT INTO log (position, stream, data_json) VALUES (?, ?, ?)');
    const batch = db.transaction((events: readonly RecordedEvent[]) => {
      for (const e of events) insert.run(e.position, e.streamId, JSON.stringify(e.data));
    });
    return { applyBatch: (events) => batch.immediate(events), close: () => db.close() };
  },
};

/** Replaces an FTS5 table by a plain table of the same name and columns (the body is stored, not indexed). */
const withoutFts = (table: string) => (db: Database.Database) => db.exec(`DROP TABLE ${table}; CREATE TABLE ${table} (body TEXT)`);
const withoutIndex = (index: string) => (db: Database.Database) => db.exec(`DROP INDEX ${index}`);

/** The read models with `session_log_by_archive` as versions 13–15 made it (rows not archived listed too). */
const readModels15 = projectorVariant('projector, read models 15', (db) =>
  db.exec('DROP INDEX session_log_by_archive; CREATE INDEX session_log_by_archive ON session_log (archived_by, session_key, position) WHERE kind IS NOT NULL'),
);

/** The read models as they were before issue 14's projector work: checkpoint every 1000 pages, an index on the window order. */
const before = projectorVariant('projector, old settings', (db) => {
  db.pragma('wal_autocheckpoint = 1000');
  db.exec('CREATE INDEX window_entries_order ON window_entries (session_key, anchor_revision, revision)');
});

const ABLATIONS: Variant[] = [
  projectorVariant('no word index', (db, recall) => withoutFts(recall.words)(db)),
  projectorVariant('no FTS at all', (db, recall) => {
    withoutFts(recall.words)(db);
    withoutFts(recall.trigrams)(db);
  }),
  ...['session_log_by_revision', 'sessions_by_activity'].map((index) => projectorVariant(`no ${index}`, withoutIndex(index))),
  // Unique indexes stay: the writer's upserts need them (ON CONFLICT).
  projectorVariant('no secondary index but the unique ones', (db) => {
    const indexes = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%'")
      .pluck()
      .all() as string[];
    for (const index of indexes) withoutIndex(index)(db);
  }),
];

const pragmas =
  (...statements: string[]) =>
  (db: Database.Database) => {
    for (const statement of statements) db.pragma(statement);
  };
const ftsOption = (option: string, value: number) => (db: Database.Database, recall: RecallIndexTables) =>
  db.exec(`INSERT INTO ${recall.words} (${recall.words}, rank) VALUES ('${option}', ${value})`);

/** Settings measured and not kept (issue 14): none paid more than the noise. */
const SETTINGS: Variant[] = [
  projectorVariant('wal_autocheckpoint 4000', pragmas('wal_autocheckpoint = 4000')),
  projectorVariant('wal_autocheckpoint 0 (never)', pragmas('wal_autocheckpoint = 0')),
  projectorVariant('cache_size 16 MiB', pragmas('cache_size = -16000')),
  projectorVariant('mmap_size 1 GiB', pragmas('mmap_size = 1073741824')),
  projectorVariant('temp_store memory', pragmas('temp_store = MEMORY')),
  projectorVariant('fts automerge 8', ftsOption('automerge', 8)),
  projectorVariant('fts crisismerge 64', ftsOption('crisismerge', 64)),
  projectorVariant('fts pgsz 4000', ftsOption('pgsz', 4000)),
];

/** µs per event (CPU, of which system, and wall); ms per batch (wall: 99th percentile and most). */
interface Measure {
  cpu: number;
  sys: number;
  wall: number;
  p99: number;
  max: number;
}

/** CPU and wall µs per event of one run of `variant` over `events`. */
function run(variant: Variant, events: readonly RecordedEvent[], root: string): Measure {
  const dir = fs.mkdtempSync(path.join(root, 'v-'));
  const target = variant.open(path.join(dir, 'read-models.sqlite'));
  try {
    const cpu0 = process.cpuUsage();
    const wall0 = performance.now();
    const batches: number[] = [];
    for (let i = 0; i < events.length; i += BATCH) {
      const t0 = performance.now();
      target.applyBatch(events.slice(i, i + BATCH));
      batches.push(performance.now() - t0);
    }
    const cpu = process.cpuUsage(cpu0);
    const wall = performance.now() - wall0;
    batches.sort((a, b) => a - b);
    return {
      cpu: (cpu.user + cpu.system) / events.length,
      sys: cpu.system / events.length,
      wall: (wall * 1000) / events.length,
      p99: batches[Math.floor(batches.length * 0.99)],
      max: batches[batches.length - 1],
    };
  } finally {
    target.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * WAL pages per commit of `variant` (the second half of `events`, after the first half filled the
 * tables), in all and by table or index name, largest first. `variant` must give its connection.
 */
function pagesPerCommit(variant: Variant, events: readonly RecordedEvent[], root: string): { total: number; byName: Array<[string, number]> } {
  const dir = fs.mkdtempSync(path.join(root, 'p-'));
  const file = path.join(dir, 'read-models.sqlite');
  const target = variant.open(file);
  const db = target.db!;
  try {
    const half = Math.floor(events.length / 2 / BATCH) * BATCH;
    for (let i = 0; i < half; i += BATCH) target.applyBatch(events.slice(i, i + BATCH));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('wal_autocheckpoint = 0');
    let commits = 0;
    for (let i = half; i < events.length; i += BATCH, commits++) target.applyBatch(events.slice(i, i + BATCH));
    const wal = fs.readFileSync(`${file}-wal`);
    const pageSize = wal.readUInt32BE(8);
    const names = new Map<number, string>();
    for (const row of db.prepare('SELECT name, pageno FROM dbstat').all() as Array<{ name: string; pageno: number }>) names.set(row.pageno, row.name);
    const counts = new Map<string, number>();
    let frames = 0;
    for (let offset = 32; offset + 24 + pageSize <= wal.length; offset += 24 + pageSize, frames++) {
      const name = names.get(wal.readUInt32BE(offset)) ?? 'other (header, free pages)';
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    return { total: frames / commits, byName: [...counts].map(([name, n]): [string, number] => [name, n / commits]).sort((a, b) => b[1] - a[1]) };
  } finally {
    target.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function main(): void {
  if (!fs.existsSync(TAU_BENCH_PATH)) {
    process.stdout.write(`projector-cost: skipped (the τ-bench corpus ${TAU_BENCH_PATH} is absent)\n`);
    return;
  }
  const variants = [
    baseline,
    projectorVariant('projector'),
    readModels15,
    before,
    ...(process.argv.includes('--ablate') ? ABLATIONS : []),
    ...(process.argv.includes('--settings') ? SETTINGS : []),
  ];
  const events = makeEvents(EVENTS);
  const root = freshDir(process.env.PROJ_DIR, 'projector-cost');
  const results = new Map<string, Measure[]>(variants.map((v) => [v.name, []]));
  try {
    run(variants[1], events.slice(0, 1000), root); // warm-up (JIT)
    for (let round = 0; round < ROUNDS; round++) for (const v of variants) results.get(v.name)!.push(run(v, events, root));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
  process.stdout.write(`projector-cost: ${EVENTS} events, ${BATCH} per transaction, median of ${ROUNDS} rounds (µs per event)\n`);
  const base = median(results.get('baseline')!.map((r) => r.cpu));
  for (const [name, rs] of results) {
    const cpu = median(rs.map((r) => r.cpu));
    const wall = median(rs.map((r) => r.wall));
    const sys = median(rs.map((r) => r.sys));
    const p99 = median(rs.map((r) => r.p99));
    const max = median(rs.map((r) => r.max));
    process.stdout.write(
      `${name.padEnd(38)} cpu ${cpu.toFixed(1).padStart(6)} (sys ${sys.toFixed(1).padStart(5)})  wall ${wall.toFixed(1).padStart(6)}  cpu/baseline ${(cpu / base).toFixed(2)}  batch p99 ${p99.toFixed(1)} ms, max ${max.toFixed(1)} ms\n`,
    );
  }
  if (!process.argv.includes('--pages')) return;
  const pagesRoot = freshDir(process.env.PROJ_DIR, 'projector-pages');
  try {
    for (const variant of variants.slice(1)) {
      const pages = pagesPerCommit(variant, events, pagesRoot);
      const parts = pages.byName.filter(([, n]) => n >= 0.5).map(([name, n]) => `${name} ${n.toFixed(1)}`);
      process.stdout.write(`${variant.name.padEnd(38)} WAL pages per commit ${pages.total.toFixed(1)}: ${parts.join(', ')}\n`);
    }
  } finally {
    fs.rmSync(pagesRoot, { recursive: true, force: true });
  }
}

main();
