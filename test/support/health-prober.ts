/**
 * Probes a service's `/health` from a separate, tiny Node process, so the latencies measure the
 * service (its event loop and the machine), not the test process's own work (encoding a 3 MB body,
 * collecting its garbage). Used by tests that hold a service's responsiveness to a bound while it
 * does costly work (issue 17, item 1).
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';

/** A running prober: `stop()` ends it and resolves with every probe's latency in ms, in order, and any non-200 status seen. */
export interface HealthProber {
  stop(): Promise<{ latencies: number[]; failures: number[] }>;
}

// One probe, then `pauseMs` of rest, until stdin closes; then one JSON line on stdout.
const PROBER = `
const [url, pause] = [process.argv[1], Number(process.argv[2])];
const latencies = [], failures = [];
let stopping = false;
process.stdin.on('end', () => { stopping = true; });
process.stdin.resume();
(async () => {
  // A warm-up probe (the first fetch of a process loads its HTTP client), not counted.
  await (await fetch(url)).arrayBuffer();
  process.stdout.write('ready\\n');
  while (!stopping) {
    const start = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    latencies.push(Math.round(performance.now() - start));
    if (res.status !== 200) failures.push(res.status);
    await new Promise((resolve) => setTimeout(resolve, pause));
  }
  process.stdout.write(JSON.stringify({ latencies, failures }) + '\\n');
})();
`;

/**
 * Starts probing `${baseUrl}/health` every `pauseMs` ms (after each answer) in a child process.
 * Resolves once a warm-up probe (not counted: a process's first fetch loads its HTTP client) has
 * been answered, so the caller's costly work starts under observation.
 */
export async function startHealthProber(baseUrl: string, pauseMs = 20): Promise<HealthProber> {
  const child: ChildProcessWithoutNullStreams = spawn(process.execPath, ['-e', PROBER, `${baseUrl}/health`, String(pauseMs)]);
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
      return JSON.parse(output.slice('ready\n'.length)) as { latencies: number[]; failures: number[] };
    },
  };
}
