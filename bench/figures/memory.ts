/**
 * Figure 7: resident memory of the service holding `sessions` × `eventsPerSession` events (10k ×
 * 50 in the full run). Measured in a child process (see memory-child.ts) so that the other
 * figures' garbage does not count, compiled to JavaScript in `.tmp/bench-build` first (tsc,
 * incremental: a second run compiles nothing) so that, as under `npm start`, no TypeScript
 * compiler sits in its memory (ts-node's adds about 110 MiB): RSS and V8 heap of the started, empty service (the baseline),
 * after the events are appended and projected, and after every session's state has been loaded
 * once through the write side's cache (at most 2,000 sessions stay cached).
 */
import { execFileSync, fork } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { round } from '../lib/stats';
import { progress, type FigureResult } from '../lib/report';

/** Options of {@link runMemory}. */
export interface MemoryOptions {
  sessions: number;
  eventsPerSession: number;
  dir?: string;
}

interface Mem {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

const MiB = 2 ** 20;

/** Runs figure 7. */
export async function runMemory(options: MemoryOptions): Promise<FigureResult> {
  const root = path.resolve(__dirname, '..', '..');
  const outDir = path.join(root, '.tmp', 'bench-build');
  progress('compiling the memory child (tsc, incremental)');
  execFileSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.bench-memory.json')], { cwd: root, stdio: 'inherit' });
  // The compiled service finds its audit page next to its own directory, as in the sources.
  const ui = path.join(outDir, 'apps', 'session-service', 'ui');
  if (!fs.existsSync(ui)) fs.symlinkSync(path.join(root, 'apps', 'session-service', 'ui'), ui, 'dir');
  const child = fork(
    path.join(outDir, 'bench', 'figures', 'memory-child.js'),
    [String(options.sessions), String(options.eventsPerSession), options.dir ?? ''],
    {
      execArgv: ['--expose-gc', '-r', 'tsconfig-paths/register'],
      env: { ...process.env, TS_NODE_BASEURL: outDir },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  );
  const result = await new Promise<{ sessions: number; eventsPerSession: number; seconds: number; before: Mem; appendedAndProjected: Mem; after: Mem }>(
    (resolve, reject) => {
      child.on('message', (msg: { progress?: string; result?: never; error?: string }) => {
        if (msg.progress) progress(msg.progress);
        if (msg.result) resolve(msg.result);
        if (msg.error) reject(new Error(msg.error));
      });
      child.on('exit', (code) => (code === 0 ? undefined : reject(new Error(`memory child exited with ${code}`))));
    },
  );
  const events = result.sessions * result.eventsPerSession;
  const { before, appendedAndProjected: mid, after } = result;
  return {
    figure: 7,
    title: 'resident memory',
    rows: [
      {
        figure: 7,
        metric: `RSS, ${result.sessions.toLocaleString('en-US')} sessions × ${result.eventsPerSession} events (MiB)`,
        value: round(after.rss / MiB, 1),
        baseline: round(before.rss / MiB, 1),
        baselineName: 'empty service',
        ratio: round(after.rss / before.rss, 2),
        target: 'report',
      },
      {
        figure: 7,
        metric: '  V8 heap used after (MiB)',
        value: round(after.heapUsed / MiB, 1),
        baseline: round(before.heapUsed / MiB, 1),
        baselineName: 'empty service',
      },
      { figure: 7, metric: '  RSS growth per 1,000 events (MiB)', value: round((after.rss - before.rss) / MiB / (events / 1000), 3) },
    ],
    details: { ...result, mib: { before: before.rss / MiB, appendedAndProjected: mid.rss / MiB, afterCacheLoads: after.rss / MiB } },
    notes: [`RSS after appending and projecting (before the cache loads): ${(mid.rss / MiB).toFixed(1)} MiB; filled in ${result.seconds.toFixed(1)} s`],
  };
}
