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
import { EVENT_STORE } from '../tokens';

/** Set the auto-compaction policy of `sessionId`; `strategy` null clears it. */
export class SetCompactionPolicyCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly strategy: Strategy | null,
    readonly trigger: Trigger | null,
    readonly estimator: EstimatorName,
    /** Store id of the policy event (UUID); a transport that may deliver twice derives it from its command id. */
    readonly eventId: string = policyEventId(),
  ) {}
}

/** The policy as stored, plus the stream revision of the policy event (decimal string). */
export interface PolicyAnswer extends PolicySetData {
  sessionId: string;
  revision: string;
}

/** Handles {@link SetCompactionPolicyCommand}: appends one policy event. */
@CommandHandler(SetCompactionPolicyCommand)
export class SetCompactionPolicyHandler implements ICommandHandler<SetCompactionPolicyCommand, PolicyAnswer> {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  async execute(command: SetCompactionPolicyCommand): Promise<PolicyAnswer> {
    const data: PolicySetData = { strategy: command.strategy, trigger: command.trigger, estimator: command.estimator, setAt: new Date().toISOString() };
    const metadata: SessionEventMetadata = { tenantId: command.tenantId, sessionId: command.sessionId };
    const result = await this.store.appendToStream(sessionStream(sessionKey(command.tenantId, command.sessionId)), [
      { id: command.eventId, type: POLICY_SET, data, metadata },
    ]);
    return { sessionId: command.sessionId, ...data, revision: result.nextExpectedRevision.toString() };
  }
}
