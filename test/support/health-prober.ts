/**
 * Probes a service's `/health` from a separate, tiny Node process, so the latencies measure the
 * service (its event loop and the machine), not the test process's own work (encoding a 3 MB body,
 * collecting its garbage). Used by tests that hold a service's responsiveness to a bound while it
 * does costly work (issue 17, item 1).
 *
 * Given the service's pid, on Linux it also measures what load cannot inflate: the CPU time the
 * service's event-loop thread ran while each probe waited (from `/proc/<pid>/task/<pid>/schedstat`,
 * exact to one scheduler tick, 1–10 ms), i.e. the stretch of work the probe waited behind, and how
 * long the prober itself waited for a CPU meanwhile (its own schedstat): when that is near 0, the
 * probe's window is the service's answer and nothing after it.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** What a prober saw: per probe, in order. */
export interface ProbeResults {
  /** Each probe's latency (ms, rounded). */
  latencies: number[];
  /** Non-200 statuses seen. */
  failures: number[];
  /**
   * Per probe, the CPU time (ms, 0.1) the service's event-loop thread ran between the probe's
   * sending and its answer's arrival; absent without a `servicePid` or on a system without
   * `/proc/<pid>/task/<tid>/schedstat`.
   */
  eventLoopCpuMs?: number[];
  /** Per probe, how long (ms, 0.1) the prober waited for a CPU meanwhile (present with `eventLoopCpuMs`). */
  proberWaitMs?: number[];
}

/** A running prober: `stop()` ends it and resolves with what it saw. */
export interface HealthProber {
  stop(): Promise<ProbeResults>;
}

// One probe, then `pauseMs` of rest, until stdin closes; then one JSON line on stdout.
const PROBER = `
const fs = require('node:fs');
const [url, pause, pid] = [process.argv[1], Number(process.argv[2]), process.argv[3]];
const latencies = [], failures = [], cpu = [], wait = [];
// [ran, waited] in ms of a thread's schedstat (time on a CPU, time waiting for one), or null.
const schedstat = (file) => {
  try {
    const [ran, waited] = fs.readFileSync(file, 'utf8').split(' ').map(Number);
    return [ran / 1e6, waited / 1e6];
  } catch {
    return null;
  }
};
const service = pid ? '/proc/' + pid + '/task/' + pid + '/schedstat' : null;
const measured = service !== null && schedstat(service) !== null && schedstat('/proc/thread-self/schedstat') !== null;
const round = (ms) => Math.round(ms * 10) / 10;
let stopping = false;
process.stdin.on('end', () => { stopping = true; });
process.stdin.resume();
(async () => {
  // A warm-up probe (the first fetch of a process loads its HTTP client), not counted.
  await (await fetch(url)).arrayBuffer();
  process.stdout.write('ready\\n');
  while (!stopping) {
    const before = measured ? [schedstat(service), schedstat('/proc/thread-self/schedstat')] : null;
    const start = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    const after = measured ? [schedstat(service), schedstat('/proc/thread-self/schedstat')] : null;
    latencies.push(Math.round(performance.now() - start));
    if (before && after) {
      cpu.push(round(after[0][0] - before[0][0]));
      wait.push(round(after[1][1] - before[1][1]));
    }
    if (res.status !== 200) failures.push(res.status);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  const out = measured ? { latencies, failures, eventLoopCpuMs: cpu, proberWaitMs: wait } : { latencies, failures };
  process.stdout.write(JSON.stringify(out) + '\\n');
})();
`;

/** Options of {@link startHealthProber}. */
export interface HealthProberOptions {
  /** Rest between an answer and the next probe (ms; default 20). */
  pauseMs?: number;
  /** The service's process id: measure its event-loop thread's CPU time per probe (Linux; see the module doc). */
  servicePid?: number;
}

/**
 * Starts probing `${baseUrl}/health` (one probe, then `pauseMs` of rest, or the options) in a child
 * process. Resolves once a warm-up probe (not counted: a process's first fetch loads its HTTP
 * client) has been answered, so the caller's costly work starts under observation.
 */
export async function startHealthProber(baseUrl: string, options: number | HealthProberOptions = {}): Promise<HealthProber> {
  const { pauseMs = 20, servicePid } = typeof options === 'number' ? { pauseMs: options } : options;
  const args = ['-e', PROBER, `${baseUrl}/health`, String(pauseMs), ...(servicePid === undefined ? [] : [String(servicePid)])];
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, args);
  let output = '';
  let ready: () => void = () => undefined;
  const warmedUp = new Promise<void>((resolve) => (ready = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
    if (output.startsWith('ready\n')) ready();
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  await warmedUp;
  return {
    async stop() {
      child.stdin.end();
      await exited;
      return JSON.parse(output.slice('ready\n'.length)) as ProbeResults;
    },
  };
}
