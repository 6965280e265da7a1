/**
 * The decisions feed (issue 15): follows the global log — like a projector, with its own checkpoint
 * (`nats-decision-feed` in the read-model database), never from the command path — and publishes
 * every compaction decision (`CompactionCompleted`, `CompactionFailed`), every archive on arrival
 * (an `EventsArchived` with `onArrival: true`: a late answer to a call a compaction archived,
 * attributed to that compaction, DESIGN §3.3 rule 3) and every erasure record (`SessionErased`)
 * to `<prefix>.decisions.<tenant>.<session>`, in log order, with headers `Log-Position` (the global
 * position) and `Log-Event` (what identifies the event in its log: `checkpointEventIdentity`), and
 * message id {@link decisionMessageId} (the position and a digest of that identity).
 *
 * It starts after the position of the last message of this log in the decisions stream
 * ({@link DecisionFeedPublisher.start}), so a restart (or a lost checkpoint) republishes nothing,
 * and a stream behind its checkpoint gets what it lacks: the replicas ran on another NATS server
 * meanwhile (and published there), or the server's store was restored from an older copy. Before
 * 2026-12-07 it started after the later of the two, and passed those decisions (erasure records
 * included) silently (newcomer ncnats73 F1). Such a refill is named by one warn line, at its first
 * decision ({@link DecisionFeedPublisher.refill}); a routine restart, whose checkpoint is past the
 * stream's last message only by events that are not decisions, republishes nothing and says nothing.
 * When the stream holds no message at all (a new or purged stream, or every message aged out by
 * its `max_age`), the feed starts after its own checkpoint, with one warn line saying the decisions
 * up to it are not published again (as after a server that lost its streams: what the stream held
 * is gone; republishing the whole log would undo an operator's purge or `max_age`). "Of this log": a store restored from an older backup, or another store on
 * the same prefix (SQLite → PostgreSQL), holds another log, whose positions restart below those in
 * the stream; starting after the stream's last position would pass over every new event below it,
 * unhandled (no decision published, no erasure handled: newcomer ncgdpr). So the stream's messages
 * and the feed's checkpoint are checked against the store with the rule the read models' checkpoint
 * is checked with (`checkpointOffLog`: past the head, or another event there; the head read after
 * the stream's state, so that what other replicas publish meanwhile is not past it); when the stream's
 * last message is not this log's, the feed resumes after the last one that is (or after its own
 * checkpoint when none is and that is this log's; or at the log's head when neither is), says so in
 * one warn line, and `/health` shows it ({@link DecisionFeedState.anotherLog}). The other log's
 * messages stay in the stream (their erasures delete them, see below).
 *
 * Replicas running it at once publish the same events with the same message id, and the stream
 * keeps one copy of each (message-id de-duplication within the stream's duplicate window, 2 min),
 * but a core NATS subscriber of the subject receives every replica's publish (one copy per
 * replica: it reads through a JetStream consumer or deduplicates by `Nats-Msg-Id`). The id is the
 * event's, not only its position's: an event published again (by another replica, or after a
 * restore) gets the id it had, and another log's event at the same position gets another, so
 * neither JetStream's window nor a consumer deduplicating by id drops it. While a publish fails
 * (NATS down) the feed is paused: one warn line when it pauses, `/health` shows the error
 * ({@link DecisionFeedPublisher.state}), one line when it resumes. Before publishing an erasure
 * record it deletes the answers and decisions of the erased life (and the session's answers and decisions of
 * another log) from the results and decisions streams, and its commands the command stream stored before the
 * erasure ({@link eraseSessionCopies}): those of the session
 * written again after the erasure stay, also when the feed reaches the record after they were published; the record
 * is noted first in `HandledErasures`, where the command consumer finds it for an answer stored after the deletion. A publish that
 * fails is retried (growing delay, at most 5 s) and never skipped, so the feed has no gaps and stays
 * in log order.
 *
 * Resuming after a pause (every retry), the feed first reads the position of the last message of
 * this log in the decisions stream (a failure of that read is retried like any other); the
 * positions up to it, which other replicas published meanwhile (in log order, so all of them), it
 * passes without publishing them again: a pause longer than the duplicate window adds no second
 * copies. It still reads them from the log, and still deletes the copies of every erasure record
 * among them before passing it (the replica that published the record deleted them first, but this
 * feed may have published some of the session's decisions after that, when it lagged behind by more
 * than the duplicate window; deleting what is gone deletes nothing). When its own checkpoint is no
 * longer an event of the store (a store restored under the running replica), it resumes as at
 * start. Not covered: a replica lagging behind another by more than the duplicate window without a
 * pause publishes second copies (with the same id).
 *
 * A log may end with events the feed never read and never will: deleted before it read them (an
 * erasure interrupted after its stream deletion, before its record; SQLite and PostgreSQL count them
 * in the head). As the projector does, the feed then passes them with `headToSkipTo` (the store's
 * readable head when no event is left up to it): after `TAIL_CHECK_IDLE_MS` without an event (once
 * per idle spell), and on each retry after a pause, whose check that the feed follows the log again
 * takes the position it passed (so a feed paused on such a log resumes without waiting for the next
 * event). That position, {@link DecisionFeedState.skippedTo}, is in memory only (the recorded
 * checkpoint stays at the last event handled, which it names) and is what `/health` compares with
 * the store's head for the feed's lag.
 *
 * Message body: `{ type, tenantId, sessionId, position, revision, recordedAt, decision }` — the
 * decision event's data without its internal `checkpoint` (positions and revisions are decimal
 * strings; `revision` is null for erasure records); a `CompactionCompleted` also carries its
 * compaction's `archivedIds` ({@link withOwnArchivedIds}). A decision too large for the server's
 * `max_payload` is published without its id lists (`keptIds`, `archivedIds`, `archivedBecause`,
 * `plannedArchivedIds`), and, should that not suffice, without its other members largest first but
 * its identity (`decision.omitted` names them; {@link fitDecisionPayload}): a decision's size never
 * stalls the feed.
 */
