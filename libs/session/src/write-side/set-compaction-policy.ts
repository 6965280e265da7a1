/**
 * Command and handler: set (or clear) a session's auto-compaction policy (DESIGN §4: a policy
 * event records the trigger and strategy). Setting a policy on a session with no events creates
 * the session.
 *
 * Load → {@link decideSetPolicy} (idempotent: the policy the session already has appends nothing
 * and answers the event that set it) → the client's `expectedRevision`, when it sent one, checked
 * on the loaded state by the appends' rule (`checkClientExpected`: compactions' decisions after it
 * do not count; a resend of a PUT that was written at it answers the event it wrote; another
 * writer's event after it is 409, before the decision is acted on) → append at the loaded
 * revision → on conflict, reload, check and decide again (the appends' rule, {@link MAX_WRITE_ATTEMPTS}
 * attempts with {@link pauseAfterConflict}; sent without `expectedRevision`, exhausted answers
 * `RevisionConflictError.exhausted`, expected `any`). In one process a session's policy PUTs and
 * appends queue one after another ({@link PerSessionQueue}, shared with the append handler), so
 * only other processes' writers and compactions make a PUT retry; one that starts while this
 * process erases the session waits for the erasure ({@link ErasuresInProgress}), as appends do.
 */
import { checkWriteAdmission } from '../decider/write-admission';
import { lifeAtArrival } from './life-at-arrival';
import { SessionDecisionRecorded } from './session-decision-recorded';
import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, EventBus, type ICommandHandler } from '@nestjs/cqrs';
import type { Strategy, Trigger } from '@lib/compaction';
import { DuplicateEventIdError, WrongExpectedRevisionError, findInStream, type EventStore, type ExpectedRevision } from '@lib/event-store';
import { isCommandPolicyEvent } from '../domain/session-ids';
import { StoreAnswerCheck } from './store-answer-check';
import { POLICY_SET, sessionKey, sessionStream, type EstimatorName, type PolicySetData } from '../events/session-stream-events';
import { policyAnswer, type PolicyAnswer } from '../domain/policy-answer';
import type { RequestedBy } from '../events/requested-by';
import { decideSetPolicy, type PolicyDecision, type SetPolicy } from '../decider/session-decider';
import { expectedRevisionReadCount, policyResentAsFirst, policyRevisionOnLog } from '../decider/client-expected-revision';
import type { SessionWindowState } from '../domain/session-window';
import { ReadModelStore } from '../read-side/read-model-store';
import { revisionConflict, sessionNotFound } from '../read-side/queries/erasure-query';
import { COMMAND_EVENT_STORE, SUMMARIZER } from '../tokens';
import type { Summarizer } from '../summarizers/summarizer';
import { checkStrategyFitsSummarizer } from './summarizer-room';
import { AcknowledgedPositions } from './acknowledged-positions';
import { SessionStateCache } from './session-state-cache';
import { tellDecidingOn } from './decision-watch';
import { InterruptedErasureSweep } from './interrupted-erasures';
import { PerSessionQueue } from './per-session-queue';
import { ErasuresInProgress } from './erasures-in-progress';
import { RevisionConflictError } from '../errors';
import { MAX_WRITE_ATTEMPTS, pauseAfterConflict } from './write-conflict-retry';

/** How many times a policy PUT is decided and tried before it answers 409: {@link MAX_WRITE_ATTEMPTS}, the appends' bound (before 2026-12-07: 8, without pauses). */
export const MAX_POLICY_ATTEMPTS = MAX_WRITE_ATTEMPTS;

/**
 * Set the auto-compaction policy of `sessionId`; `strategy` null clears it. `expectedRevision`:
 * the client's precondition, as on appends (`'any'`, the default: none). `delivery`: the transport
 * command that carries it when that command may be delivered twice (NATS: its `Nats-Msg-Id`, and
 * whether this delivery is a redelivery); absent over HTTP. `requestedBy`: who sent it (API key
 * label, request or command id, transport), recorded in the policy event it writes; absent when
 * unknown (internal callers). It never makes two policies differ: the policy already in force
 * sent again by anyone writes nothing and answers the setter's event.
 */
export class SetCompactionPolicyCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly strategy: Strategy | null,
    readonly trigger: Trigger | null,
    readonly estimator: EstimatorName,
    readonly expectedRevision: ExpectedRevision = 'any',
    readonly delivery?: { commandId: string; redelivered: boolean },
    readonly requestedBy?: RequestedBy,
  ) {}
}

