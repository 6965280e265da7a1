/**
 * Progress of a replay on stderr: a `cli-progress` bar on a terminal, one-line reports otherwise
 * (every 10 % of the turns, and at least every {@link HEARTBEAT_MS} while the run goes on, steps
 * or not), nothing when disabled. Between the turns of two strategies the replay reads every
 * session's results and measures fidelity (about 20 s for 150 sessions): it reports that phase
 * with {@link Progress.update}, so the bar's label and the lines say how far it got.
 */
import { SingleBar } from 'cli-progress';

/** Longest time (ms) between two progress lines off a terminal while the run goes on. */
export const HEARTBEAT_MS = 5000;

/** What the runner reports progress to. */
export interface Progress {
  /** Starts a phase of `total` steps named `label`. */
  start(total: number, label: string): void;
  /** One step done; `label` replaces the phase's label when given. */
  tick(label?: string): void;
  /** Replaces the label without a step (work between steps, e.g. `sliding-window: reading results 37/150 sessions`). */
  update(label: string): void;
  /** Ends the display (the bar's last state stays on screen; no more lines). */
  stop(): void;
}

/**
 * A progress display writing to `stream` (a bar when it is a TTY). `enabled: false` prints
 * nothing. `heartbeatMs` (tests): the longest time between two lines off a terminal.
 */
export function createProgress(stream: NodeJS.WritableStream & { isTTY?: boolean }, enabled = true, heartbeatMs = HEARTBEAT_MS): Progress {
  if (!enabled) return { start() {}, tick() {}, update() {}, stop() {} };
  if (stream.isTTY) {
    // The bar redraws itself `fps` times a second (its duration and ETA move even without steps).
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
      update(l) {
        label = l;
        if (started) bar.update({ label });
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
  let heartbeat: NodeJS.Timeout | null = null;
  const startedAt = Date.now();
  const line = () => {
    lastPrint = Date.now();
    stream.write(
      `replay: ${done}/${total} turns (${total ? Math.floor((100 * done) / total) : 0}%) ${label} ${((Date.now() - startedAt) / 1000).toFixed(0)} s\n`,
    );
  };
  return {
    start(t, l) {
      total = t;
      label = l;
      // A line when nothing else printed one for heartbeatMs (a slow session, the reading between strategies).
      heartbeat ??= setInterval(
        () => {
          if (Date.now() - lastPrint >= heartbeatMs) line();
        },
        Math.max(10, Math.floor(heartbeatMs / 5)),
      ).unref();
    },
    tick(l) {
      if (l) label = l;
      done++;
      const decile = total ? Math.floor((10 * done) / total) : 0;
      if (decile > lastDecile || Date.now() - lastPrint >= heartbeatMs) {
        lastDecile = decile;
        line();
      }
    },
    update(l) {
      label = l;
    },
    stop() {
      if (heartbeat) clearInterval(heartbeat);
      heartbeat = null;
    },
  };
}
