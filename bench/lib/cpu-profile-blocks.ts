/**
 * Event-loop blocks of a V8 CPU profile (`.cpuprofile`, as the inspector's `Profiler.stop` gives
 * it): the stretches between two turns of the event loop (marked by a 1 ms timer, see
 * {@link startTurnMarks}; a turn given with `setImmediate` shows no `(idle)` sample, so the profile
 * alone cannot tell them), longest first, each with the functions it spent its time in. Used to
 * find what holds the event loop in one stretch on a read (issue 14: the compaction diff).
 */
import * as fs from 'node:fs';
import { Session } from 'node:inspector/promises';

/** The parts of a V8 CPU profile used here. */
export interface CpuProfile {
  /** When sampling began (µs of the monotonic clock, as `process.hrtime`). */
  startTime: number;
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }>;
  /** Node id of each sample, in time order. */
  samples: number[];
  /** Microseconds since the previous sample, one per sample. */
  timeDeltas: number[];
}

/** A function's share of one block (ms of samples). */
export interface BlockShare {
  /** `name file:line` (line 1-based; the file's path from the repository's root when under it). */
  frame: string;
  ms: number;
}

/** One stretch of the event loop between two turn marks ({@link startTurnMarks}), i.e. one turn's work. */
export interface EventLoopBlock {
  /** Start, in ms since the first mark. */
  atMs: number;
  /** Wall time between the two marks, less the marks' own 1 ms timer (ms). */
  ms: number;
  /** CPU time the main thread ran between the two marks (ms; from Linux's schedstat, which load cannot inflate); null elsewhere. */
  cpuMs: number | null;
  /** Functions by self time (the time in the function itself), most first (ms of samples). */
  self: BlockShare[];
  /** The repository's own functions by inclusive time (the time with what they called), most first. */
  inclusive: BlockShare[];
}

const frameName = (callFrame: CpuProfile['nodes'][number]['callFrame'], root: string): string => {
  const file = callFrame.url.replace(/^file:\/\//, '').replace(root, '');
  return `${callFrame.functionName || '(anonymous)'} ${file}:${callFrame.lineNumber + 1}`;
};

const sorted = (shares: Map<string, number>, top: number): BlockShare[] =>
  [...shares.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([frame, us]) => ({ frame, ms: Math.round(us / 100) / 10 }));

/** One turn mark: when (µs of the monotonic clock V8's profiles use) and the main thread's CPU time then (µs, or null). */
export type TurnMark = [atUs: number, cpuUs: number | null];

const SCHEDSTAT = `/proc/${process.pid}/task/${process.pid}/schedstat`;

const mainThreadCpuUs = (): number | null => {
  try {
    return Number(fs.readFileSync(SCHEDSTAT, 'utf8').split(' ')[0]) / 1000;
  } catch {
    return null;
  }
};

/**
 * Marks the event loop's turns until the returned function is called (which resolves to the
 * marks): a 1 ms timer, re-armed each time it fires, records the time and the main thread's CPU
 * time. Between two marks the loop ran one stretch of work (or was idle): what the profile's
 * samples in between were is that stretch's work. Like `monitorEventLoopDelay`, it cannot see
 * inside a stretch.
 */
export function startTurnMarks(): () => TurnMark[] {
  const marks: TurnMark[] = [];
  let timer: NodeJS.Timeout;
  const mark = () => {
    marks.push([Number(process.hrtime.bigint() / 1000n), mainThreadCpuUs()]);
    timer = setTimeout(mark, 1);
  };
  mark();
  return () => {
    clearTimeout(timer);
    mark();
    clearTimeout(timer);
    return marks;
  };
}

/**
 * The stretches of at least `minMs` (default 5, of CPU when known, else of wall time) between two
 * of `marks`, longest first, each with the profile's `top` (default 8) functions by self time and
 * the repository's own functions (files under `root`, default the working directory, outside
 * `node_modules`) by inclusive time, from its samples in that stretch.
 */
export function eventLoopBlocks(
  profile: CpuProfile,
  marks: readonly TurnMark[],
  options: { minMs?: number; top?: number; root?: string } = {},
): EventLoopBlock[] {
  const { minMs = 5, top = 8, root = `${process.cwd()}/` } = options;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Each sample's time (µs) and node.
  const times: number[] = [];
  let at = profile.startTime;
  for (const d of profile.timeDeltas) times.push((at += d));
  const blocks: EventLoopBlock[] = [];
  let s = 0;
  for (let m = 1; m < marks.length; m++) {
    const [from, cpuFrom] = marks[m - 1];
    const [to, cpuTo] = marks[m];
    const cpuMs = cpuFrom !== null && cpuTo !== null ? (cpuTo - cpuFrom) / 1000 : null;
    const ms = Math.max(0, (to - from) / 1000 - 1);
    while (s < times.length && times[s] <= from) s++;
    if ((cpuMs ?? ms) < minMs) continue;
    const self = new Map<string, number>();
    const inclusive = new Map<string, number>();
    for (let i = s; i < times.length && times[i] <= to; i++) {
      const id = profile.samples[i];
      const d = i > 0 ? times[i] - times[i - 1] : 0;
      const node = byId.get(id)!;
      if (node.callFrame.functionName === '(idle)') continue;
      const name = frameName(node.callFrame, root);
      self.set(name, (self.get(name) ?? 0) + d);
      const seen = new Set<string>();
      for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
        const frame = byId.get(n)!.callFrame;
        if (!frame.url.includes(root) || frame.url.includes('/node_modules/')) continue;
        const own = frameName(frame, root);
        if (seen.has(own)) continue;
        seen.add(own);
        inclusive.set(own, (inclusive.get(own) ?? 0) + d);
      }
    }
    const round = (x: number) => Math.round(x * 10) / 10;
    blocks.push({
      atMs: Math.round((from - marks[0][0]) / 1000),
      ms: round(ms),
      cpuMs: cpuMs === null ? null : round(cpuMs),
      self: sorted(self, top),
      inclusive: sorted(inclusive, top),
    });
  }
  return blocks.sort((a, b) => (b.cpuMs ?? b.ms) - (a.cpuMs ?? a.ms));
}

/** The blocks as text lines: one per block, then its functions indented. */
export function formatBlocks(blocks: readonly EventLoopBlock[], count = 5): string {
  return blocks
    .slice(0, count)
    .map(
      (b) =>
        `block of ${b.cpuMs ?? '?'} ms of CPU (${b.ms} ms wall) at ${b.atMs} ms\n` +
        b.self.map((s) => `    self ${s.ms.toFixed(1).padStart(7)} ms  ${s.frame}`).join('\n') +
        '\n' +
        b.inclusive.map((s) => `    incl ${s.ms.toFixed(1).padStart(7)} ms  ${s.frame}`).join('\n'),
    )
    .join('\n');
}

/**
 * Profiles this process's main thread (the inspector's profiler, sampling every `intervalUs`,
 * default 200 µs) until the returned function is called, which resolves to the profile.
 */
export async function startCpuProfile(intervalUs = 200): Promise<() => Promise<CpuProfile>> {
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.post('Profiler.start');
  return async () => {
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    session.disconnect();
    return profile;
  };
}
