/**
 * Command and handler: set (or clear) a session's auto-compaction policy (DESIGN §4: a policy
 * event records the trigger and strategy). Setting a policy on a session with no events creates
 * the session.
 */
import { Inject } from '@nestjs/common';
import { CommandHandler, type ICommandHandler } from '@nestjs/cqrs';
import type { Strategy, Trigger } from '@lib/compaction';
import type { EventStore } from '@lib/event-store';
import { POLICY_SET, sessionKey, sessionStream, type EstimatorName, type PolicySetData, type SessionEventMetadata } from '../events/session-stream-events';
import { policyEventId } from '../domain/session-ids';
import { EVENT_STORE, SUMMARIZER } from '../tokens';
import type { Summarizer } from '../summarizers/summarizer';
import { checkStrategyFitsSummarizer } from './summarizer-room';

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
  /** Pass it as `minPosition` to read the session once the policy event is projected. */
  position: string;
}

/** Handles {@link SetCompactionPolicyCommand}: appends one policy event. */
@CommandHandler(SetCompactionPolicyCommand)
export class SetCompactionPolicyHandler implements ICommandHandler<SetCompactionPolicyCommand, PolicyAnswer> {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(SUMMARIZER) private readonly summarizer: Summarizer,
  ) {}

  /** @throws InvalidRequestError (400 `invalid_parameter`) when the strategy's prompts leave too little of the summarizer's input bound for events. */
  async execute(command: SetCompactionPolicyCommand): Promise<PolicyAnswer> {
    if (command.strategy) checkStrategyFitsSummarizer(command.strategy, this.summarizer);
    const data: PolicySetData = { strategy: command.strategy, trigger: command.trigger, estimator: command.estimator, setAt: new Date().toISOString() };
    const metadata: SessionEventMetadata = { tenantId: command.tenantId, sessionId: command.sessionId };
    const result = await this.store.appendToStream(sessionStream(sessionKey(command.tenantId, command.sessionId)), [
      { id: policyEventId(), type: POLICY_SET, data, metadata },
    ]);
    return { sessionId: command.sessionId, ...data, revision: result.nextExpectedRevision.toString(), position: result.position.toString() };
  }
}
