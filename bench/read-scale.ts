/**
 * Micro-benchmark (capacity findings 2 and 3): whether a session summary, the session list and
 * recall limited to one session cost time in proportion to one session's history.
 *
 * Builds (once, then reuses) a read-model file in `READ_SCALE_DIR` (default `/tmp/read-scale`, one
 * file per read-model schema version) through the real `SessionProjector.applyBatch`:
 * `READ_SCALE_BACKGROUND` (default 100) sessions of 1,000 events each, then one session `long` of
 * `READ_SCALE_LONG` (default 100,000) events appended in batches of 1,000, each followed by a
 * sliding-window compaction keeping 200 (an `EventsArchived` and a `CompactionCompleted`, as the
 * capacity repro's `_long.sh` does; its first event is a system prompt no compaction archives,
 * as a pinned one), then a 2-event session `small`. Every text holds
 * `hotel reservation flight alpha bravo` (common words) and a unique token.
 *
 * Then measures, interleaved, `READ_SCALE_RUNS` (default 30) runs of each read and prints min /
 * median wall time and median CPU (user + system of the process) per read, in ms:
 * the summary of `long` and of `small`, the first page of the list (20, `long` on it), recall of
 * `reservation` unfiltered, limited to `long` (also `archived=true`, and `reservation flight`),
 * and of a unique token of `long`; then recall's selective filters on `long` (`reservation`, in
 * `newest` order): `archived=false` (its 200 active events, first and second page), the
 * `compactionId` of a compaction in the middle of it (with and without `sessionId`, and the
 * second page) and a `userId` nobody has. `READ_SCALE_ONLY` (a regular expression) keeps the reads
 * whose name it matches.
 *
 * Run: npx ts-node --transpile-only -r tsconfig-paths/register bench/read-scale.ts
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { ReadModelStore, SessionProjector, getSessionSummary, listSessionSummaries, searchRecall, type RecallSearch } from '@lib/session';
import { READ_MODEL_SCHEMA_VERSION } from '../libs/session/src/read-side/read-model-schema';
import { RecordedSessionLog, user, assistant, system } from '../libs/session/src/read-side/testing/recorded-session-log';

const DIR = process.env.READ_SCALE_DIR ?? '/tmp/read-scale';
const BACKGROUND = Number(process.env.READ_SCALE_BACKGROUND ?? 100);
const LONG = Number(process.env.READ_SCALE_LONG ?? 100_000);
const RUNS = Number(process.env.READ_SCALE_RUNS ?? 30);
const ONLY = new RegExp(process.env.READ_SCALE_ONLY ?? '');
const TEXT = 'hotel reservation flight alpha bravo';
/** Bumped when the data set changes (1: `long` starts with a system prompt never archived), so an older file is not reused. */
const DATA_SET = 1;

/** Projects the data set into `file` (a new file), 1,000 events per transaction. */
function build(file: string): void {
  const store = ReadModelStore.open(file);
  const projector = new SessionProjector(store);
  const log = new RecordedSessionLog();
  const flush = () => {
    projector.applyBatch(log.events);
    log.events.length = 0;
  };
  for (let s = 0; s < BACKGROUND; s++) {
    for (let k = 0; k < 1000; k++) log.append(`bg${s}`, (k % 2 ? assistant : user)(`b${k}`, `${TEXT} tokbg${s}n${k}`));
    flush();
  }
  // The system prompt stays active (as a pinned one does): the session's active events span all of it.
  log.append('long', system('sys', 'You are a travel agent.'));
  let kept: string[] = [];
  for (let b = 0; b < LONG / 1000; b++) {
    for (let j = 0; j < 1000; j++) {
      const k = b * 1000 + j;
      log.append('long', (j % 2 ? assistant : user)(`L${k}`, `${TEXT} toklongn${k}`));
      kept.push(`L${k}`);
    }
    const archived = kept.slice(0, kept.length - 200);
    kept = kept.slice(-200);
    log.archive('long', `c${b}`, archived);
    log.completed('long', `c${b}`, kept);
    flush();
  }
  log.append('small', user('a', TEXT));
  log.append('small', assistant('b', 'ok hotel reservation'));
  flush();
  store.close();
}

