/**
 * Command and handler: append conversation events to a session (DESIGN §2 write path).
 *
 * Load the session's state at revision R → name the tool responses sent without a name after
 * their calls in that state (OpenAI tool messages, {@link ResponseNaming}) → count the events'
 * tokens (inline for a small request; a large one, counted off-thread, is first checked by the rules
 * on that state, {@link checkAppend}, so a refused request costs no counting) → {@link decideAppend}
 * → one atomic append at expected revision R (or the client's own `expectedRevision`) →
 * `{ revision, position }`. A client's exact revision is checked first, on the loaded state
 * (`checkClientExpected`): one that only compactions' decisions came after still holds (decided at
 * the new revision); a resend written at it answers its original result, whatever the state holds
 * now; any other is refused 409 before the rules on the state. When the stream moved on meanwhile,
 * reload, check, name and decide again (bounded): a response is never named after a state other
 * than the one its append was decided on. Then a {@link SessionEventsAppended}
 * event is published so auto-compaction can run in the background; the append never waits for it.
 */
import { CommandHandler, EventBus, type ICommandHandler } from '@nestjs/cqrs';
import type { SessionEvent } from '@lib/compaction';
import { Inject, Optional } from '@nestjs/common';
import {
  findInStream,
  DuplicateEventIdError,
  WrongExpectedRevisionError,
  WrongIncarnationError,
  type AppendOptions,
  type AppendResult,
  type EventData,
  type EventStore,
  type ExpectedRevision,
} from '@lib/event-store';
import { CONVERSATION_EVENT, sessionKey, sessionStream } from '../events/session-stream-events';
import {
  alignToStored,
  checkAppend,
  checkAppendShape,
  decideAppend,
  type AppendDecision,
  type AppendEvents,
  type AppendVerdict,
  type EventToAppend,
} from '../decider/session-decider';
import { expectedRevisionOnLog, expectedRevisionReadCount, MAX_DECISIONS_BETWEEN_RESENT, resentAsFirst } from '../decider/client-expected-revision';
import type { SessionWindowState } from '../domain/session-window';
import type { EventCosts } from '../events/session-stream-events';
import { DuplicateEventIdConflictError, RevisionConflictError, ToolCallConflictError, UnknownToolCallError } from '../errors';
import { answeredCallIds, callIdsInLog } from './call-ids-in-log';
import { clientIdsInLog } from './client-ids-in-log';
import { storedConversationData } from './stored-conversation-data';
import { nameResponsesFromCalls } from '../domain/response-names';
import { firstDifference } from '../domain/first-difference';
import { COMMAND_EVENT_STORE } from '../tokens';
import { SessionStateCache } from './session-state-cache';
import { PerSessionQueue } from './per-session-queue';
import { MAX_WRITE_ATTEMPTS, pauseAfterConflict } from './write-conflict-retry';
import { ErasuresInProgress } from './erasures-in-progress';
import { StoreAnswerCheck } from './store-answer-check';
import { sharedTokenCountingPool } from '../token-counting/token-counting-pool';
import { tellDecidingOn } from './decision-watch';
import { APPENDED_EVENTS_OBSERVER, type AppendedEventsObserver } from './appended-events-observer';
import { checkWriteAdmission } from '../decider/write-admission';
import { lifeAtArrival } from './life-at-arrival';
import { InterruptedErasureSweep } from './interrupted-erasures';
import { ReadModelStore } from '../read-side/read-model-store';
import { revisionConflict } from '../read-side/queries/erasure-query';

/** How many times an append reloads and decides again after the stream moved on (with a client's `expectedRevision`: while it still holds): {@link MAX_WRITE_ATTEMPTS}, the bound of every session write. */
export const MAX_APPEND_ATTEMPTS = MAX_WRITE_ATTEMPTS;

/**
 * How an append names tool responses: `as-sent` keeps every response's `name` as sent (native
 * events); `from-calls` names each response sent with `name: ''` after the call it answers, in the
 * state each attempt is decided on ({@link nameResponsesFromCalls}; OpenAI tool messages carry no
 * tool name, only `tool_call_id`).
 */
