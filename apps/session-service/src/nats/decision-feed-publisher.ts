/**
 * The decisions feed (issue 15): follows the global log — like a projector, with its own checkpoint
 * (`nats-decision-feed` in the read-model database), never from the command path — and publishes
 * every compaction decision (`CompactionCompleted`, `CompactionFailed`), every archive on arrival
 * (an `EventsArchived` with `onArrival: true`: a late answer to a call a compaction archived,
 * attributed to that compaction, DESIGN §3.3 rule 3) and every erasure record (`SessionErased`)
 * to `<prefix>.decisions.<tenant>.<session>`, in log order, with the global position as JetStream
 * message id.
 *
 * It starts after the later of its checkpoint and the position of the last message already in the
 * decisions stream, so a restart (or a lost checkpoint) republishes nothing; replicas running it at
 * once publish the same positions, and the stream keeps one copy of each (message-id
 * de-duplication within the stream's duplicate window, 2 min), but a core NATS subscriber of the
 * subject receives every replica's publish (one copy per replica: it reads through a JetStream
 * consumer or deduplicates by `Nats-Msg-Id`). While a publish fails (NATS down) the feed is
 * paused: one warn line when it pauses, `/health` shows the error
 * ({@link DecisionFeedPublisher.state}), one line when it resumes. Before publishing an erasure
 * record it deletes the erased session's answers and earlier decisions from the results and
 * decisions streams ({@link eraseSessionCopies}). A publish that fails is retried (growing delay,
 * at most 5 s) and never skipped, so the feed has no gaps and stays in log order.
 *
 * Resuming after a pause (every retry), the feed first reads the position of the last message in
 * the decisions stream (a failure of that read is retried like any other); the positions up to it,
 * which other replicas published meanwhile (in log order, so all of them), it passes without
 * publishing them again: a pause longer than the duplicate window adds no second copies. It still
 * reads them from the log, and still deletes the copies of every erasure record among them before
 * passing it (the replica that published the record deleted them first, but this feed may have
 * published some of the session's decisions after that, when it lagged behind by more than the
 * duplicate window; deleting what is gone deletes nothing). Not covered: a replica lagging behind
 * another by more than the duplicate window without a pause publishes second copies.
 *
 * Message body: `{ type, tenantId, sessionId, position, revision, recordedAt, decision }` — the
 * decision event's data without its internal `checkpoint` (positions and revisions are decimal
 * strings; `revision` is null for erasure records). Header `Log-Position` repeats the position.
 * A decision too large for the server's `max_payload` is published without its `keptIds` and
 * `archivedIds` (`decision.omitted` names them; the compaction history has them).
 */
import { Logger } from '@nestjs/common';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { EventStore, RecordedEvent, Subscription } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  EVENTS_ARCHIVED,
  SESSION_ERASED,
  type EventsArchivedData,
  type ReadModelStore,
  type SessionEventMetadata,
} from '@lib/session';
import { LOG_POSITION_HEADER, decisionSubject, type NatsNames } from './nats-names';
import { eraseSessionCopies } from './nats-erasure';

/** Row name of this feed's checkpoint in `projector_checkpoints`. */
export const DECISION_FEED_CHECKPOINT = 'nats-decision-feed';
export { LOG_POSITION_HEADER };

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
 * The feed's state for `/health`: the last global position it handled (published or passed), and while
 * it is paused (a publish or a read failed; it retries) the error and since when (ISO-8601), else null.
 */
export interface DecisionFeedState {
  checkpoint: bigint;
  lastError: string | null;
  lastErrorAt: string | null;
}

/** The later of two positions. */
function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** See the module doc. */
export class DecisionFeedPublisher {
  private readonly logger = new Logger('DecisionFeed');
  private subscription: Subscription | null = null;
  private loop: Promise<void> | null = null;
  private stopped = false;
  private checkpoint = 0n;
  private lastError: string | null = null;
  private lastErrorAt: string | null = null;
  private readonly encoder = new TextEncoder();

  constructor(
    private readonly store: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly names: NatsNames,
  ) {}

  /** Starts following the log after the later of the checkpoint and the last published position. */
  async start(): Promise<void> {
    const from = max(this.readModels.readCheckpoint(DECISION_FEED_CHECKPOINT), await this.lastPublishedPosition());
    this.loop = this.follow(from);
  }

  /** Where the feed is, and why it is paused (null fields while it runs). */
  state(): DecisionFeedState {
    return { checkpoint: this.checkpoint, lastError: this.lastError, lastErrorAt: this.lastErrorAt };
  }

