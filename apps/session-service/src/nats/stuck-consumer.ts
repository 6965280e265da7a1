/**
 * A stuck command consumer (newcomer ncnatsops F1): after two kill -9 of nats-server 2.9 under
 * load, the durable command consumer delivered nothing more, for good, while 869 accepted commands
 * waited in the command stream (the server logging `Received an error looking up message for
 * consumer: deleted message` every 2 s: a known class of nats-server consumer-state bugs after a
 * crash). The service saw nothing: its stall detection only covers commands delivered to it.
 * Deleting the consumer (the service re-created it about 1.1 s later) made everything flow again,
 * each command applied once.
 *
 * {@link StuckConsumerDetector} decides, from the consumer's info (read by every replica, and the
 * same for all: the server's) and what this replica saw, when the consumer is stuck: commands are
 * pending (`num_pending`: in the stream, never delivered), the consumer has delivered none
 * (`delivered.consumer_seq`, which every delivery and redelivery advances, unchanged) for
 * `stuckAfterMs` of consecutive successful checks, and this replica has asked for commands (free
 * slots, pulling) all that time without getting one. Not while the consumer holds back by design:
 * `num_ack_pending` at its `max_ack_pending` (commands held, e.g. waiting behind an earlier one
 * of their session). A healthy server hands a pending command to a waiting pull request at once,
 * so the bound does not depend on the ack wait; it only has to exceed what the pull's own recovery
 * takes (two missed idle heartbeats, 5–7.5 s).
 *
 * {@link StuckConsumerGuard} reads the info periodically, keeps what `/health` and `/metrics`
 * show, logs one error line when the consumer is found stuck and asks for its re-creation (the
 * transport deletes it and creates it again with the same configuration, only when the consumer's
 * own info still shows the same consumer, `created`, delivering nothing: a consumer another replica
 * re-created meanwhile is not torn down again).
 */
import type { ConsumerInfo } from '@nats-io/jetstream';

/** The fields of a consumer's info the detector reads. */
export interface ConsumerSnapshot {
  /** When the consumer was created (JetStream's `created`, ISO-8601): a re-created consumer has another. */
  created: string;
  /** Commands in the stream not yet delivered by the consumer (`num_pending`). */
  pending: number;
  /** Commands delivered and not yet acknowledged (`num_ack_pending`). */
  ackPending: number;
  /** The consumer's `max_ack_pending` (0 or less: no limit). */
  maxAckPending: number;
  /** `delivered.consumer_seq`: advanced by every delivery, redeliveries included. */
  deliveredSeq: number;
  /** `delivered.stream_seq`: the stream sequence of the last command delivered. */
  deliveredStreamSeq: number;
  /** `ack_floor.stream_seq`: every command up to it is acknowledged or terminated, as the consumer recorded. */
  ackFloorStreamSeq: number;
}

/** The {@link ConsumerSnapshot} of a JetStream consumer info. */
export function snapshotOf(info: ConsumerInfo): ConsumerSnapshot {
  return {
    created: String(info.created),
    pending: info.num_pending,
    ackPending: info.num_ack_pending,
    maxAckPending: info.config.max_ack_pending ?? 0,
    deliveredSeq: info.delivered.consumer_seq,
    deliveredStreamSeq: info.delivered.stream_seq,
    ackFloorStreamSeq: info.ack_floor.stream_seq,
  };
}

/** What one check found ({@link StuckConsumerDetector.observe}). */
export interface StuckVerdict {
  /** Commands pending (never delivered), as the check read them. */
  pending: number;
  /** While commands are pending: ms since the consumer last delivered one, or since they became pending, whichever is later (0 when none is pending). */
  idleMs: number;
  /** True when the consumer is stuck (see the module doc). */
  stuck: boolean;
  /** True when nothing is pending, or the same consumer delivered since the previous check: it works (false when unknown: the first check after a reset). */
  delivering: boolean;
}

/** Decides from successive consumer snapshots whether the consumer is stuck (see the module doc). Pure: the caller gives the time. */
export class StuckConsumerDetector {
  /** The consumer and delivery count last seen, and since when (ms) nothing was delivered while commands were pending. */
  private quiet: { created: string; deliveredSeq: number; since: number } | null = null;