import { createHash } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager, MsgRequest, StoredMsg } from '@nats-io/jetstream';
import { headToSkipTo, type EventStore, type RecordedEvent, type Subscription } from '@lib/event-store';
import {
  TAIL_CHECK_IDLE_MS,
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  EVENTS_ARCHIVED,
  SESSION_ERASED,
  checkpointEventIdentity,
  checkpointOffLog,
  erasedRowsOf,
  type CheckpointEvent,
  type EventsArchivedData,
  type OffLog,
  type SessionErasedData,
  type ReadModelStore,
  type SessionEventMetadata,
} from '@lib/session';
import { LOG_EVENT_HEADER, LOG_POSITION_HEADER, decisionSubject, type NatsNames } from './nats-names';
import { eraseSessionCopies } from './nats-erasure';
import { isMissingStreamError } from './nats-streams';
import { HandledErasures } from './handled-erasures';
import { answerOfAnotherLog } from './answer-basis';
import { fitDecisionPayload } from './decision-payload-fit';
import type { ReadModelsDamage } from '../observability/read-models-damage';

/** Row name of this feed's checkpoint in `projector_checkpoints`. */
export const DECISION_FEED_CHECKPOINT = 'nats-decision-feed';
export { LOG_EVENT_HEADER, LOG_POSITION_HEADER };

/** One published decision (see the module doc). */
export interface PublishedDecision {
  type: string;
  tenantId: string;
  sessionId: string;
  position: string;
  revision: string | null;
  recordedAt: string;
  decision: Record<string, unknown>;
}

/** True for the `EventsArchived` of an archive on arrival (written by an append, not by a compaction's decision). */
function archivedOnArrival(event: RecordedEvent): boolean {
  return event.type === EVENTS_ARCHIVED && (event.data as EventsArchivedData | null)?.onArrival === true;
}

/**
 * The feed message of `event`, or null when the event is not a decision (a compaction's closing
 * event, or an archive on arrival) nor an erasure record.
 */
export function decisionOf(event: RecordedEvent): PublishedDecision | null {
  let tenantId: string;
  let sessionId: string;
  let revision: string | null = null;
  if (event.type === COMPACTION_COMPLETED || event.type === COMPACTION_FAILED || archivedOnArrival(event)) {
    const meta = event.metadata as SessionEventMetadata | null;
    if (!meta?.tenantId || !meta.sessionId) return null;
    ({ tenantId, sessionId } = meta);
    revision = event.revision.toString();
  } else if (event.type === SESSION_ERASED && event.streamId.startsWith('erasure-')) {
    tenantId = event.streamId.slice('erasure-'.length);
    sessionId = (event.data as { sessionId: string }).sessionId;
  } else {
    return null;
  }
  const { checkpoint: _internal, ...decision } = event.data as Record<string, unknown>;
  return { type: event.type, tenantId, sessionId, position: event.position.toString(), revision, recordedAt: event.created.toISOString(), decision };
}

/**
 * `decision` (a `CompactionCompleted`'s, from {@link decisionOf}) with `archivedIds`: the ids its
 * compaction archived, as its HTTP history item names them — those of the compaction's own
 * `EventsArchived` (not `onArrival`), written by the same append just before it (a summary's
 * `SummaryInserted` may lie between), found among `before` (the session's events before the
 * decision, newest first); `[]` when the compaction archived nothing (`archivedCount` 0). Unchanged
 * when that event is not among them (a log from an unexpected writer): the decision then goes out
 * without `archivedIds`, as before newcomer ncnatsint F4.
 */
