/**
 * Stream order of a session's commands across replicas and crashes (docs/nats.md "Order"): a command is
 * applied only once no earlier command of its session is left in the command stream.
 *
 * The command stream is a work queue: a command stays in it until a replica acknowledges it or
 * terminates it (nats-server removes a terminated message of a work-queue stream as it does an
 * acknowledged one), so an earlier message of the session still there is one not applied yet: held
 * by another replica, by a replica that died (redelivered after the ack wait), or given back.
 */
import type { JetStreamManager, MsgRequest } from '@nats-io/jetstream';

/**
 * The subject filter of every command of the session `subject` names: the command subject with
 * its kind token replaced by `*` (`<prefix>.commands.<tenant>.<session>.*`; `*` is one token, so
 * a session `a` never matches the commands of a session `a.b`).
 */
export function sessionCommandFilter(subject: string): string {
  return `${subject.slice(0, subject.lastIndexOf('.'))}.*`;
}

/** An earlier command of a session still in the command stream (see {@link earlierCommandInStream}). */
export interface EarlierCommand {
  /** Its stream sequence. */
  seq: number;
  /** Its subject (`<prefix>.commands.<tenant>.<session>.<kind>`). */
  subject: string;
  /** Its `Nats-Msg-Id` header, null without one. */
  msgId: string | null;
  /** When the stream stored it. */
  time: Date;
  /** When the stream stored it, in ns since the epoch ({@link storedTimestampNanos}). */
  timestampNanos: number;
}

/**
 * Nanoseconds since the epoch of a stored message's RFC 3339 timestamp (`StoredMsg.timestamp`,
 * e.g. `2026-12-02T14:54:51.123456789Z`), as a number rounded the way `JsMsg.info.timestampNanos`
 * rounds the same instant (both are the nearest double of the exact integer), so the two compare
 * equal for one message. NaN for a text that is not such a timestamp.
 */
export function storedTimestampNanos(timestamp: string): number {
  const match = /^(.*T\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)$/.exec(timestamp);
  if (!match) return NaN;
  const ms = Date.parse(`${match[1]}${match[3]}`);
  if (Number.isNaN(ms)) return NaN;
  return Number(BigInt(ms) * 1_000_000n + BigInt((match[2] ?? '').padEnd(9, '0')));
}

/**
 * The first message of `stream` on `filter` before `seq` that is still in the stream, skipping
 * those `finished` says this replica acknowledged or terminated already (an acknowledgement is sent
 * without waiting for the server: it may not have reached it yet); null when there is none.
 * `finished` gets the message's sequence and stored time ({@link storedTimestampNanos}): a
 * sequence alone does not name one message, a re-created stream numbers from 1 again. One
 * `STREAM.MSG.GET` (`next_by_subj`, nats-server 2.9 or later) in the common case (the first
 * message found is the command itself), one more per finished one skipped.
 * @throws the client's error when NATS is unreachable or the stream is missing.
 */
export async function earlierCommandInStream(
  jsm: JetStreamManager,
  stream: string,
  filter: string,
  seq: number,
  finished: (seq: number, timestampNanos: number) => boolean = () => false,
): Promise<EarlierCommand | null> {
  let from = 1;
  for (;;) {
    // The client types only `seq` and `last_by_subj` here; the server also takes `next_by_subj` (next message on the filter from `seq`).
    const found = await jsm.streams.getMessage(stream, { seq: from, next_by_subj: filter } as unknown as MsgRequest);
    if (!found || found.seq >= seq) return null;
    const timestampNanos = storedTimestampNanos(found.timestamp);
    if (!finished(found.seq, timestampNanos)) {
      return { seq: found.seq, subject: found.subject, msgId: found.header?.get('Nats-Msg-Id') || null, time: found.time, timestampNanos };
    }
    from = found.seq + 1;
  }
}

/**
 * The last `capacity` commands a replica acknowledged or terminated, for
 * {@link earlierCommandInStream}'s `finished` (oldest forgotten first). Each is recorded by its
 * stream sequence and the time the stream stored it (`JsMsg.info.timestampNanos`): a message of a
 * re-created command stream (nats-server restarted on an empty store, the stream deleted and made
 * again), numbered from 1 again, with the sequence of one finished in an earlier life of the stream
 * is not taken as finished.
 */