  /** `stuckAfterMs`: how long the consumer may deliver nothing while commands are pending and this replica asks for them. */
  constructor(private readonly stuckAfterMs: number) {}

  /**
   * One successful check at `now` (ms): `snapshot` is the consumer's info; `askingSince` the time
   * (ms) since which this replica has had free slots and pulled without receiving a command, null
   * while it has none free (it asks for nothing: a consumer delivering nothing to it is no sign).
   */
  observe(snapshot: ConsumerSnapshot, askingSince: number | null, now: number): StuckVerdict {
    const q = this.quiet;
    const delivered = q !== null && q.created === snapshot.created && q.deliveredSeq !== snapshot.deliveredSeq;
    // A delivery (or another consumer), or nothing pending: the quiet time starts again.
    if (q === null || q.created !== snapshot.created || delivered || snapshot.pending === 0) {
      this.quiet = { created: snapshot.created, deliveredSeq: snapshot.deliveredSeq, since: now };
    }
    if (snapshot.pending === 0) return { pending: 0, idleMs: 0, stuck: false, delivering: true };
    const idleMs = now - this.quiet!.since;
    const holdsBack = snapshot.maxAckPending > 0 && snapshot.ackPending >= snapshot.maxAckPending;
    const asked = askingSince !== null && now - askingSince >= this.stuckAfterMs;
    return { pending: snapshot.pending, idleMs, stuck: idleMs >= this.stuckAfterMs && asked && !holdsBack, delivering: delivered };
  }

  /** Forgets what was seen (a failed check, NATS lost, the consumer re-created): the quiet time counts again from the next check. */
  reset(): void {
    this.quiet = null;
  }
}

/** How often (ms) the guard reads the consumer's info for a bound of `stuckAfterMs`: a fifth of it, between 1 s and 10 s. */
export function stuckCheckMs(stuckAfterMs: number): number {
  return Math.min(10_000, Math.max(1_000, Math.floor(stuckAfterMs / 5)));
}

/** What the guard shows in `/health` (`nats.commandConsumer`) and `/metrics`. */
export interface StuckConsumerState {
  /** Commands pending (never delivered) at the last successful check; null before one. */
  pending: number | null;
  /** While commands are pending: seconds the consumer has delivered none (see {@link StuckVerdict.idleMs}); 0 otherwise. */
  idleSeconds: number;
  /** While the consumer is found stuck: what was found and done (the error line); null otherwise. */
  stuck: string | null;
  /** Times this replica re-created the consumer because it was stuck. */
  recreated: number;
  /** When this replica last re-created it (ISO-8601), null if never. */
  lastRecreatedAt: string | null;
}

/** What the guard needs from the transport. */
export interface StuckConsumerGuardOptions {
  /** The command stream's and the consumer's names (for the log lines). */
  stream: string;
  consumer: string;
  /** `NATS_CONSUMER_STUCK_MS`. */
  stuckAfterMs: number;
  /** Reads the consumer's info. @throws the client's error (NATS lost, the consumer missing): the check is skipped, and the quiet time counts again. */
  readInfo: () => Promise<ConsumerInfo>;
  /** The time (ms) since which this replica has asked for commands without getting one; null while it has no free slot. */
  askingSince: () => number | null;
  /**
   * Deletes the consumer and creates it again with the same configuration when the server still
   * has the one `seen` shows (same `created`) and it still delivered nothing; true when it did, false
   * when it did not need to (another replica did, or it delivered meanwhile).
   * @throws the client's error when the deletion or creation failed (tried again at the next check that finds it stuck).
   */
  recreate: (seen: ConsumerInfo) => Promise<boolean>;
  /** Told of every successful check's info (the consumer removes leftovers below the ack floor). Never throws. */
  onChecked?: (info: ConsumerInfo) => Promise<void>;
  /** Told of each re-creation (the transport counts it in `/metrics`). */
  onRecreated?: () => void;
  /** Log lines. */
  log: { error(line: string): void; warn(line: string): void; log(line: string): void };
  /** The clock (ms), `Date.now` by default (tests pass their own). */
  now?: () => number;
}