export function withOwnArchivedIds(decision: PublishedDecision, before: readonly RecordedEvent[]): PublishedDecision {
  const { compactionId, archivedCount } = decision.decision as { compactionId?: unknown; archivedCount?: unknown };
  if (archivedCount === 0) return { ...decision, decision: { ...decision.decision, archivedIds: [] } };
  const own = before.find(
    (e) => e.type === EVENTS_ARCHIVED && (e.data as EventsArchivedData).compactionId === compactionId && (e.data as EventsArchivedData).onArrival !== true,
  );
  return own ? { ...decision, decision: { ...decision.decision, archivedIds: (own.data as EventsArchivedData).archivedIds } } : decision;
}

/** How many of a session's events before a `CompactionCompleted` are read for its compaction's own `EventsArchived` (it and a `SummaryInserted`). */
const OWN_ARCHIVE_LOOKBACK = 2;

/**
 * The `Nats-Msg-Id` of the feed message of `event`: `<global position>-<the first 16 hex digits of
 * the SHA-256 of checkpointEventIdentity(event)>`, e.g. `7-3f09c1d2a4b5e6f7`. The same event gets
 * the same id whoever publishes it and whenever (replicas, restarts, a restored store holding it
 * again), so JetStream's duplicate window and consumers deduplicating by id keep one copy; another
 * event at the same position (a store restored from an older backup and written again, another
 * store) gets another id, so neither drops it.
 */
export function decisionMessageId(event: RecordedEvent): string {
  return `${event.position}-${createHash('sha256').update(checkpointEventIdentity(event)).digest('hex').slice(0, 16)}`;
}

/**
 * When the feed found that its resume point was not an event of the store's log (see the module
 * doc): the position it found, the store's head then, where it resumed instead, the warn line's
 * text, and when (ISO-8601).
 */
export interface AnotherLog {
  /** The position that is not an event of this log: the stream's last message's, else the feed's checkpoint's (bigint). */
  foundPosition: bigint;
  /** The store's head when it was found (bigint). */
  headPosition: bigint;
  /** The position the feed resumed after (bigint): the last message of this log in the stream, its own checkpoint, or the head. */
  resumedAfter: bigint;
  /** What was found and what the feed does (the warn line). */
  problem: string;
  at: string;
}

/**
 * The feed's state for `/health`: the last global position it handled (published or passed), and
 * the position it has read the log up to; while it is paused (a publish or a read failed; it
 * retries) the error and since when (ISO-8601), else null; and {@link AnotherLog} when the feed
 * resumed elsewhere than its stream's last message because that was not an event of this store's
 * log (null otherwise).
 */
export interface DecisionFeedState {
  /** The global position (bigint) of the last event the feed handled (published or passed); 0n before the first. */
  checkpoint: bigint;
  /**
   * The global position (bigint, ≥ `checkpoint`) the feed has read the log up to: `checkpoint`, or
   * the store's readable head past it when only deleted events lay between them (`headToSkipTo`,
   * see the module doc). The feed has nothing left to do up to it: caught up when it is at the
   * store's head.
   */
  skippedTo: bigint;
  /**
   * While paused, the latest failure's message (the log's line says the same: one line when the
   * pause begins, one more each time the message changes); a missing decisions stream is worded
   * `stream <PREFIX>_DECISIONS not found on the NATS server …` whichever call met it ({@link missingStreamText}).
   */
  lastError: string | null;
  /** While paused, when the latest failure happened (ISO-8601: the feed retries, at most every 5 s). */
  lastErrorAt: string | null;
  /** While paused because the decisions stream is full ({@link fullStreamText}; `/health` `nats.error` then says so): true; else false. */
  streamFull: boolean;
  anotherLog: AnotherLog | null;
}

/**
 * The one wording of a failure that says `stream` is missing, whichever call met it (`stream not
 * found` from a read, `jetstream is not enabled` / `no responders` from a publish to a subject no
 * stream listens on): the same text in the log and in `/health` while the feed retries. (On a server
 * without JetStream, re-creating the stream fails too: `/health` `nats.error` then says why.)
 */
export function missingStreamText(stream: string): string {
  return `stream ${stream} not found on the NATS server (lost with the server's store, or deleted): the service re-creates it`;
}

/**
 * Whether `err` (a publish's) says the stream is full: its `max_msgs`, `max_bytes` or
 * `max_msgs_per_subject` reached with `discard: new`, or the server out of storage
 * (`insufficient resources`).
 */
