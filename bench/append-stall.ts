/**
 * Measures the event loop's longest stretches of work while a maximum-size adversarial append
 * (1,000,000 characters, issue 17) is read, validated, counted, written and projected:
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/append-stall.ts
 *
 * The service runs in this process, so a 1 ms interval timer sees each stretch as a gap between
 * its ticks; on Linux each gap's CPU time comes from the event-loop thread's own
 * `/proc/thread-self/schedstat` (exact to one scheduler tick), the figure load does not inflate.
 * The body is posted by a child process and `/health` probed (every 5 ms after each answer) by
 * another, so neither client's work is counted. `APPEND_STALL_TEXTS` (default
 * `random ideographs,distinct words,random ideographs`, a fresh session each): the first append
 * also pays what the service loads on first need (the worker pools' code and threads).
 * Prints one line per append: its answer and projection times, the slowest probes, and the longest
 * gaps by CPU time (`cpu/wall ms (at ms after the post started)`).
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startService } from './lib/service';
import { startHealthProber } from '../test/support/health-prober';
import { ADVERSARIAL_TEXTS } from '../test/support/adversarial-texts';

/** Posts the body file, then reads the session at the append's position (waits for the projection); one JSON line with the times. */
const POSTER = `
const [url, file] = [process.argv[1], process.argv[2]];
const body = require('node:fs').readFileSync(file);
(async () => {
  await (await fetch(url.replace(/\\/v1\\/.*/, '/health'))).arrayBuffer();
  const t = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
  const appended = await res.json();
  const ms = performance.now() - t;
  await (await fetch(url.replace(/\\/events$/, '') + '?minPosition=' + appended.position)).arrayBuffer();
  process.stdout.write(JSON.stringify({ status: res.status, ms, projectedMs: performance.now() - t }) + '\\n');
})();
`;

/** CPU time (ms) this thread has run, or NaN without `/proc`. */
function threadCpuMs(): number {
  try {
    return Number(fs.readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
}

/** One gap between the 1 ms timer's ticks: when it began (ms after the post started), wall and CPU ms. */
interface Gap {
  at: number;
  wallMs: number;
  cpuMs: number;
}

async function main(): Promise<void> {
  const running = await startService(process.env.BENCH_DIR, 'append-stall');
  const texts = (process.env.APPEND_STALL_TEXTS ?? 'random ideographs,distinct words,random ideographs').split(',');
  try {
    for (const [n, kind] of texts.entries()) {
      const file = path.join(running.dataDir, 'body.json');
      fs.writeFileSync(file, JSON.stringify({ events: [{ id: 'big', type: 'user', text: ADVERSARIAL_TEXTS[kind](1_000_000) }] }));
      const prober = await startHealthProber(running.baseUrl, 5);
      const gaps: Gap[] = [];
      const t0 = performance.now();
      let last = t0;
      let lastCpu = threadCpuMs();
      const timer = setInterval(() => {
        const now = performance.now();
        const cpu = threadCpuMs();
        if (now - last > 5) gaps.push({ at: Math.round(last - t0), wallMs: Math.round(now - last), cpuMs: Math.round(cpu - lastCpu) });
        last = now;
        lastCpu = cpu;
      }, 1);
      const child = spawn(process.execPath, ['-e', POSTER, `${running.baseUrl}/v1/sessions/stall-${n}/events`, file]);
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => process.stderr.write(c));
      await new Promise<void>((resolve) => child.on('exit', () => resolve()));
      clearInterval(timer);
      const { latencies } = await prober.stop();
      const result = JSON.parse(out) as { status: number; ms: number; projectedMs: number };
      const slowest = [...latencies].sort((a, b) => b - a).slice(0, 3);
      const longest = [...gaps].sort((a, b) => b.cpuMs - a.cpuMs || b.wallMs - a.wallMs).slice(0, 4);
      process.stdout.write(
        `${kind.padEnd(18)} ${result.status}: answered in ${Math.round(result.ms)} ms, projected in ${Math.round(result.projectedMs)} ms; ` +
          `${latencies.length} probes, slowest ${slowest.join(', ')} ms; longest stretches (cpu/wall ms, at) ` +
          `${longest.map((g) => `${g.cpuMs}/${g.wallMs} (${g.at})`).join(', ')}; load ${os
            .loadavg()
            .map((l) => l.toFixed(2))
            .join(' ')}\n`,
      );
    }
  } finally {
    await running.stop();
  }
}

void main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
