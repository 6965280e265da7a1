/**
 * Measures what reading back a session costs the event loop (the window, the window as OpenAI
 * messages, the log, the window at a past revision): a session holding one 1,000,000-character
 * event (3 MB of UTF-8), and a normal one (400 entries of ~200 characters).
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/read-stall.ts
 *
 * The service runs in this process (so its event loop can be observed); the reads come from one
 * child process and `/health` probes (every 5 ms after each answer) from another, so neither
 * client's own work is counted. For each read it prints: the client's wall time per read (median),
 * the event loop's busy time per read (event-loop utilisation over the phase, less what the
 * probes alone cost per second) and the process's CPU time per read (likewise; the steadier figure
 * on a shared machine, where a busy loop also counts the time the process waited for a core), the longest event-loop stall seen (monitorEventLoopDelay's max)
 * and the slowest probe. `READ_STALL_REPEAT` (default 10) large reads and 10× as many small ones.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { benchWithService } from './lib/service';
import { startHealthProber } from '../test/support/health-prober';
import { READER } from './lib/sequential-reader';

const BIG = 1_000_000;
const REPEAT = Number(process.env.READ_STALL_REPEAT ?? 10);

/** A text of `n` code points: ideographs in short words, with quotes, backslashes, newlines and an emoji now and then. */
function bigText(n: number): string {
  const parts: string[] = [];
  let length = 0;
  for (let i = 0; length < n; i++) {
    const word = i % 50 === 0 ? '"引号\\\n😀' : String.fromCharCode(0x4e00 + ((i * 7919) % 20000)).repeat(1 + (i % 7)) + ' ';
    parts.push(word);
    length += [...word].length;
  }
  return [...parts.join('')].slice(0, n).join('');
}

interface PhaseResult {
  path: string;
  reads: number;
  bytes: number;
  medianWallMs: number;
  busyMsPerRead: number;
  cpuMsPerRead: number;
  maxStallMs: number;
  probes: number;
  slowestProbeMs: number;
}

/** User + system CPU of a `process.cpuUsage` delta, in ms. */
const cpuMs = (u: NodeJS.CpuUsage) => (u.user + u.system) / 1000;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

benchWithService('read-stall', async (running, client) => {
  const big = await client.request('POST', '/v1/sessions/big/events', {
    events: [
      { id: 's', type: 'system', text: 'You are helpful.' },
      { id: 'big', type: 'user', text: bigText(BIG) },
      { id: 'a', type: 'assistant', text: 'ok' },
    ],
  });
  if (big.status !== 201) throw new Error(`append: ${big.status} ${JSON.stringify(big.body)}`);
  const small = Array.from({ length: 400 }, (_, i) => ({
    id: `e${i}`,
    type: i % 2 ? 'assistant' : 'user',
    text: `message ${i}: ${'the quick brown fox jumps over the lazy dog, '.repeat(5).slice(0, 190)}`,
  }));
  const smallRes = await client.request('POST', '/v1/sessions/small/events', { events: small });
  if (smallRes.status !== 201) throw new Error(`append: ${smallRes.status}`);
  // Projected before the measurement starts.
  await client.request('GET', '/v1/sessions/big?minPosition=0');
  await client.request('GET', `/v1/sessions/small`);

  const elu = performance.eventLoopUtilization;
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();

  // Baseline: what the probes alone cost the event loop per second.
  const baseProber = await startHealthProber(running.baseUrl, 5);
  const b0 = elu();
  const c0 = process.cpuUsage();
  const bt = performance.now();
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const baseBusyPerMs = elu(b0).active / (performance.now() - bt);
  const baseCpuPerMs = cpuMs(process.cpuUsage(c0)) / (performance.now() - bt);
  const base = await baseProber.stop();
  process.stderr.write(
    `baseline: ${base.latencies.length} probes, slowest ${Math.max(...base.latencies)} ms; probes cost ${(baseBusyPerMs * 1000).toFixed(1)} ms/s\n`,
  );

  const phase = async (urlPath: string, reads: number): Promise<PhaseResult> => {
    const prober = await startHealthProber(running.baseUrl, 5);
    const child = spawn(process.execPath, ['-e', READER, `${running.baseUrl}${urlPath}`, String(reads)]);
    let out = '';
    let started: { elu: ReturnType<typeof elu>; cpu: NodeJS.CpuUsage; t: number } | undefined;
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (!started && out.startsWith('start\n')) {
          delay.reset();
          started = { elu: elu(), cpu: process.cpuUsage(), t: performance.now() };
          resolve();
        }
      }),
    );
    child.stderr.on('data', (c: Buffer) => process.stderr.write(c));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    await ready;
    await exited;
    const used = elu(started!.elu);
    const cpu = cpuMs(process.cpuUsage(started!.cpu));
    const wallMs = performance.now() - started!.t;
    const maxStallMs = delay.max / 1e6;
    const { latencies } = await prober.stop();
    const result = JSON.parse(out.slice('start\n'.length)) as { ms: number[]; bytes: number };
    return {
      path: urlPath,
      reads,
      bytes: result.bytes,
      medianWallMs: median(result.ms),
      busyMsPerRead: (used.active - baseBusyPerMs * wallMs) / reads,
      cpuMsPerRead: (cpu - baseCpuPerMs * wallMs) / reads,
      maxStallMs,
      probes: latencies.length,
      slowestProbeMs: Math.max(...latencies),
    };
  };

  const results: PhaseResult[] = [];
  const only = process.env.READ_STALL_ONLY;
  for (const [p, n] of [
    ['/v1/sessions/big/window', REPEAT],
    ['/v1/sessions/big/window?format=openai', REPEAT],
    ['/v1/sessions/big/events', REPEAT],
    ['/v1/sessions/big/window?atRevision=2', REPEAT],
    ['/v1/sessions/small/window', REPEAT * 10],
    ['/v1/sessions/small/window?format=openai', REPEAT * 10],
    ['/v1/sessions/small/events?limit=400', REPEAT * 10],
  ] as Array<[string, number]>) {
    if (only && !p.includes(only)) continue;
    const r = await phase(p, n);
    results.push(r);
    process.stderr.write(
      `${r.path.padEnd(42)} ${String(r.reads).padStart(4)} reads, ${(r.bytes / 1e6).toFixed(2)} MB: wall median ${r.medianWallMs.toFixed(2)} ms, ` +
        `event loop ${r.busyMsPerRead.toFixed(2)} ms/read (CPU ${r.cpuMsPerRead.toFixed(2)}), longest stall ${r.maxStallMs.toFixed(1)} ms; ${r.probes} probes, slowest ${r.slowestProbeMs} ms\n`,
    );
  }
  delay.disable();
  return results;
});