export function isStreamFullError(err: unknown): boolean {
  return /maximum (messages|bytes|messages per subject) exceeded|insufficient (storage )?resources/i.test((err as Error | null)?.message ?? '');
}

/**
 * The one wording of a publish refused because the decisions stream `stream` is full (`server`:
 * the server's error, e.g. `maximum messages exceeded`): names the stream and what to do. The same
 * text in the log line and in `/health` (`nats.decisionFeed.lastError`; `nats.error` says the feed is paused).
 */
export function fullStreamText(stream: string, server: string): string {
  return (
    `decisions stream ${stream} is full (${server}: its max_msgs or max_bytes reached with discard new, or the server's storage): ` +
    `no decision is published until it has room; raise its limits (nats stream edit ${stream} --max-msgs=-1 --max-bytes=-1) ` +
    `or have it drop its oldest decisions (nats stream edit ${stream} --discard=old); nothing is skipped meanwhile`
  );
}

/** The later of two positions. */
function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** The position and event a feed message was published for (`event` null: published by a release before it was recorded); null without `Log-Position`. */
function recordedOf(m: StoredMsg): CheckpointEvent | null {
  const position = m.header?.get(LOG_POSITION_HEADER);
  if (!position || !/^\d+$/.test(position)) return null;
  return { position: BigInt(position), event: m.header.get(LOG_EVENT_HEADER) || null };
}

/** How `off` (the rule's answer about `what`) disagrees with the store, in words. */
function offLogText(what: string, off: OffLog): string {
  return off.found === null
    ? `${what} is at position ${off.position}, past the end of the event store's log (${off.head})`
    : `${what} at position ${off.position} was published for the event ${off.recorded}, but the event store holds another event there (${off.found})`;
}

/** The last message of this log in the decisions stream (see {@link lastMessageOfThisLog}). */
export interface StreamResume {
  /** Its position; 0n when the stream is empty; null when it holds messages, but none of this log. */
  position: bigint | null;
  /** Its event (`Log-Event`), when recorded. */
  event: string | null;
  /** How the stream's last message disagrees with the log, when it does. */
  lastOff: OffLog | null;
  /** The store's head the messages were checked against (bigint): read after the stream's state, see {@link lastMessageOfThisLog}. */
  head: bigint;
}

/**
 * The last message of this log in the decisions stream of `names`: walking back from the stream's
 * last message, the first whose `Log-Position` and `Log-Event` the store's log holds
 * (`checkpointOffLog`; a message without `Log-Event`, of an earlier release, is taken as this log's
 * unless past the head). The store's head is read after the stream's state (`STREAM.INFO`), so
 * every message walked was published before it was read: a message of this log is never past it.
 * (Read before, as it was, the decisions other replicas published in between were past it, taken
 * for another log's: a routine restart of a replica warned that the store was restored from a
 * backup, newcomer ncops.) The messages past the head at the stream's end (the stream is in log
 * order) are passed by bisection, without a read of each: a store restored from a backup finds
 * where its own messages end in about 2·log2(messages) reads. Messages without `Log-Position` (not
 * the feed's) are passed. Where the stream is not in log order past the head (two logs publishing
 * on one prefix at once), it may find an earlier message of this log than the last (the feed then
 * publishes copies again, never skips), and it never returns another log's.
 * @throws the client's error when NATS does not answer, what the store throws when it does not.
 */
export async function lastMessageOfThisLog(jsm: JetStreamManager, names: NatsNames, store: EventStore): Promise<StreamResume> {
  const stream = names.decisionStream;
  const info = await jsm.streams.info(stream);
  // After the stream's state: every message up to its last sequence was published (after its event was written) before this read.
  const head = await store.headPosition();
  if (info.state.messages === 0) return { position: 0n, event: null, lastOff: null, head };
  let lastOff: OffLog | null = null;
  let seq = info.state.last_seq;
  let bisected = false;
  while (seq >= info.state.first_seq) {
    // The last sequence may be a decision an erasure deleted: the last message still there is before it.
    const m = await jsm.streams.getMessage(stream, { seq });
    const recorded = m && recordedOf(m);
    if (!recorded) {
      seq--;
      continue;
    }
    const off = await checkpointOffLog(store, recorded, head);
    if (off === null) return { position: recorded.position, event: recorded.event, lastOff, head };
    lastOff ??= off;
    if (recorded.position > head && !bisected) {
      seq = await lastAtOrBefore(jsm, names, head, info.state.first_seq, seq);
      bisected = true;
    } else seq--;
  }
  return { position: null, event: null, lastOff, head };
}

/**
 * The sequence of the last message of the decisions stream before sequence `beyond` (a message
 * past `head`) at a position up to `head`, by bisection over [`first`, `beyond`) (the stream is in
 * log order; where it is not, this finds an earlier one); `first - 1` when there is none.
 */