/**
 * Handles {@link SetCompactionPolicyCommand}: appends one policy event, unless the session already
 * has this policy. Answers the {@link PolicyAnswer} of the policy event in force after it (the one
 * shape `GET …/policy` answers too).
 */
@CommandHandler(SetCompactionPolicyCommand)
export class SetCompactionPolicyHandler implements ICommandHandler<SetCompactionPolicyCommand, PolicyAnswer> {
  constructor(
    @Inject(COMMAND_EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    @Inject(SUMMARIZER) private readonly summarizer: Summarizer,
    @Optional() private readonly acknowledged: AcknowledgedPositions = new AcknowledgedPositions(),
    /** Where an erased session's `erasedAt` is read (as `GET /v1/sessions/{id}` reads it); without it, a 404 carries none. */
    @Optional() private readonly readModels?: ReadModelStore,
    /** Told of a policy cleared ({@link SessionDecisionRecorded}); without it, nobody is. */
    @Optional() private readonly eventBus?: EventBus,
    /** Finishes an erasure interrupted before its record ahead of a new life's first event; without it, the sweep does, within a minute. */
    @Optional() @Inject(InterruptedErasureSweep) private readonly interruptedErasures: InterruptedErasureSweep | null = null,
    /**
     * The queue this process's writes to one session wait in, appends and policy PUTs (the module's
     * one instance, shared with `AppendSessionEventsHandler`): a PUT then never races this process's
     * appends. Nothing a queued PUT waits for (the store, the read models, an erasure running here)
     * waits in it. Without it, this handler's own queue (it races the appends, retrying).
     */
    @Optional() @Inject(PerSessionQueue) private readonly queue: PerSessionQueue = new PerSessionQueue(),
    /** The erasures running in this process: a PUT of a session being erased waits for it (see {@link ErasuresInProgress}); without it, it races the erasure. */
    @Optional() @Inject(ErasuresInProgress) private readonly erasures: ErasuresInProgress | null = null,
  ) {}

  /**
   * @throws SessionNotFoundError (404) when a clear (strategy null) names a session that does not
   *   exist (with `erasedAt` when it was erased: {@link sessionNotFound}).
   * @throws InvalidRequestError (400 `invalid_parameter`) when the strategy's prompts leave too little of the summarizer's input bound for events.
   * @throws RevisionConflictError (409 `wrong_expected_revision`) when the client's `expectedRevision`
   *   does not hold (another writer's event came after it), before a clear's 404; or when the stream
   *   moved on {@link MAX_POLICY_ATTEMPTS} times in a row (sent without `expectedRevision`:
   *   `RevisionConflictError.exhausted`, expected `any`; with one: that revision).
   * @throws RequestExpiredError (503 `request_expired`), SessionErasedMeanwhileError (409 `session_erased`): see {@link checkWriteAdmission}.
   */
  async execute(command: SetCompactionPolicyCommand): Promise<PolicyAnswer> {
    if (command.strategy) checkStrategyFitsSummarizer(command.strategy, this.summarizer);
    const key = sessionKey(command.tenantId, command.sessionId);
    const policy: SetPolicy = {
      type: 'SetPolicy',
      tenantId: command.tenantId,
      sessionId: command.sessionId,
      strategy: command.strategy,
      trigger: command.trigger,
      estimator: command.estimator,
      ...(command.delivery ? { commandId: command.delivery.commandId } : {}),
      ...(command.requestedBy ? { requestedBy: command.requestedBy } : {}),
    };
    // The session's life as the request arrives, read before it waits for anything (the queue): the policy is set in that life or not at all.
    const arrivedIn = lifeAtArrival(command, this.store, command.tenantId, command.sessionId);
    // Awaited by the queued task; one that never runs leaves no unhandled rejection.
    arrivedIn.catch(() => undefined);
    return this.queue.run(key, async () => this.loadDecideAppend(command, key, policy, await arrivedIn));
  }

  /** {@link execute}'s work, queued behind this process's earlier writes of the session `key`; `arrivedIn`: the life the command arrived in. */
  private async loadDecideAppend(command: SetCompactionPolicyCommand, key: string, policy: SetPolicy, arrivedIn: bigint): Promise<PolicyAnswer> {
    // A redelivered transport command whose event is in the log is answered with it, before anything is decided or checked.
    if (command.delivery?.redelivered) {
      const applied = await this.appliedCommand(command, command.delivery.commandId, arrivedIn);
      if (applied) return applied;
    }
    const answers = new StoreAnswerCheck();
    for (let attempt = 1; ; attempt++) {
      // An erasure of the session running here is waited for: this PUT then meets its life-at-arrival check, not the erasure's deletion.
      const erasing = this.erasures?.settled(key);
      if (erasing) await erasing;
      const state = await this.sessions.load(key);
      answers.loaded(state?.revision ?? null);
      tellDecidingOn(command, state);
      // A session without a stream may have been erased: its ids are derived in the stream's next life (session-ids).
      if (!state && policy.strategy) {
        policy.incarnation = await this.store.streamIncarnation(sessionStream(key));
        // The first event of a new life, as an append's: the life before it leaves the read models first, also when its erasure stopped before its record.
        if (policy.incarnation > 0n) await this.interruptedErasures?.finishBeforeNewLife(command.tenantId, command.sessionId, policy.incarnation);
      }
      const decision = decideSetPolicy(policy, state, { now: new Date() });
      // The client's own revision first, as on appends: a stale one is refused before the decision is acted on.
      if (command.expectedRevision !== 'any' && !(await this.clientExpectedHolds(key, command.expectedRevision, state, decision)))
        throw revisionConflict(this.readModels, command.tenantId, command.sessionId, String(command.expectedRevision), String(state?.revision ?? 'no_stream'));
      if (decision.kind === 'nothing-to-clear') {
        // No policy was ever set: nothing is written, and a session that does not exist is not created by a clear.
        if (decision.revision === null) {
          await this.acknowledged.acknowledgeHead(this.store);
          throw sessionNotFound(this.readModels, command.tenantId, command.sessionId);
        }
        // No policy to clear: the answer names the session's last event (its revision, and its position for minPosition).
        const position = await this.positionOf(key, decision.revision, state);
        if (position !== undefined) return policyAnswer(command.sessionId, null, decision.revision, position);
        // Erased meanwhile: decided again on the session as it is now.
        if (attempt < MAX_POLICY_ATTEMPTS) continue;
        throw this.exhausted(command, 'no_stream');
      }
      if (decision.kind === 'unchanged') {
        // A retried PUT answers the event that set the policy, its position included.
        const [recorded] = await this.store.readStream(sessionStream(key), { fromRevision: decision.revision, maxCount: 1 });
        // Erased meanwhile (the event is gone): decided again on the session as it is now.
        if (!recorded && attempt < MAX_POLICY_ATTEMPTS) continue;
        return policyAnswer(command.sessionId, { data: decision.policy, revision: decision.revision, position: recorded?.position }, decision.revision);
      }
      // Read once, before the append awaits: `state` is the cache's shared object, which other
      // loads may move on meanwhile; the refusal must be judged against the revision it refused.
      const expected: bigint | 'no_stream' = state?.revision ?? 'no_stream';
      // In the life of the state it was decided on: refused when the session was erased since.
      const incarnation = state ? state.incarnation : (policy.incarnation ?? arrivedIn);
      try {
        // The one rule of when a write may still start (client there, within its deadline, in the life it arrived in), right before it.
        checkWriteAdmission(command, command.sessionId, { atArrival: arrivedIn, now: incarnation }, performance.now());
        const result = await this.store.appendToStream(sessionStream(key), decision.events, { expectedRevision: expected, incarnation });
        this.sessions.appended(key, expected === 'no_stream' ? null : expected, decision.events, result, new Date());
        const recorded = { data: decision.events[0].data as PolicySetData, revision: result.nextExpectedRevision, position: result.position };
        if (!command.strategy) this.eventBus?.publish(new SessionDecisionRecorded(command.tenantId, command.sessionId, 'policy-cleared'));
        return policyAnswer(command.sessionId, recorded, result.nextExpectedRevision);
      } catch (err) {
        // This transport command's event is in the log already (delivered again after other writes): answered with it.
        if (err instanceof DuplicateEventIdError && command.delivery) {
          const applied = await this.appliedCommand(command, command.delivery.commandId, incarnation);
          if (applied) return applied;
        }
        // Another writer moved the stream (or wrote this very policy at this revision first): reload and decide again.
        const retriable = err instanceof WrongExpectedRevisionError || err instanceof DuplicateEventIdError;
        if (err instanceof WrongExpectedRevisionError) answers.refused(expected, err);
        if (retriable && attempt < MAX_POLICY_ATTEMPTS) {
          await pauseAfterConflict(attempt);
          continue;
        }
        if (err instanceof WrongExpectedRevisionError) throw this.exhausted(command, String(err.actual));
        throw err;
      }
    }
  }

  /**
   * The 409 of a PUT that the session kept moving under for {@link MAX_POLICY_ATTEMPTS} attempts
   * (`actual`: the revision last seen, decimal string, or `no_stream`): sent without
   * `expectedRevision`, {@link RevisionConflictError.exhausted} (expected `any`, the client sent no
   * revision; resend unchanged); with one, the conflict of that revision ({@link revisionConflict},
   * `erasedAt` looked up), as before.
   */
  private exhausted(command: SetCompactionPolicyCommand, actual: string): RevisionConflictError {
    if (command.expectedRevision === 'any') return RevisionConflictError.exhausted(MAX_POLICY_ATTEMPTS, actual, 'policy');
    return revisionConflict(this.readModels, command.tenantId, command.sessionId, String(command.expectedRevision), actual);
  }

  /**
   * The answer of the transport command `commandId` when its policy event is in the session's log, in life
   * `incarnation` (bigint: the life the command arrived in, or the one its event was just refused in; its id derives from it, {@link commandPolicyEventIds}): the answer it was given when written (that
   * event's policy, revision and position), whatever came after it; else null. Reads the log backwards from its end
   * (`findInStream`: one read for a command of the last 256 events, the whole stream for a miss); only asked of a
   * redelivery or after the store refused the command's event id.
   */
  private async appliedCommand(command: SetCompactionPolicyCommand, commandId: string, incarnation: bigint): Promise<PolicyAnswer | null> {
    const key = sessionKey(command.tenantId, command.sessionId);
    const stream = sessionStream(key);
    const recorded = await findInStream(this.store, stream, (event) => event.type === POLICY_SET && isCommandPolicyEvent(key, incarnation, commandId, event));
    if (!recorded) return null;
    return policyAnswer(
      command.sessionId,
      { data: recorded.data as PolicySetData, revision: recorded.revision, position: recorded.position },
      recorded.revision,
    );
  }

  /**
   * The global position (bigint) of the session's event at `revision` (its last, in `state`): the
   * state's when it knows it, else read from the log; undefined when the log no longer holds it
   * (erased since the state was loaded).
   */
  private async positionOf(key: string, revision: bigint, state: SessionWindowState | null): Promise<bigint | undefined> {
    if (state?.revision === revision && state.position !== null) return state.position;
    const [event] = await this.store.readStream(sessionStream(key), { fromRevision: revision, maxCount: 1 });
    return event?.position;
  }

  /**
   * Whether the client's `expected` revision (not `any`) lets `decision`, taken on `state` (the
   * store's state as just loaded; null: no stream), go ahead: it matches, or only compactions'
   * decisions came after it (appends' rule, {@link policyRevisionOnLog}), or the PUT is a resend of
   * one written at it (the policy it asks for is in force, set by the event right after it and those
   * decisions: `decision` is `unchanged`, answered as a retry). False: another writer's event came
   * after it (or, for `no_stream` / `stream_exists`, the session does / does not exist). Reads the
   * log only when the state is past an exact revision (at most a few hundred events), or its first
   * event for `no_stream`.
   */
  private async clientExpectedHolds(
    key: string,
    expected: Exclude<ExpectedRevision, 'any'>,
    state: SessionWindowState | null,
    decision: PolicyDecision,
  ): Promise<boolean> {
    const current = state?.revision ?? null;
    if (expected === 'stream_exists') return current !== null;
    if (current === null) return expected === 'no_stream';
    const setting = decision.kind === 'unchanged' ? decision.revision : null;
    if (expected === 'no_stream') {
      const [first] = await this.store.readStream(sessionStream(key), { fromRevision: 'start', maxCount: 1 });
      return policyResentAsFirst(first, setting);
    }
    if (current === expected) return true;
    if (current < expected) return false;
    const stored = await this.store.readStream(sessionStream(key), { fromRevision: expected, maxCount: expectedRevisionReadCount(expected, current, 1) });
    return policyRevisionOnLog(expected, current, stored, setting).kind !== 'stale';
  }
}
