/**
 * Progress of a replay on stderr: a `cli-progress` bar on a terminal, periodic one-line reports
 * (every 10 % or 15 s) otherwise, nothing when disabled.
 */
import { SingleBar } from 'cli-progress';

/** What the runner reports progress to. */
export interface Progress {
  /** Starts a phase of `total` steps named `label`. */
  start(total: number, label: string): void;
  /** One step done; `label` replaces the phase's label when given. */
  tick(label?: string): void;
  /** Ends the display (the bar's last state stays on screen). */
  stop(): void;
}

/** A progress display writing to `stream` (a bar when it is a TTY). `enabled: false` prints nothing. */
export function createProgress(stream: NodeJS.WritableStream & { isTTY?: boolean }, enabled = true): Progress {
  if (!enabled) return { start() {}, tick() {}, stop() {} };
  if (stream.isTTY) {
    const bar = new SingleBar({
      stream,
      format: 'replay [{bar}] {percentage}% | {value}/{total} turns | {label} | {duration_formatted} (ETA {eta_formatted})',
      hideCursor: true,
      fps: 5,
    });
    let started = false;
    let label = '';
    return {
      start(total, l) {
        label = l;
        if (started) bar.setTotal(total);
        else bar.start(total, 0, { label });
        started = true;
      },
      tick(l) {
        if (l) label = l;
        if (started) bar.increment(1, { label });
      },
      stop() {
        // Once: an interrupted run stops it early, then again when its work ends.
        if (started) bar.stop();
        started = false;
      },
    };
  }
  let total = 0;
  let done = 0;
  let label = '';
  let lastPrint = Date.now();
  let lastDecile = 0;
  const startedAt = Date.now();
  const line = () =>
    stream.write(
      `replay: ${done}/${total} turns (${total ? Math.floor((100 * done) / total) : 0}%) ${label} ${((Date.now() - startedAt) / 1000).toFixed(0)} s\n`,
    );
  return {
    start(t, l) {
      total = t;
      label = l;
    },
    tick(l) {
      if (l) label = l;
      done++;
      const decile = total ? Math.floor((10 * done) / total) : 0;
      if (decile > lastDecile || Date.now() - lastPrint > 15_000) {
        lastDecile = decile;
        lastPrint = Date.now();
        line();
      }
    },
    stop() {},
  };
}
