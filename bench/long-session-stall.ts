/**
 * Measures what reading a long session's whole window costs the other requests (newcomer ncnoisy
 * F1): a session of 30,000 small events (~90 characters each, 5 MB answers), then its window, the
 * window as OpenAI messages, at a past revision, and a compaction's diff, each read `LONG_STALL_REPEAT`
 * times (default 3) one after the other.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/long-session-stall.ts
 *
 * The service runs in this process (so its event loop can be observed); the reads come from a
 * child process and `/health` probes (every 50 ms after each answer) from another. Per read path it
 * prints the answer's size, the median wall time of a read, the longest event-loop block
 * (monitorEventLoopDelay's max), the longest single `JSON.stringify` call (what serializing an
 * answer object in one stretch costs), the slowest probe (and, from the prober, the CPU time the
 * event loop ran while it waited: load cannot inflate it), and the process's RSS: the highest sampled
 * (every 20 ms) during the phase, and the peak since start (`maxRSS`).
 *
 * `LONG_STALL_CPU_PROFILE=<dir>` also profiles the main thread during each path's reads (inspector,
 * every 200 µs) and marks the event loop's turns, writes `<dir>/<path>.cpuprofile` and prints the
 * path's longest event-loop blocks (stretches between two turns, by CPU time) with the functions
 * they spent their time in (`lib/cpu-profile-blocks.ts`); the row gains `longestBlockCpuMs`.
 */
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { benchWithService } from './lib/service';
import { startHealthProber } from '../test/support/health-prober';
import { READER } from './lib/sequential-reader';
import { eventLoopBlocks, formatBlocks, startCpuProfile, startTurnMarks } from './lib/cpu-profile-blocks';
import * as fs from 'node:fs';
import * as path from 'node:path';

const EVENTS = Number(process.env.LONG_STALL_EVENTS ?? 30_000);
const REPEAT = Number(process.env.LONG_STALL_REPEAT ?? 3);
const PROFILE_DIR = process.env.LONG_STALL_CPU_PROFILE;

/** The longest single `JSON.stringify` call since the last reset (ms) and the length of its text: how long serializing one answer in one stretch held the event loop. */
const stringifyCalls = { longestMs: 0, chars: 0 };
const originalStringify = JSON.stringify;
JSON.stringify = function (...args: Parameters<typeof JSON.stringify>) {
  const t = performance.now();
  const text = originalStringify(...args);
  const ms = performance.now() - t;
  if (ms > stringifyCalls.longestMs) Object.assign(stringifyCalls, { longestMs: ms, chars: text?.length ?? 0 });
  return text;
} as typeof JSON.stringify;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(0);

