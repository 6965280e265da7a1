/**
 * Figure 7: resident memory of the service, compiled to JavaScript (see compiled-service.ts).
 *
 * - Empty: the service as `npm start` runs it (`node -r tsconfig-paths/register …/main.js`,
 *   default settings, embedded SQLite in a fresh data directory), in its own process: VmRSS from
 *   `/proc/<pid>/status` once it has answered `GET /health` twice, a second apart, and again after
 *   `idleSeconds` without requests (full run: 30 s). The rows with the target (< 180 MiB).
 * - Filled with `sessions` × `eventsPerSession` events (10k × 50 in the full run): a child process
 *   (memory-child.ts, compiled in the same build, run with --expose-gc so that a compacting
 *   collection precedes each measure, read once the resident set has settled, ~0.5 s later: see
 *   `memory` there for why, the figure varied 350–740 MiB between runs without): RSS and V8 heap of its started, empty service (the growth's baseline),
 *   after the events are appended and projected, and after every session's state has been loaded
 *   once through the write side's cache (at most 2,000 sessions stay cached).
 */
import { fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { processMemory, type MemoryReading, type ProcessMemory } from '../lib/process-memory';
import { round } from '../lib/stats';
import { progress, type FigureResult, type FigureRow } from '../lib/report';
import { freshDir } from '../lib/service';
import { BENCH_BUILD_DIR, npmStartNodeOptions, spawnCompiledService, startBenchBuild } from '../lib/compiled-service';

/** Options of {@link runMemory}. */
export interface MemoryOptions {
  sessions: number;
  eventsPerSession: number;
  /** Seconds the empty service idles after its start before its second reading (0: no second reading). */
  idleSeconds: number;
  dir?: string;
}

const MiB = 2 ** 20;

/**
 * The empty service as `npm start` runs it: its resident memory after two `GET /health`, a second
 * apart (`started`), and again after `idleSeconds` more without requests (`idle`; `null` when 0).
 * `null` readings without `/proc`.
 */
async function emptyServiceAsStarted(root: string | undefined, idleSeconds: number): Promise<{ started: ProcessMemory | null; idle: ProcessMemory | null }> {
  const dataDir = freshDir(root, 'memory-empty');
  progress('the empty service as npm start runs it (compiled, default settings)');
  const service = await spawnCompiledService({ dataDir, env: { LOG_LEVEL: 'info' } });
  try {
    for (let i = 0; i < 2; i++) {
      if (i > 0) await sleep(1000);
      const res = await fetch(`${service.url}/health`);
      if (res.status !== 200) throw new Error(`GET /health answered ${res.status}: ${await res.text()}`);
    }
    const started = processMemory(service.pid);
    if (idleSeconds <= 0) return { started, idle: null };
    progress(`the empty service idles ${idleSeconds} s`);
    await sleep(idleSeconds * 1000);
    return { started, idle: processMemory(service.pid) };
  } finally {
    await service.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/** What a resident set is made of, in words: anonymous and file-backed MiB, glibc malloc's secondary arenas, threads. */
function composition(m: ProcessMemory): string {
  const mib = (n: number | null) => (n === null ? 'n/a' : (n / MiB).toFixed(1));
  const arenas = m.arenaHeaps ? `, of which ${mib(m.arenaHeaps.rss)} in ${m.arenaHeaps.heaps} malloc arena heaps of 64 MiB` : '';
  return `RssAnon ${mib(m.anon)} MiB${arenas} and ${mib(m.brkHeap)} in the brk heap, RssFile ${mib(m.file)} MiB, ${m.threads ?? 'n/a'} threads`;
}

/** Runs figure 7. */
export async function runMemory(options: MemoryOptions): Promise<FigureResult> {
  const { started, idle } = await emptyServiceAsStarted(options.dir, options.idleSeconds);
  await startBenchBuild();
  const child = fork(
    path.join(BENCH_BUILD_DIR, 'bench', 'figures', 'memory-child.js'),
    [String(options.sessions), String(options.eventsPerSession), options.dir ?? ''],
    {
      execArgv: ['--expose-gc', '-r', 'tsconfig-paths/register'],
      // npm start's default NODE_OPTIONS (V8's heap settings), as the empty service above runs.
      env: { ...process.env, TS_NODE_BASEURL: BENCH_BUILD_DIR, NODE_OPTIONS: npmStartNodeOptions() },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  // Not left running when the bench exits first (Ctrl-C).
  const killChild = () => child.kill('SIGKILL');
  process.once('exit', killChild);
  child.once('exit', () => process.off('exit', killChild));
  const result = await new Promise<{
    sessions: number;
    eventsPerSession: number;
    seconds: number;
    before: MemoryReading;
    appendedAndProjected: MemoryReading;
    after: MemoryReading;
  }>((resolve, reject) => {
    child.on('message', (msg: { progress?: string; result?: never; error?: string }) => {
      if (msg.progress) progress(msg.progress);
      if (msg.result) resolve(msg.result);
      if (msg.error) reject(new Error(msg.error));
    });
    child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`memory child exited with ${code}`))));
  });
  const events = result.sessions * result.eventsPerSession;
  const { before, appendedAndProjected: mid, after } = result;
  const emptyRow: FigureRow = started
    ? {
        figure: 7,
        metric: 'RSS of the empty service as `npm start` runs it, after GET /health (MiB)',
        value: round(started.rss / MiB, 1),
        target: '< 180',
        met: started.rss < 180 * MiB,
      }
    : { figure: 7, metric: 'RSS of the empty service as `npm start` runs it (MiB)', value: 'n/a (no /proc)' };
  const idleRows: FigureRow[] = idle
    ? [
        {
          figure: 7,
          metric: `  the same after ${options.idleSeconds} s idle (MiB)`,
          value: round(idle.rss / MiB, 1),
          target: '< 180',
          met: idle.rss < 180 * MiB,
        },
      ]
    : [];
  return {
    figure: 7,
    title: 'resident memory',
    rows: [
      emptyRow,
      ...idleRows,
      {
        figure: 7,
        metric: `RSS, ${result.sessions.toLocaleString('en-US')} sessions × ${result.eventsPerSession} events (MiB)`,
        value: round(after.rss / MiB, 1),
        baseline: round(before.rss / MiB, 1),
        baselineName: 'empty, same process',
        ratio: round(after.rss / before.rss, 2),
        target: 'report',
      },
      {
        figure: 7,
        metric: '  V8 heap used after (MiB)',
        value: round(after.heapUsed / MiB, 1),
        baseline: round(before.heapUsed / MiB, 1),
        baselineName: 'empty, same process',
      },
      { figure: 7, metric: '  RSS growth per 1,000 events (MiB)', value: round((after.rss - before.rss) / MiB / (events / 1000), 3) },
    ],
    details: {
      ...result,
      emptyAsStarted: started,
      emptyAfterIdle: idle,
      mib: {
        emptyAsStarted: started ? started.rss / MiB : null,
        emptyAfterIdle: idle ? idle.rss / MiB : null,
        before: before.rss / MiB,
        appendedAndProjected: mid.rss / MiB,
        afterCacheLoads: after.rss / MiB,
      },
    },
    notes: [
      `RSS after appending and projecting (before the cache loads): ${(mid.rss / MiB).toFixed(1)} MiB; filled in ${result.seconds.toFixed(1)} s`,
      ...(started ? [`empty service as started: peak RSS while starting ${(started.peak / MiB).toFixed(1)} MiB; ${composition(started)}`] : []),
      ...(idle ? [`empty service after ${options.idleSeconds} s idle: ${composition(idle)}`] : []),
      ...(before.proc ? [`filled child, empty: ${composition(before.proc)}`] : []),
      ...(after.proc
        ? [
            `filled child, after: ${composition(after.proc)}; V8 heap total ${(after.heapTotal / MiB).toFixed(1)} MiB, external ${(after.external / MiB).toFixed(1)} MiB`,
          ]
        : []),
      `filled child, after: V8 heap spaces committed / used (MiB): ${Object.entries(after.spaces)
        .filter(([, sp]) => sp.size >= MiB)
        .map(([name, sp]) => `${name.replace(/_space$/, '')} ${(sp.size / MiB).toFixed(1)} / ${(sp.used / MiB).toFixed(1)}`)
        .join(', ')}`,
      `RSS right after each forced collection, before V8's background threads returned the pages it freed: empty ${(before.rssAtCollection / MiB).toFixed(1)}, filled ${(mid.rssAtCollection / MiB).toFixed(1)}, after the cache loads ${(after.rssAtCollection / MiB).toFixed(1)} MiB (the figures above are read once it settled, ${after.settledAfterMs} ms later)`,
    ],
  };
}