/** Reads the consumer's info every {@link stuckCheckMs} and acts on a stuck consumer (see the module doc). */
export class StuckConsumerGuard {
  private readonly detector: StuckConsumerDetector;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | null = null;
  private checking: Promise<void> | null = null;
  private pending: number | null = null;
  private idleMs = 0;
  private stuck: string | null = null;
  /** Set once a re-creation failed in the current stuck episode (its error line is logged once). */
  private recreationFailed = false;
  private recreated = 0;
  private lastRecreatedAt: string | null = null;

  constructor(private readonly options: StuckConsumerGuardOptions) {
    this.detector = new StuckConsumerDetector(options.stuckAfterMs);
    this.now = options.now ?? Date.now;
  }

  /** Checks every {@link stuckCheckMs} until {@link stop}. */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.check(), stuckCheckMs(this.options.stuckAfterMs));
    this.timer.unref();
  }

  /** Stops checking; waits for a check under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.checking;
  }

  /** Forgets the quiet time seen so far (NATS lost, the consumer re-created by the transport): it counts again from the next check. */
  reset(): void {
    this.detector.reset();
  }

  /** See {@link StuckConsumerState}. */
  state(): StuckConsumerState {
    return {
      pending: this.pending,
      idleSeconds: Math.round(this.idleMs / 1000),
      stuck: this.stuck,
      recreated: this.recreated,
      lastRecreatedAt: this.lastRecreatedAt,
    };
  }

  /** One check (one at a time: a call while one runs joins it). Never throws. */
  check(): Promise<void> {
    if (!this.checking) this.checking = this.checkOnce().finally(() => (this.checking = null));
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    let info: ConsumerInfo;
    try {
      info = await this.options.readInfo();
    } catch {
      // NATS lost, the consumer missing (re-created by the transport): nothing is known meanwhile.
      this.detector.reset();
      return;
    }
    const now = this.now();
    const snapshot = snapshotOf(info);
    const verdict = this.detector.observe(snapshot, this.options.askingSince(), now);
    this.pending = verdict.pending;
    this.idleMs = verdict.idleMs;
    await this.options.onChecked?.(info);
    if (!verdict.stuck) {
      // Found stuck before: shown as such until the consumer is seen delivering (or nothing is pending).
      if (this.stuck !== null && verdict.delivering) {
        this.options.log.log(`NATS consumer ${this.options.consumer} delivers again (${verdict.pending} command(s) pending): no longer stuck`);
        this.stuck = null;
        this.recreationFailed = false;
      }
      return;
    }
    const seconds = (verdict.idleMs / 1000).toFixed(0);
    const found =
      `NATS consumer ${this.options.consumer} is stuck: it has delivered no command for ${seconds} s while ${snapshot.pending} command(s) wait in the command stream ` +
      `(delivered up to stream sequence ${snapshot.deliveredStreamSeq}, acknowledged up to ${snapshot.ackFloorStreamSeq}, ${snapshot.ackPending} awaiting acknowledgement) ` +
      `and this replica has asked for commands all that time (a known nats-server fault after a crash; the server may log "Received an error looking up message for consumer")`;
    if (this.stuck === null) {
      this.stuck = `${found}; re-creating it (deleted and created again with the same configuration)`;
      this.options.log.error(this.stuck);
    }
    try {
      if (await this.options.recreate(info)) {
        this.recreated++;
        this.options.onRecreated?.();
        this.lastRecreatedAt = new Date(this.now()).toISOString();
        this.options.log.warn(
          `NATS consumer ${this.options.consumer} re-created (it was stuck ${seconds} s with ${snapshot.pending} command(s) pending): the commands it held go out again, each applied at most once`,
        );
      }
    } catch (err) {
      this.stuck = `${found}; re-creating it failed: ${(err as Error).message} (tried again each time it is found stuck; or delete it: nats consumer rm ${this.options.stream} ${this.options.consumer}, and the service creates it again)`;
      if (!this.recreationFailed) this.options.log.error(this.stuck);
      this.recreationFailed = true;
    }
    // The next verdict counts from the re-created consumer (another `created`), or again from now.
    this.detector.reset();
  }
}
