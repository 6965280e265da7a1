/**
 * Command and handler: set (or clear) a session's auto-compaction policy (DESIGN §4: a policy
 * event records the trigger and strategy). Setting a policy on a session with no events creates
 * the session.
 *
 * Load → {@link decideSetPolicy} (idempotent: the policy the session already has appends nothing
 * and answers the event that set it) → append at the loaded revision → on conflict, reload and
 * decide again.
 */
import { Inject, Optional } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Strategy, Trigger } from '@lib/compaction';
import { DuplicateEventIdError, WrongExpectedRevisionError, type EventStore } from '@lib/event-store';
import { StoreAnswerCheck } from './store-answer-check';
import { sessionKey, sessionStream, type EstimatorName, type PolicySetData } from '../events/session-stream-events';
import { policyAnswer, type PolicyAnswer } from '../domain/policy-answer';
import { decideSetPolicy, type SetPolicy } from '../decider/session-decider';
import { RevisionConflictError, SessionNotFoundError } from '../errors';
import { EVENT_STORE, SUMMARIZER } from '../tokens';
import type { Summarizer } from '../summarizers/summarizer';
import { checkStrategyFitsSummarizer } from './summarizer-room';
import { AcknowledgedPositions } from './acknowledged-positions';
import { SessionStateCache } from './session-state-cache';

/** How many times a policy PUT reloads after the stream moved on before it answers 409. */
export const MAX_POLICY_ATTEMPTS = 8;

/** Set the auto-compaction policy of `sessionId`; `strategy` null clears it. */
export class SetCompactionPolicyCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly strategy: Strategy | null,
    readonly trigger: Trigger | null,
    readonly estimator: EstimatorName,
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
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    @Inject(SUMMARIZER) private readonly summarizer: Summarizer,
    @Optional() private readonly acknowledged: AcknowledgedPositions = new AcknowledgedPositions(),
  ) {}

  /**
   * @throws SessionNotFoundError (404) when a clear (strategy null) names a session that does not exist.
   * @throws InvalidRequestError (400 `invalid_parameter`) when the strategy's prompts leave too little of the summarizer's input bound for events.
   * @throws RevisionConflictError (409) when the stream moved on {@link MAX_POLICY_ATTEMPTS} times in a row.
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
    };
    const answers = new StoreAnswerCheck();
    for (let attempt = 1; ; attempt++) {
      const state = await this.sessions.load(key);
      answers.loaded(state?.revision ?? null);
      // A session without a stream may have been erased: its ids are derived in the stream's next life (session-ids).
      if (!state && policy.strategy) policy.incarnation = await this.store.streamIncarnation(sessionStream(key));
      const decision = decideSetPolicy(policy, state, { now: new Date() });
      if (decision.kind === 'nothing-to-clear') {
        // No policy was ever set: nothing is written, and a session that does not exist is not created by a clear.
        if (decision.revision === null) {
          await this.acknowledged.acknowledgeHead(this.store);
          throw new SessionNotFoundError(command.sessionId);
        }
        return policyAnswer(command.sessionId, null, decision.revision);
      }
      if (decision.kind === 'unchanged') {
        // A retried PUT answers the event that set the policy, its position included.
        const [recorded] = await this.store.readStream(sessionStream(key), { fromRevision: decision.revision, maxCount: 1 });
        return policyAnswer(command.sessionId, { data: decision.policy, revision: decision.revision, position: recorded?.position }, decision.revision);
      }
      // Read once, before the append awaits: `state` is the cache's shared object, which other
      // loads may move on meanwhile; the refusal must be judged against the revision it refused.
      const expected: bigint | 'no_stream' = state?.revision ?? 'no_stream';
      try {
        const result = await this.store.appendToStream(sessionStream(key), decision.events, { expectedRevision: expected });
        this.sessions.appended(key, expected === 'no_stream' ? null : expected, decision.events, result, new Date());
        const recorded = { data: decision.events[0].data as PolicySetData, revision: result.nextExpectedRevision, position: result.position };
        return policyAnswer(command.sessionId, recorded, result.nextExpectedRevision);
      } catch (err) {
        // Another writer moved the stream (or wrote this very policy at this revision first): reload and decide again.
        const retriable = err instanceof WrongExpectedRevisionError || err instanceof DuplicateEventIdError;
        if (err instanceof WrongExpectedRevisionError) answers.refused(expected, err);
        if (retriable && attempt < MAX_POLICY_ATTEMPTS) continue;
        if (err instanceof WrongExpectedRevisionError) throw new RevisionConflictError(String(err.expected), String(err.actual));
        throw err;
      }
    }
  }
}
