/**
 * The auto-compaction backoff of {@link AutoCompactionScheduler} (docs/configuration.md "Model summarizer: what it sends, its failures, the backoff"): after
 * `autoCompactionMaxFailures` failed compactions in a row (the session's `consecutiveFailures`,
 * from its log: commanded and automatic passes alike), the next automatic pass waits
 * {@link autoCompactionBackoffMs} after the last failure. The clock lives in this process: the
 * time of the last failure is remembered here only, so after a restart (or on a replica that did
 * not see the failure) a session already over the limit waits a full backoff from the first
 * append that finds it there.
 *
 * Operators see it: one `warn` line when a session enters backoff, one `info` line when it leaves
 * (a pass compacted, or a commanded one did; its policy removed; the session erased), and
 * {@link AutoCompactionBackoff.size} for `/metrics` `auto_compactions_backing_off` and `/health`.
 * The per-pass failure lines are the service's (one per failed pass, with its reason).
 */
import { quoteInput } from '@lib/compaction';
import type { SessionSettings } from './auto-compaction';

/** The settings the backoff reads. */
type BackoffSettings = Pick<SessionSettings, 'autoCompactionMaxFailures' | 'autoCompactionBackoffMs'>;

/** The longest auto-compaction backoff (ms): one hour. */
export const MAX_AUTO_COMPACTION_BACKOFF_MS = 3_600_000;

/**
 * How long (ms) the next automatic pass of a session with `failures` consecutive failed compactions
 * waits after the last one: 0 below `settings.autoCompactionMaxFailures`, else
 * `autoCompactionBackoffMs × 2^(failures − autoCompactionMaxFailures)`, at most one hour
 * ({@link MAX_AUTO_COMPACTION_BACKOFF_MS}).
 */
export function autoCompactionBackoffMs(settings: BackoffSettings, failures: number): number {
  if (failures < settings.autoCompactionMaxFailures) return 0;
  return Math.min(MAX_AUTO_COMPACTION_BACKOFF_MS, settings.autoCompactionBackoffMs * 2 ** Math.min(failures - settings.autoCompactionMaxFailures, 32));
}

/** A session known to this process as backing off. */
interface BackingOff {
  /** Since when (ms since the epoch). */
  since: number;
}

/** Where log lines go (the scheduler's Nest logger). */
export interface BackoffLog {
  warn(line: string): void;
  log(line: string): void;
}

/** Names a session in a log line: `session "id" (tenant "t")`. */
function sessionName(tenantId: string, sessionId: string): string {
  return `session ${quoteInput(sessionId)} (tenant ${quoteInput(tenantId)})`;
}

/** The backoff state of every session this process saw fail, keyed by session key. See the module doc. */
export class AutoCompactionBackoff {
  /** Time (ms since the epoch) of the last failure this process saw or assumed, by session key. */
  private readonly lastFailureAt = new Map<string, number>();
  private readonly backingOff = new Map<string, BackingOff>();

  constructor(
    private readonly settings: BackoffSettings,
    private readonly log: BackoffLog,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sessions in backoff (their failures in a row at or over the limit), as this process knows them. */
  get size(): number {
    return this.backingOff.size;
  }

  /**
   * Whether an automatic pass of the session may run now, its failures in a row being `failures`.
   * A session over the limit that this process has no failure time for (a restart) counts from now;
   * its entering backoff is logged then. A session in backoff found under the limit (a commanded
   * pass compacted) leaves it.
   */
  mayRun(key: string, tenantId: string, sessionId: string, failures: number): boolean {
    const wait = autoCompactionBackoffMs(this.settings, failures);
    if (wait === 0) {
      this.leave(key, tenantId, sessionId, 'a compaction succeeded');
      return true;
    }
    let last = this.lastFailureAt.get(key);
    if (last === undefined) {
      last = this.now();
      this.lastFailureAt.set(key, last);
    }
    this.enter(key, tenantId, sessionId, failures, last);
    return this.now() - last >= wait;
  }

  /**
   * After an automatic pass of its own (not a replayed answer): `failed` with the session's failures
   * in a row now `failuresAfter` (its entering backoff logged when this failure reached the limit), or
   * `compacted` (it leaves backoff). Other outcomes change nothing (`interrupted`: a failed pass whose
   * model call the service's shutdown aborted is not a failure of the model, and no failure time).
   */
  passed(key: string, tenantId: string, sessionId: string, outcome: string, failuresAfter: number): void {
    if (outcome === 'failed') {
      const at = this.now();
      this.lastFailureAt.set(key, at);
      if (failuresAfter >= this.settings.autoCompactionMaxFailures) this.enter(key, tenantId, sessionId, failuresAfter, at);
    } else if (outcome === 'compacted') this.leave(key, tenantId, sessionId, 'compacted');
  }

  /** The session's policy was removed or the session erased: it leaves backoff (`why` says which) and is forgotten. */
  forget(key: string, tenantId: string, sessionId: string, why: string): void {
    this.leave(key, tenantId, sessionId, why);
  }

  private enter(key: string, tenantId: string, sessionId: string, failures: number, lastFailureAt: number): void {
    if (this.backingOff.has(key)) return;
    this.backingOff.set(key, { since: this.now() });
    const wait = autoCompactionBackoffMs(this.settings, failures);
    this.log.warn(
      `auto-compaction of ${sessionName(tenantId, sessionId)} backs off after ${failures} failed compactions in a row: next automatic attempt at the first append after ${new Date(lastFailureAt + wait).toISOString()} (${wait} ms after the last failure, doubling with each further failure up to 1 h)`,
    );
  }

  private leave(key: string, tenantId: string, sessionId: string, why: string): void {
    this.lastFailureAt.delete(key);
    const entry = this.backingOff.get(key);
    if (!entry) return;
    this.backingOff.delete(key);
    const seconds = Math.round((this.now() - entry.since) / 1000);
    this.log.log(`auto-compaction of ${sessionName(tenantId, sessionId)} leaves backoff after ${seconds} s: ${why}`);
  }
}