function main(): void {
  fs.mkdirSync(DIR, { recursive: true });
  const file = path.join(DIR, `v${READ_MODEL_SCHEMA_VERSION}-d${DATA_SET}-${BACKGROUND}-${LONG}.sqlite`);
  if (!fs.existsSync(file)) {
    const started = performance.now();
    build(`${file}.tmp`);
    for (const suffix of ['', '-wal', '-shm']) if (fs.existsSync(`${file}.tmp${suffix}`)) fs.renameSync(`${file}.tmp${suffix}`, `${file}${suffix}`);
    console.log(`built ${file} in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  const store = ReadModelStore.open(file);
  const tenantId = 'default';
  // A compaction in the middle of `long` (it archived 1,000 events), and the cursor of a filtered query's first page.
  const middle = `c${Math.floor(LONG / 2000)}`;
  const cursors = new Map<string, string | undefined>();
  const secondPage = (filters: Partial<RecallSearch>) => {
    const key = JSON.stringify(filters);
    if (!cursors.has(key)) cursors.set(key, searchRecall(store, { tenantId, q: 'reservation', ...filters }).nextCursor);
    return cursors.get(key);
  };
  const reads: Array<[string, () => unknown]> = [
    ['summary long', () => getSessionSummary(store, tenantId, 'long', 'chars')],
    ['summary small', () => getSessionSummary(store, tenantId, 'small', 'chars')],
    ['list limit=20', () => listSessionSummaries(store, { tenantId, estimator: 'chars', limit: 20 })],
    ['recall reservation', () => searchRecall(store, { tenantId, q: 'reservation' })],
    ['recall reservation sessionId=long', () => searchRecall(store, { tenantId, q: 'reservation', sessionId: 'long' })],
    ['recall reservation sessionId=long archived', () => searchRecall(store, { tenantId, q: 'reservation', sessionId: 'long', archived: true })],
    ['recall reservation flight sessionId=long', () => searchRecall(store, { tenantId, q: 'reservation flight', sessionId: 'long' })],
    ['recall unique token sessionId=long', () => searchRecall(store, { tenantId, q: `toklongn${Math.floor(LONG / 2)}`, sessionId: 'long' })],
    ['recall reservation sessionId=small', () => searchRecall(store, { tenantId, q: 'reservation', sessionId: 'small' })],
    ['recall reservation sessionId=long archived=false', () => searchRecall(store, { tenantId, q: 'reservation', sessionId: 'long', archived: false })],
    [
      'recall reservation sessionId=long archived=false, page 2',
      () => searchRecall(store, { tenantId, q: 'reservation', sessionId: 'long', archived: false, cursor: secondPage({ sessionId: 'long', archived: false }) }),
    ],
    ['recall reservation sessionId=long compactionId', () => searchRecall(store, { tenantId, q: 'reservation', sessionId: 'long', compactionId: middle })],
    ['recall reservation compactionId', () => searchRecall(store, { tenantId, q: 'reservation', compactionId: middle })],
    [
      'recall reservation compactionId, page 2',
      () => searchRecall(store, { tenantId, q: 'reservation', compactionId: middle, cursor: secondPage({ compactionId: middle }) }),
    ],
    ['recall reservation sessionId=long userId=nobody', () => searchRecall(store, { tenantId, q: 'reservation', sessionId: 'long', userId: 'nobody' })],
  ].filter(([name]) => ONLY.test(name as string)) as Array<[string, () => unknown]>;
  const wall = reads.map(() => [] as number[]);
  const cpu = reads.map(() => [] as number[]);
  for (const [, read] of reads) read(); // warm the statement caches
  for (let run = 0; run < RUNS; run++)
    reads.forEach(([, read], i) => {
      const c = process.cpuUsage();
      const t = performance.now();
      read();
      wall[i].push(performance.now() - t);
      const used = process.cpuUsage(c);
      cpu[i].push((used.user + used.system) / 1000);
    });
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(
    `read models v${READ_MODEL_SCHEMA_VERSION}, ${RUNS} runs, load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  reads.forEach(([name], i) =>
    console.log(
      `${name.padEnd(45)} wall min ${Math.min(...wall[i]).toFixed(2)} median ${median(wall[i]).toFixed(2)} ms, cpu median ${median(cpu[i]).toFixed(2)} ms`,
    ),
  );
  store.close();
}

main();