async function lastAtOrBefore(jsm: JetStreamManager, names: NatsNames, head: bigint, first: number, beyond: number): Promise<number> {
  let lo = first - 1; // a message at a position up to head, or before the stream
  let hi = beyond; // every message from here on is past head
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    // The message at mid, or the next one still there (mid may have been deleted by an erasure).
    const m = await jsm.streams.getMessage(names.decisionStream, { seq: mid, next_by_subj: `${names.prefix}.decisions.>` } as unknown as MsgRequest);
    if (!m || m.seq >= hi || (recordedOf(m)?.position ?? 0n) > head) hi = mid;
    else lo = m.seq;
  }
  return lo;
}

/** See the module doc. */
export class DecisionFeedPublisher {
  private readonly logger = new Logger('DecisionFeed');
  private subscription: Subscription | null = null;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private checkpoint = 0n;
  /** The readable head the feed passed with no event left after its checkpoint up to it ({@link skipDeletedTail}); 0n when none. */
  private skippedTo = 0n;
  private lastError: string | null = null;
  private lastErrorAt: string | null = null;
  /** Whether the current pause's latest failure is the decisions stream full ({@link isStreamFullError}). */
  private streamFull = false;
  /** When the current pause began (ISO-8601), null while the feed runs: the resume line's duration. */
  private pausedSince: string | null = null;
  private anotherLog: AnotherLog | null = null;
  /**
   * Set by {@link resumePoint} when the stream's last message of this log (`after`) is behind the
   * feed's own checkpoint (`upTo`): the decisions between them that the feed reaches are missing
   * from the stream and are published again; the first one logs the warn line, then it is cleared.
   */
  private refill: { after: bigint; upTo: bigint } | null = null;
  /** Ends the wait before a retry at once ({@link sleep}; called by {@link stop}). */
  private wakeUp: () => void = () => undefined;

  constructor(
    private readonly store: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: NatsNames,
    /** Told of every erasure record before its copies are deleted, for the command consumer's last check (see HandledErasures). */
    private readonly erasures: HandledErasures = new HandledErasures(),
    /** Where the errors that pause the feed are reported (its checkpoint is in the read models: their damage shows in `/health`); none when absent. */
    private readonly damage?: ReadModelsDamage,
    /** Told when a failure says the decisions stream is missing on the server (`isMissingStreamError`): the transport re-creates the streams. */
    private readonly onStreamMissing: () => void = () => undefined,
  ) {}

  /**
   * Starts following the log after the last message of this log in the decisions stream, or after
   * the checkpoint when the stream is empty (see the module doc; one warn line when the stream's
   * last message, or the checkpoint, is of another log, when the stream is empty under a checkpoint
   * past 0, and at the first decision the stream lacks behind the checkpoint). Never fails: when the store or NATS does not answer (a replica
   * started during a PostgreSQL outage or failover), the feed starts paused at its checkpoint (one
   * warn line; `/health` shows the error, {@link state}) and looks for its resume point again in the
   * background (growing delay, at most 5 s) until both answer, then follows the log (one line when
   * it resumes). Resolves once the feed follows the log, or once its first attempt failed.
   */
  async start(): Promise<void> {
    const own = this.readModels.readCheckpointEvent(DECISION_FEED_CHECKPOINT);
    this.checkpoint = own.position;
    try {
      const { from, event } = await this.resumePoint(own);
      this.loop = this.follow(from, event);
    } catch (err) {
      this.paused(own.position, err);
      this.loop = this.startWhenAnswered(own);
    }
  }

  /** {@link start}'s retries after its first attempt failed: finds the resume point from `own`, then follows the log from there. */
  private async startWhenAnswered(own: CheckpointEvent): Promise<void> {
    let delay = 100;
    while (!this.stopped) {
      await this.sleep(delay);
      if (this.stopped) return;
      delay = Math.min(delay * 2, 5000);
      let resume: { from: bigint; event: string | null };
      try {
        resume = await this.resumePoint(own);
      } catch (err) {
        this.paused(own.position, err);
        continue;
      }
      // Still paused: follow() clears it (one line) once it reads the log, as after any pause.
      return this.follow(resume.from, resume.event);
    }
  }

  /** Where the feed is, why it is paused (null fields while it runs), and where it resumed on another log's messages. */
  state(): DecisionFeedState {
    return {
      checkpoint: this.checkpoint,
      skippedTo: max(this.checkpoint, this.skippedTo),
      lastError: this.lastError,
      lastErrorAt: this.lastErrorAt,
      streamFull: this.streamFull,
      anotherLog: this.anotherLog,
    };
  }