benchWithService('long-session-stall', async (running, client) => {
  // EVENTS events of ~90 characters, 1,000 a request.
  const appendLong = async (prefix: string, topic: string): Promise<void> => {
    for (let b = 0; b < EVENTS / 1000; b++) {
      const res = await client.request('POST', '/v1/sessions/long/events', {
        events: Array.from({ length: 1000 }, (_, i) => ({
          id: `${prefix}${b}-${i}`,
          type: i % 2 ? 'assistant' : 'user',
          text: `turn ${b * 1000 + i} about the ${topic} and refund number ${(i * 31) % 997}, and what the customer asked next`,
        })),
      });
      if (res.status !== 201) throw new Error(`append: ${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  await appendLong('l', 'invoice');
  const compaction = await client.request<{ compactionId: string }>('POST', '/v1/sessions/long/compactions', {
    strategy: { type: 'token-count', maxTokens: 2000 },
  });
  if (compaction.status !== 200) throw new Error(`compaction: ${compaction.status} ${JSON.stringify(compaction.body)}`);
  // A compaction leaves a short window: append again so the window is long once more.
  await appendLong('m', 'parcel');
  await client.request('GET', '/v1/sessions/long');
  const delay = monitorEventLoopDelay({ resolution: 1 });
  delay.enable();
  const base = await startHealthProber(running.baseUrl, 50);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  process.stderr.write(`idle: slowest probe ${Math.max(...(await base.stop()).latencies)} ms; rss ${mib(process.memoryUsage().rss)} MiB\n`);

  const paths = [
    '/v1/sessions/long/window',
    '/v1/sessions/long/window?format=openai',
    `/v1/sessions/long/window?atRevision=${2 * EVENTS - 1000}`,
    `/v1/sessions/long/compactions/${compaction.body.compactionId}/diff`,
  ];
  const results = [];
  for (const p of paths) {
    if (process.env.LONG_STALL_ONLY && !p.includes(process.env.LONG_STALL_ONLY)) continue;
    global.gc?.();
    // Started before the prober: starting the profiler holds the event loop (100–200 ms of CPU) itself.
    const stopProfile = PROFILE_DIR ? await startCpuProfile() : null;
    const prober = await startHealthProber(running.baseUrl, { pauseMs: 50, servicePid: process.pid });
    const child = spawn(process.execPath, ['-e', READER, `${running.baseUrl}${p}`, String(REPEAT)]);
    let out = '';
    let rss = 0;
    let started = false;
    const sampler = setInterval(() => (rss = Math.max(rss, process.memoryUsage.rss())), 20);
    const ready = new Promise<void>((resolve) =>
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        if (!started && out.startsWith('start\n')) {
          started = true;
          delay.reset();
          Object.assign(stringifyCalls, { longestMs: 0, chars: 0 });
          resolve();
        }
      }),
    );
    child.stderr.on('data', (c: Buffer) => process.stderr.write(c));
    const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
    await ready;
    const stopMarks = PROFILE_DIR ? startTurnMarks() : null;
    await exited;
    const marks = stopMarks?.();
    const profile = await stopProfile?.();
    clearInterval(sampler);
    const maxBlockMs = delay.max / 1e6;
    const { latencies, eventLoopCpuMs, proberWaitMs } = await prober.stop();
    if (process.env.LONG_STALL_PROBES)
      process.stderr.write(`probes (ms, event-loop CPU ms): ${latencies.map((l, i) => `${l}/${eventLoopCpuMs?.[i]}`).join(' ')}\n`);
    const slowest = latencies.indexOf(Math.max(...latencies));
    const r = JSON.parse(out.slice('start\n'.length)) as { ms: number[]; bytes: number };
    const row = {
      path: p.replace(/compactions\/[^/]+/, 'compactions/…'),
      bytes: r.bytes,
      medianWallMs: Math.round(median(r.ms)),
      maxBlockMs: Math.round(maxBlockMs),
      longestStringifyMs: Math.round(stringifyCalls.longestMs),
      longestStringifyChars: stringifyCalls.chars,
      slowestProbeMs: Math.max(...latencies),
      probes: latencies.length,
      slowestProbeEventLoopCpuMs: eventLoopCpuMs?.[slowest],
      slowestProbeProberWaitMs: proberWaitMs?.[slowest],
      rssMiB: Number(mib(rss)),
      maxRssMiB: Number(mib(process.resourceUsage().maxRSS * 1024)),
    };
    if (profile && marks && PROFILE_DIR) {
      const blocks = eventLoopBlocks(profile, marks);
      Object.assign(row, { longestBlockCpuMs: blocks[0]?.cpuMs ?? blocks[0]?.ms ?? 0 });
      fs.mkdirSync(PROFILE_DIR, { recursive: true });
      fs.writeFileSync(path.join(PROFILE_DIR, `${row.path.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`), JSON.stringify(profile));
      process.stderr.write(`${row.path}: longest event-loop blocks (CPU profile)\n${formatBlocks(blocks, Number(process.env.LONG_STALL_BLOCKS ?? 4))}\n`);
    }
    results.push(row);
    process.stderr.write(
      `${row.path.padEnd(44)} ${(row.bytes / 1e6).toFixed(2)} MB: wall median ${row.medianWallMs} ms, longest block ${row.maxBlockMs} ms, ` +
        `longest JSON.stringify ${row.longestStringifyMs} ms (${row.longestStringifyChars} chars), ${row.probes} probes, slowest ${row.slowestProbeMs} ms (event loop ran ${row.slowestProbeEventLoopCpuMs} ms of CPU meanwhile, prober waited ${row.slowestProbeProberWaitMs} ms for a CPU); rss ≤ ${row.rssMiB} MiB (peak since start ${row.maxRssMiB})\n`,
    );
  }
  delay.disable();
  return results;
});
