/**
 * The query side used by the HTTP layer: the active window (projected, or computed from the log
 * at a past revision), the full log and recall (the audit routes are in `SessionHistoryReads`). Reads only read models,
 * except time travel, which reads the log from the last compaction decision at or before the
 * revision asked (`loadSessionWindowAt`, DESIGN §5).
 */
import { Inject, Injectable } from '@nestjs/common';
import { EventStoreUnavailableError, type EventStore } from '@lib/event-store';
import { sessionKey, sessionStream, type EstimatorName } from '../events/session-stream-events';
import { orderedWindow, windowTokens, type WindowEntry } from '../domain/session-window';
import { renderOpenAiWindow } from '../domain/openai-chat-format';
import { openAiRenderingCost } from '../domain/openai-window-cost';
import { quoteInput } from '@lib/compaction';
import { InvalidRequestError, SessionError, type SessionErrorDetails, type SessionNotFoundError } from '../errors';
import { sessionNotFound } from '../read-side/queries/erasure-query';
import { ReadModelsOffLogError } from './read-models-off-log-error';
import { EVENT_STORE, SESSION_SETTINGS } from '../tokens';
import { loadSessionWindowAt } from '../write-side/session-loader';
import { earlierLifeErasure, revisionAtTime, revisionOutOfRangeMessage, timeOutOfRangeMessage, type RevisionAtTime } from './revision-at-time';
import { AcknowledgedPositions, type AcknowledgedScope } from '../write-side/acknowledged-positions';
import type { SessionSettings } from '../write-side/auto-compaction';
import { ReadModelStore } from '../read-side/read-model-store';
import { SessionProjector, unwritableForFullDisk } from '../read-side/session-projector';
import { mapInTurns } from '../event-loop-turns';
import { getWindowInTurns } from '../read-side/queries/window-query';
import { listLog, listLogJson } from '../read-side/queries/session-log-query';
import { getWindowJson } from '../read-side/queries/window-json-query';
import { searchRecall, type RecallSearch } from '../read-side/queries/recall-query';
import { InvalidQueryError } from '../read-side/invalid-query-error';
import { recallCursorAsOf, recallCursorPastEnd } from '../read-side/recall-cursor';
import { jsonSafe } from './json-safe';

/** The projection did not reach `minPosition` within the wait limit. */
export class ProjectionBehindError extends SessionError {
  readonly code = 'projection_behind';
  constructor(position: bigint, checkpoint: bigint, message?: string, details?: Pick<SessionErrorDetails, 'minPosition' | 'catchingUpTo'>) {
    super(message ?? `the read models have not reached position ${position} yet (they are at ${checkpoint}); retry shortly`, {
      ...(details ?? { minPosition: position.toString() }),
      checkpoint: checkpoint.toString(),
    });
  }

  /** This process's read models are still catching up with the log since it started (no `minPosition` asked): `head` is the position they wait for. */
  static catchingUp(head: bigint, checkpoint: bigint): ProjectionBehindError {
    return new ProjectionBehindError(
      head,
      checkpoint,
      `this service process started recently and its read models are still catching up with the log (at position ${checkpoint} of ${head}); retry shortly`,
      { catchingUpTo: head.toString() },
    );
  }

  /**
   * The read models cannot reach `position` because they cannot be written (`why`, the projector's
   * `readModelsFull`: their disk full, or their file's reads or writes failing, {@link unwritableForFullDisk}): answered at
   * once, not after `MAX_WAIT_MS`. The message names no server path (`/health` does).
   */
  static readModelsFull(
    why: string,
    position: bigint,
    checkpoint: bigint,
    details?: Pick<SessionErrorDetails, 'minPosition' | 'catchingUpTo'>,
  ): ProjectionBehindError {
    const [because, until] = unwritableForFullDisk(why)
      ? ['their disk is full', 'space is freed']
      : ["their file's reads or writes fail (a file-size limit, a disk quota or a failing disk)", 'that is fixed'];
    return new ProjectionBehindError(
      position,
      checkpoint,
      `the read models cannot be written: ${because}, so they stay at position ${checkpoint} and cannot reach position ${position}, which this read needs; retry once ${until} (see /health)`,
      details,
    );
  }
}