  /** Stops following (the position reached is checkpointed). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeUp();
    await this.subscription?.close();
    await this.loop;
  }

  /**
   * Where to resume from `own` (the feed's checkpoint and its event) when it may not be this log's
   * (at start, or after a pause in which the store was restored): after the last message of this
   * log in the stream, also when `own` is later (the stream lacks what this replica published after
   * it: {@link refill} is set, and the first such decision published logs a warn line); when the
   * stream is empty, after `own` when it is this log's (one warn line when it is past 0: the decisions
   * up to it are not published again), else from the start; when the stream holds messages but none
   * of this log, after `own` when it is this log's and not 0, else after the log's head (nothing
   * tells what of it was published). Logs the warn line and sets {@link anotherLog} when the
   * stream's last message, or `own`, is not this log's.
   */
  private async resumePoint(own: CheckpointEvent): Promise<{ from: bigint; event: string | null }> {
    // The stream first: the head it reads after the stream's state is the one every check here uses (see lastMessageOfThisLog).
    const stream = await lastMessageOfThisLog(this.jsm, this.names, this.store);
    const head = stream.head;
    const ownOff = await checkpointOffLog(this.store, own, head);
    const ownFrom = ownOff ? 0n : own.position;
    let from: bigint;
    let event: string | null;
    let why: string;
    this.refill = null;
    if (stream.position !== null && (stream.position > 0n || ownFrom === 0n)) {
      ({ position: from, event } = stream as { position: bigint; event: string | null });
      why = stream.position === 0n ? 'the start of the log: the stream is empty' : 'the last message of this log in the stream';
      // The stream is behind this replica's checkpoint: what it lacks is published again (the first one says so).
      if (stream.position < ownFrom) this.refill = { after: stream.position, upTo: ownFrom };
    } else if (stream.position !== null || ownFrom > 0n) {
      ({ position: from, event } = { position: ownFrom, event: own.event });
      why = 'its own checkpoint';
    } else {
      ({ position: from, event } = { position: head, event: null });
      why = `the log's head: no message in the stream is of this log, so the events up to it are taken as published`;
    }
    if (stream.position === 0n && ownFrom > 0n)
      this.logger.warn(
        `decision feed: ${this.names.decisionStream} holds no message (a new or purged stream, every message aged out by its max_age, ` +
          `or a NATS server that lost its store): it resumes after its own checkpoint (${DECISION_FEED_CHECKPOINT}, position ${ownFrom}); ` +
          `the decisions up to it are not published again (read them over HTTP: GET /v1/sessions/:id/compactions)`,
      );
    if (stream.lastOff === null && ownOff === null) return { from, event };
    const found = [
      ...(stream.lastOff ? [offLogText(`the last message in ${this.names.decisionStream}`, stream.lastOff)] : []),
      ...(ownOff ? [offLogText(`its checkpoint (${DECISION_FEED_CHECKPOINT})`, ownOff)] : []),
    ];
    const problem =
      `decision feed: ${found.join('; ')}: the store was restored from a backup, or is another store on the same NATS_PREFIX; ` +
      `it resumes after position ${from} (${why}) and publishes every later decision and handles every later erasure; ` +
      `the other log's messages stay in ${this.names.decisionStream} (an erasure deletes the erased session's among them too), and positions there restart: consumers deduplicate by Nats-Msg-Id, not by position`;
    this.logger.warn(problem);
    this.anotherLog = { foundPosition: (stream.lastOff ?? ownOff)!.position, headPosition: head, resumedAfter: from, problem, at: new Date().toISOString() };
    return { from, event };
  }

  /** Whether a message published for `recorded` is of another log than the store's (the rule of {@link checkpointOffLog}). */
  private async ofAnotherLog(recorded: CheckpointEvent): Promise<boolean> {
    return (await checkpointOffLog(this.store, recorded, await this.store.headPosition())) !== null;
  }