  /** Stops following (the position reached is checkpointed). */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.loop;
  }

  private async lastPublishedPosition(): Promise<bigint> {
    const info = await this.jsm.streams.info(this.names.decisionStream);
    if (info.state.messages === 0) return 0n;
    // The last sequence may be a decision an erasure deleted: the last message still there is before it.
    for (let seq = info.state.last_seq; seq >= info.state.first_seq; seq--) {
      const last = await this.jsm.streams.getMessage(this.names.decisionStream, { seq });
      if (!last) continue;
      const position = last.header?.get(LOG_POSITION_HEADER);
      return position ? BigInt(position) : 0n;
    }
    return 0n;
  }

  private async follow(from: bigint): Promise<void> {
    let checkpoint = from;
    this.checkpoint = from;
    let delay = 100;
    // Positions up to here are in the stream already (other replicas published them while this feed was
    // paused): the feed passes them without publishing them again (see the module doc).
    let publishedUpTo = 0n;
    while (!this.stopped) {
      try {
        // Resuming after a pause (a failure of this read is one more failure: retried like the others).
        if (this.lastError !== null) {
          publishedUpTo = max(publishedUpTo, await this.lastPublishedPosition());
          // With no event after the checkpoint (an idle instance after a store outage) nothing would clear
          // the pause until the next decision: the log's head read back says the feed follows it again.
          if ((await this.store.headPosition()) <= checkpoint) this.resumed(checkpoint, publishedUpTo);
        }
        this.subscription = this.store.subscribeToAll({ fromPosition: checkpoint });
        let unsaved = 0;
        for await (const event of this.subscription) {
          const decision = decisionOf(event);
          // An erasure: first delete the session's answers and decisions from the streams (a failure retries from here).
          // Also one another replica published: it deleted the copies before publishing the record, but this
          // feed may have published some after that (lagging more than the duplicate window); deleting what
          // is gone deletes nothing.
          if (decision?.type === SESSION_ERASED) await eraseSessionCopies(this.jsm, this.names, decision.tenantId, decision.sessionId, event.position);
          if (decision && event.position > publishedUpTo) await this.publish(decision);
          checkpoint = event.position;
          this.checkpoint = checkpoint;
          // Decisions are checkpointed at once; other events every 1000 (a replay of those publishes nothing).
          if (decision || ++unsaved >= 1000) {
            this.readModels.writeCheckpoint(DECISION_FEED_CHECKPOINT, checkpoint);
            unsaved = 0;
          }
          delay = 100;
          if (this.lastError !== null) this.resumed(checkpoint, publishedUpTo);
        }
        if (checkpoint !== from) this.readModels.writeCheckpoint(DECISION_FEED_CHECKPOINT, checkpoint);
      } catch (err) {
        if (this.stopped) break;
        const message = (err as Error).message;
        // One line when the feed pauses (not one per retry): /health shows the error while it lasts, and one line says when it resumes.
        if (this.lastError === null) {
          this.logger.warn(`decision feed paused at position ${checkpoint}: ${message}; retrying (at most every 5000 ms) until it resumes`);
          this.lastErrorAt = new Date().toISOString();
        }
        this.lastError = message;
        await new Promise((resolve) => setTimeout(resolve, delay));
        delay = Math.min(delay * 2, 5000);
      }
    }
  }

  /**
   * Clears the pause and logs the one line saying the feed publishes again: `position` is the first
   * position handled since, `publishedUpTo` the last one it found in the stream (those up to it
   * are passed without publishing: named when the feed passes any).
   */
  private resumed(position: bigint, publishedUpTo: bigint): void {
    const pausedMs = this.lastErrorAt === null ? 0 : Date.now() - Date.parse(this.lastErrorAt);
    const passed =
      publishedUpTo >= position
        ? `; passes positions up to ${publishedUpTo} without publishing them (in the stream already: another replica published them)`
        : '';
    this.logger.log(`decision feed resumed: published up to position ${position} after ${pausedMs} ms paused (last error: ${this.lastError})${passed}`);
    this.lastError = null;
    this.lastErrorAt = null;
  }

  private async publish(decision: PublishedDecision): Promise<void> {
    const h = headers();
    h.set(LOG_POSITION_HEADER, decision.position);
    let payload = this.encoder.encode(JSON.stringify(decision));
    if (payload.length > this.maxPayload()) {
      // A decision over a huge window: its id lists would exceed the server's max_payload and stall the feed.
      const { keptIds: _kept, archivedIds: _archived, ...rest } = decision.decision;
      payload = this.encoder.encode(JSON.stringify({ ...decision, decision: { ...rest, omitted: ['keptIds', 'archivedIds'] } }));
    }
    await this.js.publish(decisionSubject(this.names.prefix, decision.tenantId, decision.sessionId), payload, { headers: h, msgID: decision.position });
  }

  /** The server's largest message (bytes) less room for headers. */
  private maxPayload(): number {
    return (this.nc.info?.max_payload ?? 1024 * 1024) - 4096;
  }
}