/** Options of {@link SessionReads.window}. */
export interface WindowOptions {
  /**
   * The window right after this stream revision, computed from the log; a revision inside one
   * atomic decision (see `loadSessionWindowAt`) gives the window after the whole decision, and the
   * answer's `revision` names the revision shown.
   */
  atRevision?: bigint;
  /**
   * Time travel by time: the window right after the last event the store recorded at or before
   * this ISO-8601 date-time (see {@link revisionAtTime}), as `atRevision` of that event's revision
   * gives it; the answer adds `resolved` (that revision and its `recordedAt`). Not with `atRevision`.
   */
  atTime?: string;
  /** Wait (up to `maxWaitMs`) until the projection has applied this global position. */
  minPosition?: bigint;
  format: 'events' | 'openai';
  /**
   * Estimator of `tokens` (tokens, or UTF-16 code units for `chars`): with format `events` the sum
   * of the events' costs; with `openai` the cost of what the messages carry (see `openAiRenderingCost`).
   */
  estimator: EstimatorName;
}

/** Query service over the read models (and the log, for time travel); answers are JSON-safe (bigints as strings). */
@Injectable()
export class SessionReads {
  /** Whether the read models have once reached the log's head as read by {@link caughtUpOnce}: then reads need not wait for the start-up catch-up again. */
  private caughtUp = false;
  /** The head position the start-up catch-up waits for (read from the store when first needed). */
  private catchUpTarget: bigint | null = null;

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly projector: SessionProjector,
    @Inject(SESSION_SETTINGS) private readonly settings: SessionSettings & { maxWaitMs: number },
    private readonly acknowledged: AcknowledgedPositions,
  ) {}

  /**
   * The active window: `{ sessionId, revision, tokens, estimator, events }` or, with format
   * `openai`, `{ sessionId, revision, tokens, estimator, messages }`. `revision` is the revision
   * whose window is shown: with `atRevision` inside one atomic decision (a compaction's events
   * before its closing one; a late answer before its on-arrival archive), the decision's last
   * revision, so no window that was never committed is shown.
   * With `atTime`, the window at the revision {@link revisionAtTime} resolves it to (a time past
   * the last event: the current window, from the log), and `resolved: { revision, recordedAt }`
   * names that event (`revision` may be past it, inside a decision, as with `atRevision`).
   * @throws SessionNotFoundError (404), ProjectionBehindError (503), InvalidRequestError (400
   *   `revision_out_of_range`) when `atRevision` is not one of the session's revisions (past its last: refused
   *   after a read of its head revision and of its first event, nothing folded; or before its first);
   *   (400 `time_out_of_range`) when `atTime` is before the session's first event was recorded.
   */
  async window(tenantId: string, sessionId: string, options: WindowOptions): Promise<unknown> {
    let revision: bigint;
    let entries: WindowEntry[];
    let resolved: RevisionAtTime | undefined;
    let atRevision = options.atRevision;
    // Time travel reads the store, not the read models: nothing to wait for, but a position never written is refused as on every read.
    if (options.atRevision !== undefined || options.atTime !== undefined) await this.refuseUnwritten(options.minPosition);
    if (options.atTime !== undefined) {
      resolved = await this.resolveTime(tenantId, sessionId, options.atTime);
      atRevision = resolved.revision;
    }
    if (atRevision !== undefined) {
      const key = sessionKey(tenantId, sessionId);
      if (options.atTime === undefined) {
        // Past the session's head (or no session): refused after one cheap read of its head
        // revision, before anything is folded (a fold past the head folds the current window, the
        // whole log of an uncompacted session: 230–320 ms for 15,000 events on PostgreSQL).
        // (`atTime` resolves to one of the session's revisions: never past it.)
        const last = await this.store.streamRevision(sessionStream(key));
        if (last === null || atRevision > last) throw await this.revisionOutOfRange(tenantId, sessionId, atRevision, last);
      }
      const state = await loadSessionWindowAt(this.store, key, atRevision);
      // Not in the session: before its first revision (a session written again after an erasure
      // continues after the erased revisions), or past its last (the session erased since its head was read).
      if (!state || state.revision === null || state.revision < atRevision) throw await this.revisionOutOfRange(tenantId, sessionId, atRevision);
      revision = state.revision;
      entries = orderedWindow(state);
    } else {
      await this.waitFor(options.minPosition, { tenantId, sessionId });
      const projected = await getWindowInTurns(this.readModels, tenantId, sessionId);
      if (!projected) throw await this.notFound(tenantId, sessionId);
      revision = projected.revision;
      entries = projected.entries;
    }
    const at = resolved ? { resolved: { revision: resolved.revision.toString(), recordedAt: resolved.recordedAt.toISOString() } } : {};
    if (options.format === 'openai') {
      // `tokens`: the cost of what the messages carry (placeholders in, what is left out not).
      const rendering = renderOpenAiWindow(entries.map((e) => e.event));
      const tokens = openAiRenderingCost(rendering, entries, options.estimator);
      return { sessionId, revision: revision.toString(), ...at, tokens, estimator: options.estimator, messages: rendering.messages };
    }
    return {
      sessionId,
      revision: revision.toString(),
      ...at,
      tokens: windowTokens(entries, options.estimator),
      estimator: options.estimator,
      events: await mapInTurns(entries, (e) => ({
        ...e.event,
        tokens: e.costs[options.estimator],
        revision: e.revision.toString(),
        createdAt: e.createdAt,
        ...(e.compactionId ? { compactionId: e.compactionId } : {}),
      })),
    };
  }

  /**
   * The refusal of `atRevision` (bigint) when it is none of the session's revisions: before its
   * first (a session written again after an erasure continues after the erased revisions: the
   * message then says when the earlier life was erased, as `atTime`'s does) or past its last. Two
   * cheap reads: the session's first event, and its head revision unless given (`knownLast`: null when
   * the stream does not exist).
   * @returns InvalidRequestError (400 `revision_out_of_range`, parameter `atRevision`) naming the
   *   session's revisions; SessionNotFoundError (404) when the session has no event.
   */
  private async revisionOutOfRange(tenantId: string, sessionId: string, atRevision: bigint, knownLast?: bigint | null): Promise<Error> {
    const stream = sessionStream(sessionKey(tenantId, sessionId));
    const [first] = await this.store.readStream(stream, { fromRevision: 'start', maxCount: 1 });
    const last = knownLast !== undefined ? knownLast : await this.store.streamRevision(stream);
    if (!first || last === null) return sessionNotFound(this.readModels, tenantId, sessionId);
    const erased = atRevision < first.revision ? await earlierLifeErasure(this.store, tenantId, sessionId, first, { revision: atRevision }) : null;
    return new InvalidRequestError('atRevision', revisionOutOfRangeMessage(atRevision, first.revision, last, erased), 'revision_out_of_range');
  }

  /**
   * The event `atTime` resolves to ({@link revisionAtTime}).
   * @throws SessionNotFoundError (404) when the session has no event; InvalidRequestError (400
   *   `time_out_of_range`, parameter `atTime`) when its first event was recorded after `atTime`,
   *   naming when it was, and `atTime` also in UTC when it has an offset; when an earlier life of
   *   the session id was erased, saying so and when (see {@link timeOutOfRangeMessage}).
   */
  private async resolveTime(tenantId: string, sessionId: string, atTime: string): Promise<RevisionAtTime> {
    const key = sessionKey(tenantId, sessionId);
    const resolved = await revisionAtTime(this.store, key, atTime);
    if (resolved) return resolved;
    const [first] = await this.store.readStream(sessionStream(key), { fromRevision: 'start', maxCount: 1 });
    if (!first) throw sessionNotFound(this.readModels, tenantId, sessionId);
    const erased = await earlierLifeErasure(this.store, tenantId, sessionId, first, { at: atTime });
    const message = timeOutOfRangeMessage(atTime, quoteInput(atTime, { quoted: false }), { revision: first.revision, recordedAt: first.created }, erased);
    throw new InvalidRequestError('atTime', message, 'time_out_of_range');
  }

  /**
   * {@link window}'s answer as UTF-8 JSON bytes, for the projected window in format `events` (no
   * `atRevision`): the same bytes as `JSON.stringify` of {@link window}'s answer, with each stored
   * event spliced in undecoded (see `getWindowJson`), so a very large event does not hold the event
   * loop for a parse and a stringify. Other options are answered as {@link window} does (an object).
   * @throws what {@link window} throws.
   */
  async windowJson(tenantId: string, sessionId: string, options: WindowOptions): Promise<Buffer | object> {
    if (options.atRevision !== undefined || options.atTime !== undefined || options.format !== 'events')
      return (await this.window(tenantId, sessionId, options)) as object;
    await this.waitFor(options.minPosition, { tenantId, sessionId });
    const json = await getWindowJson(this.readModels, tenantId, sessionId, options.estimator);
    if (!json) throw await this.notFound(tenantId, sessionId);
    return json;
  }

  /**
   * The full log from `fromRevision` (inclusive), at most `limit` events, once the read models
   * reached `minPosition` (see {@link waitFor}).
   * @throws SessionNotFoundError (404); what {@link waitFor} throws.
   */
  async log(tenantId: string, sessionId: string, fromRevision: bigint, limit: number, minPosition?: bigint): Promise<unknown> {
    await this.waitFor(minPosition, { tenantId, sessionId });
    const page = listLog(this.readModels, tenantId, sessionId, fromRevision, limit);
    if (!page) throw await this.notFound(tenantId, sessionId);
    return jsonSafe(page);
  }

  /**
   * {@link log}'s answer as UTF-8 JSON bytes: the same bytes as `JSON.stringify` of {@link log}'s
   * answer, each stored event spliced in undecoded (see `listLogJson`).
   * @throws what {@link log} throws.
   */
  async logJson(tenantId: string, sessionId: string, fromRevision: bigint, limit: number, minPosition?: bigint): Promise<Buffer> {
    await this.waitFor(minPosition, { tenantId, sessionId });
    const json = listLogJson(this.readModels, tenantId, sessionId, fromRevision, limit);
    if (!json) throw await this.notFound(tenantId, sessionId);
    return json;
  }

  /**
   * Recall search within the tenant, once the read models reached `minPosition` (see {@link waitFor})
   * and, with a cursor, the position its first page was answered at (perhaps by another replica:
   * the pages hold the hits up to it, so a replica behind it waits for them as for a `minPosition`).
   * @throws InvalidQueryError (400) on a malformed cursor or query, and on a cursor made past the
   *   end of the log (of another log: `recallCursorPastEnd`); what {@link waitFor} and
   *   {@link reachCursorPosition} throw.
   */
  async recall(search: RecallSearch, minPosition?: bigint): Promise<unknown> {
    // A search of one session is scoped to it, as a read of it; any other to the whole tenant.
    await this.waitFor(minPosition, search.sessionId ? { tenantId: search.tenantId, sessionId: search.sessionId } : { tenantId: search.tenantId });
    const asOf = recallCursorAsOf(search.cursor);
    if (asOf !== undefined) await this.reachCursorPosition(asOf, (head) => recallCursorPastEnd(asOf, head));
    return jsonSafe(searchRecall(this.readModels, search));
  }

  /**
   * The rule of every paging cursor that names a global position (bigint) its pages depend on
   * (recall's paging position; the session list's and the erasures' last position): a cursor
   * made by another replica whose read models are ahead of these is followed once these have
   * applied `position` (waited for as a `minPosition`, so the next page is the one that replica
   * would answer); a position past the store's head was never written, so no page made the
   * cursor: refused. Reads nothing when the read models have applied `position` already (every
   * cursor this replica made); otherwise reads the store's head (when the store does not answer,
   * it waits as for any position: an unreachable store does not stop reads).
   * @throws InvalidQueryError `pastEnd(head)` (400 `invalid_query`, parameter `cursor`) when
   *   `position` is past the head of the log.
   * @throws what {@link reached} throws (503 `projection_behind` when they do not reach it in time).
   */
  async reachCursorPosition(position: bigint, pastEnd: (head: bigint) => InvalidQueryError): Promise<void> {
    if (this.projector.checkpoint() >= position) return;
    const head = await this.store.headPosition().catch(() => null);
    if (head !== null && position > head) throw pastEnd(head);
    await this.reached(position);
  }

  /**
   * The 404 of a read that finds no session `sessionId` of `tenantId` in the read models
   * (`sessionNotFound`: the erased one when they hold its erasure), true however far they lag the
   * log: when they have not applied it up to its head (read from the store; unknown when the store
   * does not answer), the message says up to which position the session has no event and that later
   * ones are not applied yet, instead of "no event was appended to it". No wait: a read with
   * `minPosition=0` waits for nothing, and one without waits only for this process's acknowledged writes.
   */
  async notFound(tenantId: string, sessionId: string): Promise<SessionNotFoundError> {
    const checkpoint = this.projector.checkpoint();
    const head = await this.store.headPosition().catch(() => null);
    return sessionNotFound(this.readModels, tenantId, sessionId, head !== null && checkpoint >= head ? undefined : { checkpoint, head });
  }

  /**
   * Waits (up to `maxWaitMs`) until the read models have applied global position `position`
   * (bigint): read-your-writes for every query. Without `position`, waits for every write this
   * process acknowledged before the call (its appends, compactions, policies and erasures: see
   * {@link AcknowledgedPositions}), while the projector runs; while the read models cannot be
   * written (disk full), only for those of `scope` (the session or tenant the read shows: see
   * {@link waitForOwnWrites}). `0n` waits for nothing. A position
   * past the store's head (read from the store, so every replica agrees) was never written: no
   * wait (when the store cannot be read, the wait happens as for any other position).
   * @throws InvalidRequestError (400 `position_out_of_range`, parameter `minPosition`) when
   *   `position` is past the head of the log.
   * @throws ProjectionBehindError (503) when they do not reach it in time.
   * @throws ReadModelsOffLogError (503 `read_models_off_log`), at once, while the read models come
   *   from another log than the store's (the projector's `readModelsOffLog`): nothing is read from them.
   */
  async waitFor(position: bigint | undefined, scope?: AcknowledgedScope): Promise<void> {
    if (this.projector.readModelsOffLog() !== null) throw new ReadModelsOffLogError();
    await this.caughtUpOnce();
    if (position === undefined) return this.waitForOwnWrites(scope);
    if (await this.refuseUnwritten(position)) return;
    await this.reached(position);
  }

  /**
   * The `minPosition` rule of every read, time travel included: a global position (bigint) past the
   * store's head (read from the store, so every replica agrees) was never written. Answers true
   * when the read models have already applied `position` (or no position is given: nothing to
   * check); false when it must still be waited for (or the store cannot be read: an unreachable
   * store does not stop reads, the projector may still catch up).
   * @throws InvalidRequestError (400 `position_out_of_range`, parameter `minPosition`) when
   *   `position` is past the head of the log, naming where it ends.
   */
  private async refuseUnwritten(position: bigint | undefined): Promise<boolean> {
    if (position === undefined || this.projector.checkpoint() >= position) return true;
    const head = await this.store.headPosition().catch(() => null);
    if (head !== null && position > head) {
      throw new InvalidRequestError(
        'minPosition',
        `minPosition: no event is at position ${position} or later (the log ends at ${head}); pass the position an append, compaction or policy answered`,
        'position_out_of_range',
      );
    }
    return false;
  }

  /**
   * Until the read models have once reached the log's head (read from the store when first asked,
   * or by the projector when it started: see `SessionProjector.reachedHeadOnce`),
   * every read waits for that, as for a `minPosition`: a replica that has just started on an
   * existing log would otherwise answer 404 for sessions that exist and old states for the others.
   * Afterwards reads wait only for what they ask. Skipped while the projector is not running.
   * @throws EventStoreUnavailableError (503 `store_unavailable`) when the head cannot be read:
   *   whether a session exists cannot be told yet.
   * @throws ProjectionBehindError (503) when the read models do not reach it in time; the
   *   projector's failure (503 `read_models_damaged`) at once while the read models are found damaged.
   */
  private async caughtUpOnce(): Promise<void> {
    const target = await this.catchUpLeft();
    if (target === null) return;
    const damage = this.projector.readModelsDamage();
    if (damage) throw damage;
    const unwritable = this.projector.readModelsFull();
    if (unwritable !== null) throw ProjectionBehindError.readModelsFull(unwritable, target, this.projector.checkpoint(), { catchingUpTo: target.toString() });
    if (!(await this.projector.waitForPosition(target, this.settings.maxWaitMs))) throw ProjectionBehindError.catchingUp(target, this.projector.checkpoint());
    this.caughtUp = true;
  }

  /** True when the start-up catch-up holds without reading the store (or the projector is not running: nothing to wait for). */
  private catchUpHolds(): boolean {
    if (this.caughtUp || !this.projector.state().running) return true;
    // The projector reached a head it read itself (at start-up, before any read): the rule holds already.
    if (this.projector.reachedHeadOnce()) this.caughtUp = true;
    return this.caughtUp;
  }

  /**
   * The start-up catch-up rule, shared by {@link caughtUpOnce} (reads wait for it) and {@link ready}
   * (a readiness probe asks it without waiting): null once the read models have reached the head
   * read when first asked (or while the projector is not running), else that head.
   * @throws what `headPosition` throws, when the head is first read.
   */
  private async catchUpLeft(): Promise<bigint | null> {
    if (this.catchUpHolds()) return null;
    this.catchUpTarget ??= await this.store.headPosition();
    if (this.projector.checkpoint() < this.catchUpTarget) return this.catchUpTarget;
    this.caughtUp = true;
    return null;
  }

  /**
   * Readiness (`GET /health/ready`): resolves when reads would be served without the start-up wait
   * (the read models have once reached the log's head: the rule reads wait for, see
   * {@link caughtUpOnce}). Once that holds it stays ready while the store is away: reads are
   * served from the read models, and writes answer 503 `store_unavailable` themselves (taking
   * every replica of a shared store out of a load balancer would stop the reads too). Never waits
   * for the projector.
   * @throws EventStoreUnavailableError (503 `store_unavailable`) before the catch-up holds, when
   *   the store does not answer (the log's head cannot be read).
   * @throws ProjectionBehindError (503 `projection_behind`, `catchingUpTo`) while the read models
   *   have not yet reached it.
   */
  async ready(): Promise<void> {
    if (this.catchUpHolds()) return;
    let target: bigint | null;
    try {
      await this.store.headPosition();
      target = await this.catchUpLeft();
    } catch (err) {
      throw err instanceof EventStoreUnavailableError ? err : new EventStoreUnavailableError(`the event store does not answer: ${(err as Error).message}`, err);
    }
    if (target !== null) throw ProjectionBehindError.catchingUp(target, this.projector.checkpoint());
  }

  /**
   * Waits for this process's acknowledged writes (no store read: they are in the log). While the
   * read models cannot be written (disk full: the projector's `readModelsFull`), or the projector
   * cannot follow the log (the store down: {@link projectorStalled}), and `scope` is
   * given, only for those the read shows (see `AcknowledgedPositions.lastWithin`): a session whose
   * acknowledged events are all projected is served, although events of other sessions wait
   * unprojected (they cannot change what it shows); a tenant-wide read (`scope` without
   * `sessionId`) is served when none of them is the tenant's. Otherwise for all of them, as before
   * the disk filled (a wait then costs only the projection lag).
   * @throws what {@link reached} throws.
   */
  private async waitForOwnWrites(scope?: AcknowledgedScope): Promise<void> {
    const checkpoint = this.projector.checkpoint();
    const own = this.acknowledged.last();
    if (checkpoint >= own || !this.projector.state().running) {
      this.acknowledged.projectedUpTo(checkpoint);
      return;
    }
    const needed = scope && this.projectorStalled() ? this.acknowledged.lastWithin(scope) : own;
    if (checkpoint >= needed) return;
    await this.reached(needed);
  }

  /**
   * Whether the projector cannot apply the log for now, for a reason a read can be served around:
   * the read models' disk is full, or its last attempt to follow the log failed (the store does not
   * answer it: a PostgreSQL outage, newcomer ncfleet54), not for damaged read models or another
   * log's (those answer on their own). Reads then wait only for what they show ({@link waitForOwnWrites}).
   */
  private projectorStalled(): boolean {
    if (this.projector.readModelsFull() !== null) return true;
    const state = this.projector.state();
    return state.lastError !== null && !state.readModelsDamaged && !state.offLog;
  }

  /**
   * Waits (up to `maxWaitMs`) until the read models have applied `position`; not at all while
   * they cannot be written for want of space (the projector's `readModelsFull`).
   * @throws ProjectionBehindError (503) when they do not reach it in time, or at once while their disk is full;
   *   the projector's failure (503 `read_models_damaged`) at once while they are found damaged (`SessionProjector.readModelsDamage`).
   */
  private async reached(position: bigint): Promise<void> {
    const damage = this.projector.checkpoint() < position ? this.projector.readModelsDamage() : null;
    if (damage) throw damage;
    const unwritable = this.projector.readModelsFull();
    if (this.projector.checkpoint() < position && unwritable !== null)
      throw ProjectionBehindError.readModelsFull(unwritable, position, this.projector.checkpoint(), { minPosition: position.toString() });
    const reached = await this.projector.waitForPosition(position, this.settings.maxWaitMs);
    if (!reached) throw new ProjectionBehindError(position, this.projector.checkpoint());
  }
}