  private async follow(from: bigint, fromEvent: string | null): Promise<void> {
    let checkpoint = from;
    let checkpointEvent = fromEvent;
    this.checkpoint = from;
    let delay = 100;
    // Positions up to here are in the stream already (other replicas published them while this feed was
    // paused): the feed passes them without publishing them again (see the module doc).
    let publishedUpTo = 0n;
    while (!this.stopped) {
      try {
        // Resuming after a pause (a failure of these reads is one more failure: retried like the others).
        if (this.lastError !== null) {
          const head = await this.store.headPosition();
          if ((await checkpointOffLog(this.store, { position: checkpoint, event: checkpointEvent }, head)) !== null) {
            // The store under the feed holds another log now (restored while this replica ran): resume as at start.
            ({ from: checkpoint, event: checkpointEvent } = await this.resumePoint({ position: checkpoint, event: checkpointEvent }));
            this.checkpoint = checkpoint;
            this.skippedTo = 0n; // a position of the other log
            publishedUpTo = 0n;
          } else publishedUpTo = max(publishedUpTo, (await lastMessageOfThisLog(this.jsm, this.names, this.store)).position ?? 0n);
          // With no event after the checkpoint (an idle instance after a store outage), or only deleted ones
          // (an interrupted erasure), nothing would clear the pause until the next event: the log's head,
          // read back and not past what the feed has read, says the feed follows it again.
          if (await this.readToHead(checkpoint)) this.resumed(max(checkpoint, this.skippedTo), publishedUpTo);
        }
        this.subscription = this.store.subscribeToAll({ fromPosition: checkpoint });
        let unsaved = 0;
        for await (const event of this.withTailChecks(this.subscription, checkpoint)) {
          let decision = decisionOf(event);
          // A compaction's own archived ids, as its history item names them (a read of the session's two events before it).
          if (decision?.type === COMPACTION_COMPLETED && event.position > publishedUpTo && event.revision > 0n) {
            const before = await this.store.readStream(event.streamId, {
              direction: 'backwards',
              fromRevision: event.revision - 1n,
              maxCount: OWN_ARCHIVE_LOOKBACK,
            });
            decision = withOwnArchivedIds(decision, before);
          }
          // An erasure: first delete the session's answers and decisions from the streams (a failure retries from here).
          // Also one another replica published: it deleted the copies before publishing the record, but this
          // feed may have published some after that (lagging more than the duplicate window); deleting what
          // is gone deletes nothing.
          if (decision?.type === SESSION_ERASED) {
            const data = event.data as SessionErasedData;
            const erasure = { position: event.position, rows: erasedRowsOf(data), erasedAt: data.erasedAt };
            // Noted first: an answer stored after this deletion has begun is deleted by the consumer's check.
            this.erasures.noted(decision.tenantId, decision.sessionId, erasure);
            await eraseSessionCopies(
              this.jsm,
              this.names,
              decision.tenantId,
              decision.sessionId,
              erasure,
              (m) => this.ofAnotherLog(m),
              async (basis) => answerOfAnotherLog(this.store, basis, await this.store.headPosition()),
            );
          }
          if (decision && event.position > publishedUpTo) {
            if (this.refill !== null && event.position <= this.refill.upTo) this.refilling(event.position);
            await this.publish(decision, event);
          }
          checkpoint = event.position;
          checkpointEvent = checkpointEventIdentity(event);
          this.checkpoint = checkpoint;
          // Decisions are checkpointed at once; other events every 1000 (a replay of those publishes nothing).
          // Without waiting for the projector's worker thread, which may hold the read models' write lock
          // for a second applying a long session's erasure (this very record): the next event tries again.
          if ((decision || ++unsaved >= 1000) && this.readModels.tryWriteCheckpoint(DECISION_FEED_CHECKPOINT, checkpoint, checkpointEvent)) unsaved = 0;
          else if (decision) unsaved = 1000;
          delay = 100;
          if (this.lastError !== null) this.resumed(checkpoint, publishedUpTo);
        }
        if (checkpoint !== from) this.readModels.writeCheckpoint(DECISION_FEED_CHECKPOINT, checkpoint, checkpointEvent);
      } catch (err) {
        if (this.stopped) break;
        this.paused(checkpoint, err);
        await this.sleep(delay);
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  /**
   * The events of `subscription` (which starts after `from`), in order. Whenever none comes within
   * `TAIL_CHECK_IDLE_MS` (the feed has read what the log holds), it first passes the deleted events
   * at the log's end after the last one yielded ({@link skipDeletedTail}), once per wait: the loop
   * iterating it handles each event before asking for the next. A failed check is left to the
   * subscription to report (the store does not answer: its reads fail too).
   */
  private async *withTailChecks(subscription: Subscription, from: bigint): AsyncGenerator<RecordedEvent> {
    const events = subscription[Symbol.asyncIterator]();
    let handled = from;
    try {
      for (;;) {
        const pending = events.next();
        let timer: NodeJS.Timeout | undefined;
        const idle = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), TAIL_CHECK_IDLE_MS)));
        let next = await Promise.race([pending, idle]).finally(() => clearTimeout(timer));
        if (next === null) {
          await this.skipDeletedTail(handled).catch(() => undefined);
          next = await pending;
        }
        if (next.done) return;
        yield next.value;
        handled = next.value.position;
      }
    } finally {
      await events.return?.();
    }
  }

  /**
   * Moves {@link skippedTo} to the store's readable head when no event is left after `checkpoint`
   * (the feed's, bigint) nor after the position skipped to already up to it: the log ends with
   * deleted events the feed never read (`headToSkipTo`, the projector's rule). Two reads of the
   * store, one when the feed is at its readable head already.
   * @throws what the store throws when it does not answer.
   */
  private async skipDeletedTail(checkpoint: bigint): Promise<void> {
    const past = await headToSkipTo(this.store, max(checkpoint, this.skippedTo));
    if (past !== null) this.skippedTo = past;
  }

  /**
   * Whether the feed at `checkpoint` (bigint) has read the whole log: the store's head, read after
   * {@link skipDeletedTail}, is not past what it has read (its checkpoint, or the readable head it
   * skipped to). Not when the head counts events not readable yet (SQLite's writer thread: a batch
   * committed whose answer has not arrived): the feed reads them next.
   * @throws what the store throws when it does not answer.
   */
  private async readToHead(checkpoint: bigint): Promise<boolean> {
    await this.skipDeletedTail(checkpoint);
    return (await this.store.headPosition()) <= max(checkpoint, this.skippedTo);
  }

  /**
   * Records that the feed is paused at `position` by `err`: one warn line when the pause begins (not
   * one per retry): `/health` shows the error while it lasts, and one line says when it resumes ({@link resumed}).
   */
  private paused(position: bigint, err: unknown): void {
    this.damage?.report(this.damage.classify(err), 'the decisions feed');
    const missing = isMissingStreamError(err);
    this.streamFull = !missing && isStreamFullError(err);
    const message = missing
      ? missingStreamText(this.names.decisionStream)
      : this.streamFull
        ? fullStreamText(this.names.decisionStream, (err as Error).message)
        : (err as Error).message;
    const now = new Date().toISOString();
    if (this.lastError === null) {
      this.logger.warn(`decision feed paused at position ${position}: ${message}; retrying (at most every 5000 ms) until it resumes`);
      this.pausedSince = now;
    } else if (message !== this.lastError) {
      // The cause changed while retrying: /health shows the latest, so the log says it too (once per change).
      this.logger.warn(`decision feed still paused at position ${position}: ${message}`);
    }
    this.lastError = message;
    this.lastErrorAt = now;
    if (missing) this.onStreamMissing();
  }

  /**
   * Logs the one warn line of a refill ({@link refill}) at its first decision, at `position`
   * (bigint), and clears it.
   */
  private refilling(position: bigint): void {
    const { after, upTo } = this.refill!;
    this.refill = null;
    this.logger.warn(
      `decision feed: ${this.names.decisionStream} lacks decisions this log made after position ${after} (its last message of this log), ` +
        `up to this replica's checkpoint (${DECISION_FEED_CHECKPOINT}, position ${upTo}): the replicas published them to another NATS server, ` +
        `or the server's store was restored from an older copy; it publishes them again from position ${position} (first missing decision) on, in log order`,
    );
  }

  /** Waits `ms` before a retry, or until {@link stop}. */
  private async sleep(ms: number): Promise<void> {
    if (this.stopped) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.wakeUp = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    this.wakeUp = () => undefined;
  }

  /**
   * Clears the pause and logs the one line saying the feed publishes again: `position` is the first
   * position handled since, `publishedUpTo` the last one it found in the stream (those up to it
   * are passed without publishing: named when the feed passes any).
   */
  private resumed(position: bigint, publishedUpTo: bigint): void {
    const pausedMs = this.pausedSince === null ? 0 : Date.now() - Date.parse(this.pausedSince);
    const passed =
      publishedUpTo >= position
        ? `; passes positions up to ${publishedUpTo} without publishing them (in the stream already: another replica published them)`
        : '';
    this.logger.log(`decision feed resumed: published up to position ${position} after ${pausedMs} ms paused (last error: ${this.lastError})${passed}`);
    this.lastError = null;
    this.lastErrorAt = null;
    this.streamFull = false;
    this.pausedSince = null;
  }

  private async publish(decision: PublishedDecision, event: RecordedEvent): Promise<void> {
    const h = headers();
    h.set(LOG_POSITION_HEADER, decision.position);
    h.set(LOG_EVENT_HEADER, checkpointEventIdentity(event));
    // Always fits: a decision the server refused would be retried for ever, holding every later one behind it.
    const payload = fitDecisionPayload(decision, this.maxPayload());
    await this.js.publish(decisionSubject(this.names.prefix, decision.tenantId, decision.sessionId), payload, { headers: h, msgID: decisionMessageId(event) });
  }

  /** The server's largest message (bytes) less room for headers. */
  private maxPayload(): number {
    return (this.nc.info?.max_payload ?? 1024 * 1024) - 4096;
  }
}