export class FinishedSequences {
  /** Stream sequence to the stored time (ns since the epoch) of the message finished under it. */
  private readonly seqs = new Map<number, number>();
  constructor(private readonly capacity = 4096) {}

  /** Records message `seq` stored at `timestampNanos` (ns since the epoch). */
  add(seq: number, timestampNanos: number): void {
    this.seqs.delete(seq);
    this.seqs.set(seq, timestampNanos);
    if (this.seqs.size > this.capacity) this.seqs.delete(this.seqs.keys().next().value as number);
  }

  /** True when message `seq` stored at `timestampNanos` was recorded (and not forgotten since). */
  has(seq: number, timestampNanos: number): boolean {
    return this.seqs.get(seq) === timestampNanos;
  }
}

/** Ack waits a command waits behind an earlier one before it is reported stalled ({@link OrderWaits}). */
export const STALLED_AFTER_ACK_WAITS = 3;

/** What a command waiting behind an earlier one of its session should do now ({@link OrderWaits.waiting}). */
export interface OrderWaitStep {
  /** Look the earlier command's answer up on the results stream (it may have been applied, its acknowledgement lost). */
  lookUp: boolean;
  /** Log the stall once: the command has waited {@link STALLED_AFTER_ACK_WAITS} ack waits. */
  warn: boolean;
  /** How long the command has waited (ms). */
  waitedMs: number;
}

/**
 * The waits of a replica's commands behind earlier commands of their sessions still in the command
 * stream (times in ms, given by the caller: no clock here). A command normally waits at most about
 * an ack wait (JetStream redelivers a dead replica's command after it); from one ack wait on, the
 * earlier command's answer is looked up at most once per ack wait, and at
 * {@link STALLED_AFTER_ACK_WAITS} ack waits the wait is reported once and counted in
 * {@link stalled} until the command goes on. Nothing is kept for a session that does not wait.
 */
export class OrderWaits {
  private readonly waits = new Map<string, { seq: number; since: number; lookedUpAt: number; lookedUpFor: number; warned: boolean }>();
  private stalledCount = 0;

  /** `ackWaitMs`: the command consumer's ack wait (ms), above 0. */
  constructor(private readonly ackWaitMs: number) {}

  /**
   * The command `seq` of `session` waits behind the earlier one at stream sequence `earlierSeq` at
   * `now`: what to do (see {@link OrderWaitStep}). A wait of an ack wait or more looks up at once an
   * earlier command it has not looked up yet (the one before was removed: a crash may leave a chain
   * of answered commands, each cleared without another ack wait).
   */
  waiting(session: string, seq: number, now: number, earlierSeq: number): OrderWaitStep {
    let wait = this.waits.get(session);
    if (!wait || wait.seq !== seq) {
      if (wait) this.done(session);
      wait = { seq, since: now, lookedUpAt: now, lookedUpFor: earlierSeq, warned: false };
      this.waits.set(session, wait);
    }
    const waitedMs = now - wait.since;
    const lookUp = now - wait.lookedUpAt >= this.ackWaitMs || (waitedMs >= this.ackWaitMs && earlierSeq !== wait.lookedUpFor);
    if (lookUp) {
      wait.lookedUpAt = now;
      wait.lookedUpFor = earlierSeq;
    }
    const warn = !wait.warned && waitedMs >= STALLED_AFTER_ACK_WAITS * this.ackWaitMs;
    if (warn) {
      wait.warned = true;
      this.stalledCount++;
    }
    return { lookUp, warn, waitedMs };
  }

  /** The waiting command of `session` went on (or left this replica): its wait is forgotten. */
  done(session: string): void {
    const wait = this.waits.get(session);
    if (!wait) return;
    if (wait.warned) this.stalledCount--;
    this.waits.delete(session);
  }

  /** Commands waiting now that have waited {@link STALLED_AFTER_ACK_WAITS} ack waits or more (reported). */
  get stalled(): number {
    return this.stalledCount;
  }
}
