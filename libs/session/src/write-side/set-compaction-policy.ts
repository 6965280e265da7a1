/**
 * Command and handler: set (or clear) a session's auto-compaction policy (DESIGN §4: a policy
 * event records the trigger and strategy). Setting a policy on a session with no events creates
 * the session.
 *
 * Idempotent: a PUT of the policy the session already has appends nothing and answers the policy
 * event that set it (so a retried PUT answers the original). The policy event is appended at the
 * revision it was checked against, with an id derived from (session, that revision, the policy),
 * so two identical PUTs racing on one revision record one event.
 */
import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Strategy, Trigger } from '@lib/compaction';
import { DuplicateEventIdError, WrongExpectedRevisionError, type EventStore } from '@lib/event-store';
import { POLICY_SET, sessionKey, sessionStream, type EstimatorName, type PolicySetData, type SessionEventMetadata } from '../events/session-stream-events';
import { policyEventId } from '../domain/session-ids';
import type { SessionWindowState } from '../domain/session-window';
import { RevisionConflictError } from '../errors';
import { EVENT_STORE, SUMMARIZER } from '../tokens';
import type { Summarizer } from '../summarizers/summarizer';
import { checkStrategyFitsSummarizer } from './summarizer-room';
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

/** The policy as stored, plus the stream revision and global position of the policy event (decimal strings). */
export interface PolicyAnswer extends PolicySetData {
  sessionId: string;
  revision: string;
  /** When the policy event was written by this request: its global position, to pass as `minPosition` to read the session once it is projected. */
  position?: string;
}

/** The parts of a policy that make it the same policy (`setAt` aside), as a canonical JSON string. */
export function policyKey(policy: Pick<PolicySetData, 'strategy' | 'trigger' | 'estimator'>): string {
  return JSON.stringify([policy.strategy, policy.trigger, policy.estimator]);
}

/** True when `state` already holds exactly this policy and knows the revision of the event that set it. */
function alreadySet(state: SessionWindowState | null, key: string): state is SessionWindowState & { policy: PolicySetData; policyRevision: bigint } {
  return state !== null && state.policy !== null && state.policyRevision !== null && policyKey(state.policy) === key;
}

/** Handles {@link SetCompactionPolicyCommand}: appends one policy event, unless the session already has this policy. */
@CommandHandler(SetCompactionPolicyCommand)
export class SetCompactionPolicyHandler implements ICommandHandler<SetCompactionPolicyCommand, PolicyAnswer> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    @Inject(SUMMARIZER) private readonly summarizer: Summarizer,
  ) {}

  /**
   * @throws InvalidRequestError (400 `invalid_parameter`) when the strategy's prompts leave too little of the summarizer's input bound for events.
   * @throws RevisionConflictError (409) when the stream moved on {@link MAX_POLICY_ATTEMPTS} times in a row.
   */
  async execute(command: SetCompactionPolicyCommand): Promise<PolicyAnswer> {
    if (command.strategy) checkStrategyFitsSummarizer(command.strategy, this.summarizer);
    const key = sessionKey(command.tenantId, command.sessionId);
    const wanted = policyKey(command);
    const metadata: SessionEventMetadata = { tenantId: command.tenantId, sessionId: command.sessionId };
    for (let attempt = 1; ; attempt++) {
      const state = await this.sessions.load(key);
      if (alreadySet(state, wanted)) return { sessionId: command.sessionId, ...state.policy, revision: state.policyRevision.toString() };
      const data: PolicySetData = { strategy: command.strategy, trigger: command.trigger, estimator: command.estimator, setAt: new Date().toISOString() };
      const base = state?.revision ?? null;
      try {
        const result = await this.store.appendToStream(sessionStream(key), [{ id: policyEventId(key, base, wanted), type: POLICY_SET, data, metadata }], {
          expectedRevision: base ?? 'no_stream',
        });
        return { sessionId: command.sessionId, ...data, revision: result.nextExpectedRevision.toString(), position: result.position.toString() };
      } catch (err) {
        // Another writer moved the stream (or wrote this very policy at this revision first): reload and decide again.
        const retriable = err instanceof WrongExpectedRevisionError || err instanceof DuplicateEventIdError;
        if (retriable && attempt < MAX_POLICY_ATTEMPTS) continue;
        if (err instanceof WrongExpectedRevisionError) throw new RevisionConflictError(String(err.expected), String(err.actual));
        throw err;
      }
    }
  }
}
