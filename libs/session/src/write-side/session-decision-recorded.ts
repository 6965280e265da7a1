/**
 * What a decision recorded in this process did to a session, for the in-process event bus: a commanded pass
 * `compacted` it (not a dry run nor a replayed answer; an automatic pass tells the scheduler itself), its compaction policy
 * was `policy-cleared`, or the session was `erased`. The auto-compaction scheduler ends the session's
 * backoff on each at once (newcomer ncllm65 F1: it waited for the session's next append, which a
 * session without a policy or an erased one never gets). Decisions recorded through another
 * replica are not published here.
 */
export class SessionDecisionRecorded {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly decision: 'compacted' | 'policy-cleared' | 'erased',
  ) {}
}