export type ResponseNaming = 'as-sent' | 'from-calls';

/** Append `events` to `sessionId` of `tenantId`. `expectedRevision` `'any'` (default) means: at the revision the checks ran against. */
export class AppendSessionEventsCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly events: EventToAppend[],
    readonly expectedRevision: ExpectedRevision = 'any',
    readonly userId?: string,
    readonly responseNames: ResponseNaming = 'as-sent',
  ) {}
}

/** The answer to an append: the stream revision of the last event written and its global position (decimal strings). */
export interface AppendSessionEventsResult {
  revision: string;
  position: string;
}

/**
 * Published after a successful append to a session that had an auto-compaction policy when the
 * append was checked (for auto-compaction, `AutoCompactionScheduler`); an append to a session
 * without one publishes nothing. `hasPolicy` is then true (kept for handlers of events made elsewhere).
 */
export class SessionEventsAppended {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly revision: bigint,
    readonly hasPolicy: boolean = true,
  ) {}
}

/** Handles {@link AppendSessionEventsCommand}: load, decide, append at the loaded revision, retry on conflict. */
@CommandHandler(AppendSessionEventsCommand)
export class AppendSessionEventsHandler implements ICommandHandler<AppendSessionEventsCommand, AppendSessionEventsResult> {
  constructor(
    @Inject(COMMAND_EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    private readonly eventBus: EventBus,
    @Optional() @Inject(APPENDED_EVENTS_OBSERVER) private readonly observer: AppendedEventsObserver | null = null,
    /** Finishes an erasure interrupted before its record ahead of the new life's first event (newcomer ncrace71 F1); without it, nothing does. */
    @Optional() @Inject(InterruptedErasureSweep) private readonly interruptedErasures: InterruptedErasureSweep | null = null,
    /** The erasures running in this process: an append of a session being erased waits for it (see {@link ErasuresInProgress}); without it, it races the erasure. */
    @Optional() @Inject(ErasuresInProgress) private readonly erasures: ErasuresInProgress | null = null,
    /** Read only for a refused `expectedRevision` of an erased session, to say when it was erased ({@link revisionConflict}); without it, the plain conflict. */
    @Optional() @Inject(ReadModelStore) private readonly readModels: ReadModelStore | null = null,
    /**
     * This process's writes to one session, appends and policy PUTs, run one after another (see
     * {@link PerSessionQueue}; the module's one instance, shared with `SetCompactionPolicyHandler`);
     * other processes' meet the revision check. Without it, this handler's own queue.
     */
    @Optional() @Inject(PerSessionQueue) private readonly queue: PerSessionQueue = new PerSessionQueue(),
  ) {}

  /**
   * @throws InvalidRequestError (400 `invalid_request`) from {@link checkAppendShape}, before anything is read.
   * @throws InvalidRequestError, UserIdConflictError, UnknownToolCallError, ToolCallConflictError from {@link decideAppend} (for a
   *   request counted off-thread, from {@link checkAppend} before it is counted: same errors, nothing counted).
   * @throws RevisionConflictError when the client's `expectedRevision` does not match, or when the
   *   stream moved on {@link MAX_APPEND_ATTEMPTS} times in a row while this append was being decided.
   * @throws StoreAnswerContradictionError when the store refused the revision its own reads showed, several times in a row ({@link StoreAnswerCheck}).
   * @throws DuplicateEventIdConflictError when a client id was used before with other content.
   * @throws CountingTimeoutError when counting a large request misses its deadline (nothing written); CountingTooCostlyError when it missed it alone (see TokenCountingPool).
   * @throws RequestExpiredError (503 `request_expired`) when its write could not start within its write deadline, or its client is gone; SessionErasedMeanwhileError (409 `session_erased`) when the session was erased after it arrived ({@link checkWriteAdmission}).
   */
  async execute(command: AppendSessionEventsCommand): Promise<AppendSessionEventsResult> {
    // The request's own shape first: a malformed request answers 400 before its revision is checked (docs/http-api.md, Optimistic concurrency).
    checkAppendShape(command.events);
    const key = sessionKey(command.tenantId, command.sessionId);
    // The session's life as the request arrives, read before it waits for anything (this queue, counting): it is written in that life or not at all.
    const arrivedIn = lifeAtArrival(command, this.store, command.tenantId, command.sessionId);
    // Awaited by the queued task; one that never runs (an earlier failure does not stop it, but be safe) leaves no unhandled rejection.
    arrivedIn.catch(() => undefined);
    return this.queue.run(key, async () => this.loadDecideAppend(command, key, await arrivedIn));
  }

  private async loadDecideAppend(command: AppendSessionEventsCommand, key: string, arrivedIn: bigint): Promise<AppendSessionEventsResult> {
    let clientExpected = command.expectedRevision === 'any' ? null : command.expectedRevision;
    // Counted once per naming of the responses (once, unless a retry names them otherwise), off the request thread for a large request (issue 17).
    const counted = new Map<string, readonly EventCosts[]>();
    // The first attempt may decide on the cached state without asking the store (see SessionStateCache.peek): only a write at its revision is kept from it.
    let unverified = clientExpected === null;
    // A refusal is blamed on other writers only when the reloaded state moved (see StoreAnswerCheck).
    const answers = new StoreAnswerCheck();
    for (let attempt = 1; ; attempt++) {
      // An erasure of the session running here is waited for: this append then meets its life-at-arrival check, not the erasure's deletion.
      const erasing = this.erasures?.settled(key);
      if (erasing) await erasing;
      const cached = unverified ? this.sessions.peek(key) : null;
      unverified = false;
      const state = cached ?? (await this.sessions.load(key));
      if (!cached) answers.loaded(state?.revision ?? null);
      tellDecidingOn(command, state);
      // A session without a stream may have been erased: its ids are derived in the stream's next life (session-ids).
      const incarnation = state ? state.incarnation : await this.store.streamIncarnation(sessionStream(key));
      // The first event of a new life: the life before it leaves the read models first, also when its erasure stopped before its record.
      if (!state && incarnation > 0n) await this.interruptedErasures?.finishBeforeNewLife(command.tenantId, command.sessionId, incarnation);
      const hasPolicy = Boolean(state?.policy?.strategy);
      // A client's own expected revision is checked first, on the store's state: a stale one is
      // refused before any rule on that state (the rules judge the state the client saw), a resend
      // answers its original result whatever the state holds now.
      let decidedOn = state;
      if (clientExpected !== null) {
        const check = await this.checkClientExpected(command, key, clientExpected, state);
        if (check.kind === 'stale')
          throw revisionConflict(
            this.readModels,
            command.tenantId,
            command.sessionId,
            String(command.expectedRevision),
            String(state?.revision ?? 'no_stream'),
          );
        if (check.kind === 'holds') clientExpected = check.expected;
        else {
          clientExpected = check.expected;
          decidedOn = check.state;
        }
      }
      const events = eventsNamedIn(command, decidedOn);
      const naming = namingKey(events);
      let costs = counted.get(naming);
      if (!costs) {
        const sent = events.map((e) => e.event);
        // A small request is counted inline, at once; a large one only once the rules on this state accept it.
        costs =
          sharedTokenCountingPool().inlineEventCosts(sent) ??
          (await this.checkedAndCounted(command, sent, events, decidedOn, key, incarnation, cached !== null));
        // Refused on the cached state: a refusal must hold against the store's current state, so decided again on it.
        if (!costs) continue;
        counted.set(naming, costs);
      }
      let decision: AppendDecision | null;
      try {
        decision = await this.decide(command, events, decidedOn, costs, key, incarnation);
      } catch (err) {
        // A rejection must hold against the store's current state, not a cached one.
        if (cached) continue;
        throw err;
      }
      if (cached && decision?.kind !== 'append') continue;
      if (decision === null) {
        // The cached state moved on while this attempt awaited (another load folded new events into it): name and decide again.
        if (attempt < MAX_APPEND_ATTEMPTS) continue;
        throw RevisionConflictError.exhausted(MAX_APPEND_ATTEMPTS, String(state?.revision ?? 'no_stream'));
      }
      // A resend is answered by the store (original result, or duplicate id) by its ids; anything new is written at the
      // revision it was decided on. Every write is in the life of the state it was decided on (`incarnation`): when another
      // replica erased the session since the load (and maybe wrote it again), the store refuses it (WrongIncarnationError)
      // and it is decided again on the stream's current life, with that life's ids.
      const expected: ExpectedRevision = clientExpected ?? (decision.kind === 'retry' ? 'any' : (state?.revision ?? 'no_stream'));
      // A cached state of an earlier life than the store's when the request arrived (erased elsewhere since it was cached): decided again on the store's.
      if (cached && incarnation < arrivedIn) continue;
      // The one rule of when a write may still start (client there, within its deadline, in the life it arrived in), right before it.
      checkWriteAdmission(command, command.sessionId, { atArrival: arrivedIn, now: incarnation }, performance.now());
      try {
        const result = await appendInRuns(this.store, sessionStream(key), decision, { expectedRevision: expected, incarnation });
        // The next append to this session then needs no read of the log (the cache folds it only where it follows the state).
        this.sessions.appended(key, state?.revision ?? null, decision.events, result, new Date());
        // An `append` decision is written whole or refused; a `retry` is answered from the log, writing nothing.
        if (decision.kind === 'append') this.observer?.appended(command.events.map((e) => e.event.type));
        return this.appended(command, result, hasPolicy);
      } catch (err) {
        // The stream moved on since the state was loaded, or is in another life: reload and check again (with a client's
        // revision: stale, still holding across compactions, or a resend written meanwhile by another replica).
        if (err instanceof WrongExpectedRevisionError && attempt < MAX_APPEND_ATTEMPTS) {
          answers.refused(expected, err);
          await pauseAfterConflict(attempt);
          continue;
        }
        if (err instanceof DuplicateEventIdError) {
          const resend = (await this.resendOnStoredState(command, key, costs)) ?? { events: decision.events, incarnation };
          checkWriteAdmission(command, command.sessionId, { atArrival: arrivedIn, now: resend.incarnation }, performance.now());
          const answer = await this.resent(key, resend, command, hasPolicy);
          if (!(answer instanceof WrongIncarnationError)) return answer;
          // Erased since the stored state was read: decided again on the current life.
          if (attempt < MAX_APPEND_ATTEMPTS) continue;
          throw RevisionConflictError.exhausted(MAX_APPEND_ATTEMPTS, String(answer.actual));
        }
        if (err instanceof WrongExpectedRevisionError && clientExpected === null)
          throw RevisionConflictError.exhausted(MAX_APPEND_ATTEMPTS, String(err.actual));
        throw await this.translated(err, command, decision.events);
      }
    }
  }

  /**
   * The costs of a large request's events (`sent`: `events`, the command's named in `state`, as
   * counted), counted off the request thread (seconds for a few MB, a place in the counting queue)
   * only once the rules on `state` accept them ({@link decide} without costs: the same rules and
   * log lookups as the decision that follows), so a refused request costs no counting. Undefined
   * when those rules refused it on a cached state (`onCached`): the caller decides again on the
   * store's.
   * @throws what {@link decide} throws (a refusal on the store's state), and CountingTimeoutError / CountingTooCostlyError from the pool.
   */
  private async checkedAndCounted(
    command: AppendSessionEventsCommand,
    sent: readonly SessionEvent[],
    events: EventToAppend[],
    state: SessionWindowState | null,
    key: string,
    incarnation: bigint,
    onCached: boolean,
  ): Promise<readonly EventCosts[] | undefined> {
    try {
      await this.decide(command, events, state, null, key, incarnation);
    } catch (err) {
      if (onCached) return undefined;
      throw err;
    }
    return sharedTokenCountingPool().eventCosts(sent);
  }

  /**
   * {@link decideAppend} on `events` (the command's, named in `state`); when it finds no call for a response, once more with the response ids the
   * log holds calls for up to the state's revision (an answer to an archived, answered call is a
   * second answer, not an unknown call). That lookup reads the log, on this error path only.
   * Null when `state` (shared, kept current by other loads) names the responses otherwise by the
   * time it is decided on than when `events` were named: the caller decides again.
   * `costs` null: the rules only ({@link checkAppend}, the same lookups on the same state), before a
   * large request is counted: it throws what the decision with costs would throw, and answers
   * a verdict without events (a retry is not compared with the stored events).
   */
  private async decide(
    command: AppendSessionEventsCommand,
    events: EventToAppend[],
    state: SessionWindowState | null,
    costs: null,
    key: string,
    incarnation: bigint,
  ): Promise<AppendVerdict | null>;
  private async decide(
    command: AppendSessionEventsCommand,
    events: EventToAppend[],
    state: SessionWindowState | null,
    costs: readonly EventCosts[],
    key: string,
    incarnation: bigint,
  ): Promise<AppendDecision | null>;
  private async decide(
    command: AppendSessionEventsCommand,
    events: EventToAppend[],
    state: SessionWindowState | null,
    costs: readonly EventCosts[] | null,
    key: string,
    incarnation: bigint,
  ): Promise<AppendDecision | AppendVerdict | null> {
    let decision: AppendDecision | AppendVerdict | null;
    try {
      decision = await this.decideWithCallIds(command, events, state, costs, incarnation);
    } catch (err) {
      // Refused by the tool-call rules: a resend of archived events when the log holds every id the state does not know, a duplicate id when some.
      const archived = err instanceof ToolCallConflictError || err instanceof UnknownToolCallError ? await this.withArchivedIds(events, state, key) : null;
      if (!archived) throw err;
      state = archived;
      decision = await this.decideWithCallIds(command, events, state, costs, incarnation);
    }
    // A verdict (costs null) has no events to compare with the stored ones.
    if (decision === null || decision.kind !== 'retry' || !state || !('events' in decision)) return decision;
    // A resend: compared with the stored events as values (userId, costs, key order and the names of responses sent unnamed aside), see alignToStored.
    const revisions = events.map((e) => state.revisionsById.get(e.event.id)).filter((r): r is bigint => r !== undefined);
    const stored = await storedConversationData(this.store, sessionStream(key), revisions);
    const sentUnnamed = command.responseNames === 'from-calls' ? command.events.map((e) => e.event) : undefined;
    // With the arrival archives its original append wrote after them, a retry answers what the original did.
    const runLengths = stored.runLengths.length > 1 ? { runLengths: stored.runLengths } : {};
    return { kind: 'retry', events: [...alignToStored(decision.events, stored.conversation, sentUnnamed), ...stored.archivedOnArrival], ...runLengths };
  }

  /**
   * The store holds some of the command's ids, though the state it was decided on did not know them
   * (a cached state, one loaded before a concurrent write of them, or one loaded from a snapshot
   * after a compaction archived them): the command decided again on the store's current state, as
   * on a fold of the whole log ({@link withArchivedIds}). Its events when that finds a retry
   * (aligned with the stored ones: `userId` aside, names as stored) with the incarnation of that
   * state (the life they are to be written in), else null (the store's answer to the events as
   * decided stands). Reads the log, on this error path only.
   */
  private async resendOnStoredState(command: AppendSessionEventsCommand, key: string, costs: readonly EventCosts[]): Promise<DecidedResend | null> {
    const current = await this.sessions.load(key);
    const state = (await this.withArchivedIds(command.events, current, key)) ?? current;
    if (!state) return null;
    const decision = await this.decide(command, eventsNamedIn(command, state), state, costs, key, state.incarnation).catch(() => null);
    return decision?.kind === 'retry' ? { events: decision.events, runLengths: decision.runLengths, incarnation: state.incarnation } : null;
  }

  /**
   * A copy of `state` that also knows the revisions of the events of `events` it does not know
   * and the log holds up to the state's revision: events a compaction archived before the snapshot
   * `state` was loaded from (its `revisionsById` covers only what it folded; a restart or an evicted
   * cache loads from the snapshot). On that copy {@link decideAppend} decides as on a fold of the
   * whole log: a resend when the log holds every id, an append the store refuses as a duplicate id
   * when it holds some (not a tool-call refusal of a stored answer). Null when the state knows
   * them all, or the log holds none of them (then the decision on `state` stands). Reads the log;
   * called on error paths only (a tool-call refusal, or the store's duplicate-id answer).
   */
  private async withArchivedIds(events: EventToAppend[], state: SessionWindowState | null, key: string): Promise<SessionWindowState | null> {
    if (!state || state.revision === null) return null;
    const unknown = new Set(events.map((e) => e.event.id).filter((id) => !state.revisionsById.has(id)));
    if (unknown.size === 0) return null;
    const inLog = await clientIdsInLog(this.store, sessionStream(key), unknown, state.revision);
    if (inLog.size === 0) return null;
    return { ...state, revisionsById: new Map([...state.revisionsById, ...inLog]) };
  }

  /**
   * {@link decideAppend} with `costs` (or, `costs` null, {@link checkAppend}: the rules alone) on the
   * command's `events` and `state`; on UnknownToolCallError, once more with the call ids the log
   * holds for its responses up to the state's revision (read on this error path only). Null when
   * the state names the responses otherwise than `events` by the time it is decided on.
   */
  private async decideWithCallIds(
    command: AppendSessionEventsCommand,
    events: EventToAppend[],
    state: SessionWindowState | null,
    costs: readonly EventCosts[] | null,
    incarnation: bigint,
  ): Promise<AppendDecision | AppendVerdict | null> {
    const append: AppendEvents = {
      type: 'AppendEvents',
      tenantId: command.tenantId,
      sessionId: command.sessionId,
      incarnation,
      events,
      userId: command.userId,
    };
    // Checked right before each decision (no await in between): the names must be those of the state decided on.
    const namedAsDecided = () => command.responseNames === 'as-sent' || namingKey(eventsNamedIn(command, state)) === namingKey(events);
    try {
      if (!namedAsDecided()) return null;
      return costs === null ? checkAppend(append, state) : decideAppend(append, state, costs);
    } catch (err) {
      if (!(err instanceof UnknownToolCallError) || !state || state.revision === null) throw err;
      const stream = sessionStream(sessionKey(command.tenantId, command.sessionId));
      const inLog = await callIdsInLog(this.store, stream, answeredCallIds(events.map((e) => e.event)), state.revision);
      if (inLog.size === 0) throw err;
      if (!namedAsDecided()) return null;
      return costs === null ? checkAppend(append, state, inLog) : decideAppend(append, state, costs, inLog);
    }
  }

  /**
   * The client's own expected revision `expected` (not `any`) checked on `state`, the store's state
   * of the session as just loaded (null: no stream):
   * - `holds`: it matches, or only compactions' decisions came after it
   *   ({@link expectedRevisionOnLog}): the append is written at `expected`;
   * - `resend`: the command's events are in the log where a write at the client's revision put
   *   them: decided on `state`, a copy of the state that knows their revisions (so the decision is
   *   a retry, aligned with the stored events), and written at `expected`, the revision before
   *   them, where the store answers the original result (or `duplicate_event_id` for other content);
   * - `stale`: another writer came first (answered 409 `wrong_expected_revision`, before any rule
   *   on the state).
   * Reads the log only when the state is past the client's revision: at most
   * `expectedRevisionReadCount` events (for `no_stream`: its first events, as many and {@link MAX_DECISIONS_BETWEEN_RESENT} more).
   */
  private async checkClientExpected(
    command: AppendSessionEventsCommand,
    key: string,
    expected: Exclude<ExpectedRevision, 'any'>,
    state: SessionWindowState | null,
  ): Promise<
    | { kind: 'holds'; expected: Exclude<ExpectedRevision, 'any'> }
    | { kind: 'resend'; expected: Exclude<ExpectedRevision, 'any'>; state: SessionWindowState }
    | { kind: 'stale' }
  > {
    const current = state?.revision ?? null;
    if (expected === 'stream_exists') return current === null ? { kind: 'stale' } : { kind: 'holds', expected };
    if (current === null || !state) return expected === 'no_stream' ? { kind: 'holds', expected } : { kind: 'stale' };
    if (current === expected) return { kind: 'holds', expected };
    const clientIds = command.events.map((e) => e.event.id);
    const stream = sessionStream(key);
    if (expected === 'no_stream') {
      // its events, and the decisions recorded between the requests a resend spans
      const first = await this.store.readStream(stream, { fromRevision: 'start', maxCount: clientIds.length + MAX_DECISIONS_BETWEEN_RESENT });
      const revisions = resentAsFirst(first, clientIds);
      return revisions ? { kind: 'resend', expected, state: knowing(state, revisions) } : { kind: 'stale' };
    }
    if (current < expected) return { kind: 'stale' };
    const stored = await this.store.readStream(stream, { fromRevision: expected, maxCount: expectedRevisionReadCount(expected, current, clientIds.length) });
    const found = expectedRevisionOnLog(expected, current, stored, clientIds);
    if (found.kind === 'holds') return { kind: 'holds', expected: found.revision };
    if (found.kind === 'resend') return { kind: 'resend', expected: found.after, state: knowing(state, found.revisions) };
    return found;
  }

  /**
   * Some ids exist already: with `any`, in the life `resend.incarnation`, the store writes nothing and
   * answers the original result when every id is in place with identical content. The store's
   * WrongIncarnationError, returned, when it refused it for its life (erased since it was decided).
   */
  private async resent(
    key: string,
    resend: DecidedResend,
    command: AppendSessionEventsCommand,
    hasPolicy: boolean,
  ): Promise<AppendSessionEventsResult | WrongIncarnationError> {
    try {
      const result = await appendInRuns(this.store, sessionStream(key), resend, { expectedRevision: 'any', incarnation: resend.incarnation });
      return this.appended(command, result, hasPolicy);
    } catch (err) {
      if (err instanceof WrongIncarnationError) return err;
      throw await this.translated(err, command, resend.events);
    }
  }

  /**
   * The store's error in the client's terms. `events`: what was appended, the command's events
   * first, in order (as decided). A duplicate id is looked up in the session's log (backwards from
   * its end; on this error path only) to name the first field whose content differs
   * ({@link firstDifference}); when it is not found, or none differs (the event is stored out of
   * its place), the error names no field.
   */
  private async translated(err: unknown, command: AppendSessionEventsCommand, events: readonly EventData[]): Promise<unknown> {
    // The client's own expected revision, also when compactions after it moved the check on.
    if (err instanceof WrongExpectedRevisionError)
      return revisionConflict(this.readModels, command.tenantId, command.sessionId, String(command.expectedRevision), String(err.actual));
    if (err instanceof DuplicateEventIdError) {
      const index = events.findIndex((e) => e.id === err.eventId);
      const clientId = (index >= 0 ? command.events[index]?.event.id : undefined) ?? err.eventId;
      if (index < 0 || index >= command.events.length) return new DuplicateEventIdConflictError(clientId);
      const storeIds = new Set([events[index].id, ...(events[index].formerIds ?? [])]);
      const stored = await findInStream(this.store, err.stream, (e) => storeIds.has(e.id)).catch(() => null);
      // Content: the event, its createdAt and metadata (costs follow from it; userId is not content).
      const content = (data: unknown) => {
        const { costs: _costs, userId: _userId, ...rest } = (data ?? {}) as Record<string, unknown>;
        return rest;
      };
      const differing = stored ? firstDifference(content(stored.data), content(events[index].data)) : undefined;
      const field = differing && { ...differing, path: differing.path.replace(/^event\./, '') };
      return new DuplicateEventIdConflictError(clientId, field && { index, ...field });
    }
    return err;
  }

  private appended(command: AppendSessionEventsCommand, result: AppendResult, hasPolicy: boolean): AppendSessionEventsResult {
    // Only a session with a policy has anything to schedule: publishing on the event bus (rxjs, each handler's filter) cost ~1–2% of an append's event-loop time for nothing.
    if (hasPolicy) this.eventBus.publish(new SessionEventsAppended(command.tenantId, command.sessionId, result.nextExpectedRevision, hasPolicy));
    return { revision: result.nextExpectedRevision.toString(), position: result.position.toString() };
  }
}

/** A resend's events (a `retry` decision) and the incarnation of the state it was decided on: the life it may be written in. */
interface DecidedResend {
  events: EventData[];
  runLengths?: readonly number[];
  incarnation: bigint;
}

/**
 * Appends `decided.events` to `stream` with `options`; a retry whose events lie in several runs of
 * consecutive revisions (`runLengths`: decisions between them) run by run, the first at `options`'
 * expected revision and the others at `any`, answering the last run's result: the store writes
 * nothing for a run whose ids are all stored in place with the same content, and refuses one that
 * is not (DuplicateEventIdError), so a run that was not a retry writes nothing either. With no
 * runs, or runs that do not add up to its conversation events, one append (the store decides).
 * @throws what `EventStore.appendToStream` throws.
 */
async function appendInRuns(
  store: EventStore,
  stream: string,
  decided: Pick<AppendDecision, 'events' | 'runLengths'>,
  options: AppendOptions,
): Promise<AppendResult> {
  const runs = decided.runLengths;
  const inRuns = runs !== undefined && runs.length > 1 ? runs.reduce((a, b) => a + b, 0) : 0;
  // the runs hold the resend's conversation events, the arrival archives after them
  const conversation = decided.events.filter((e) => e.type === CONVERSATION_EVENT).length;
  if (inRuns === 0 || inRuns !== conversation) return store.appendToStream(stream, decided.events, options);
  let from = 0;
  let result: AppendResult | undefined;
  for (const [i, length] of runs!.entries()) {
    // the last run with the arrival archives written after it
    const run = i === runs!.length - 1 ? decided.events.slice(from) : decided.events.slice(from, from + length);
    result = await store.appendToStream(stream, run, i === 0 ? options : { ...options, expectedRevision: 'any' });
    from += length;
  }
  return result!;
}

/** A copy of `state` that also knows `revisions` (client id → stream revision), e.g. of events a compaction archived before the snapshot it was loaded from. */
function knowing(state: SessionWindowState, revisions: ReadonlyMap<string, bigint>): SessionWindowState {
  return { ...state, revisionsById: new Map([...state.revisionsById, ...revisions]) };
}

/** The command's events, with responses named in `state` when the command asks for it ({@link ResponseNaming}). */
function eventsNamedIn(command: AppendSessionEventsCommand, state: SessionWindowState | null): EventToAppend[] {
  if (command.responseNames === 'as-sent') return command.events;
  const named = nameResponsesFromCalls(
    command.events.map((e) => e.event),
    state,
  );
  return command.events.map((e, i) => (named[i] === e.event ? e : { ...e, event: named[i] }));
}

/** The tool names of `events`' responses (what their costs depend on besides the command): equal keys, same costs. */
function namingKey(events: readonly EventToAppend[]): string {
  return JSON.stringify(events.map((e) => (e.event.type === 'tool' ? e.event.responses.map((r) => r.name) : 0)));
}
