/**
 * The event-loop thread's CPU time, for benches that weigh what a request costs the main thread
 * against a baseline measured the same way (`JSON.parse` of its body): CPU time, unlike wall time,
 * does not grow with what other processes run, so runs on a loaded machine compare. Read from Linux's
 * `/proc/<pid>/task/<pid>/schedstat` (nanoseconds on the CPU, counted in scheduler ticks: 4 ms
 * here), so a figure is only as fine as the number of operations it is the mean of.
 */
import * as fs from 'node:fs';

/**
 * The event-loop thread's CPU time so far, in milliseconds (fractional; it moves in scheduler
 * ticks). @throws Error (ENOENT) where there is no `/proc` (not Linux).
 */
export function eventLoopCpuMs(): number {
  return Number(fs.readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** What {@link meanCpuMs} and {@link leastMeanCpuMs} measured: event-loop CPU per operation (ms), and the last operation's result. */
export interface CpuPerOperation<T> {
  ms: number;
  result: T;
}

/**
 * The mean event-loop CPU (ms) per call of `reps` calls of `run` in a row (call `i` is `run(i)`,
 * each awaited before the next, a synchronous one too), and the last call's result. Choose `reps`
 * (at least 1) so that the calls take many 4 ms ticks.
 */
export async function meanCpuMs<T>(reps: number, run: (i: number) => T | Promise<T>): Promise<CpuPerOperation<T>> {
  let result!: T;
  const t = eventLoopCpuMs();
  for (let i = 0; i < reps; i++) result = await run(i);
  return { ms: (eventLoopCpuMs() - t) / reps, result };
}

/**
 * The least of `rounds` (at least 1) {@link meanCpuMs} of `reps` calls of `run` (call `i` of round
 * `round` is `run(i, round)`): the round the neighbours and the collector disturbed least, in ms of
 * event-loop CPU per call; and the last call's result.
 */
export async function leastMeanCpuMs<T>(rounds: number, reps: number, run: (i: number, round: number) => T | Promise<T>): Promise<CpuPerOperation<T>> {
  let ms = Infinity;
  let result!: T;
  for (let round = 0; round < rounds; round++) {
    const mean = await meanCpuMs(reps, (i) => run(i, round));
    ms = Math.min(ms, mean.ms);
    result = mean.result;
  }
  return { ms, result };
}
