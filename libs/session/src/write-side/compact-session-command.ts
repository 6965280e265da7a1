/**
 * The compaction command of the write side and the event published for every answer to it.
 */
import type { CompactionFailureKind, CompactionResult, NoopReason, Strategy, Trigger } from '@lib/compaction';
import type { EstimatorName } from '../events/session-stream-events';
import type { SummarizerIdentityInfo, SummarizerUsage } from '../summarizers/summarizer';
import type { CompactionRequest } from '../decider/compaction-by-policy';
import type { RequestedBy } from '../events/requested-by';

/** What the automatic-compaction scheduler did about a pass's claim (see {@link CompactSessionCommand.schedulerClaim}). */
export type SchedulerClaim = 'held' | 'waived' | 'failed';

/**
 * Compact `sessionId` of `tenantId` (see `CompactSession` of the compaction decider for the fields;
 * a {@link CompactionRequest}). `S` is `Strategy` for a command with its own parameters (then it is a
 * `CompactSession`), `null` for one by the session's stored policy: `trigger` and `estimator` are
 * null too, and the handler takes all three from the policy in force on each state it loads to
 * decide the pass on (`compactionOn`).
 */
export class CompactSessionCommand<S extends Strategy | null = Strategy | null> implements CompactionRequest {
  readonly type = 'CompactSession' as const;
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    /** The strategy; null: the session's stored policy (its strategy, trigger and estimator). */
    readonly strategy: S,
    readonly trigger: S extends Strategy ? Trigger | null : null,
    readonly estimator: S extends Strategy ? EstimatorName : null,
    readonly dryRun: boolean,
    readonly origin: 'auto' | 'command' = 'command',
    /** Transport command id (e.g. a NATS message id) when it may be delivered twice: the compaction id derives from it. */
    readonly commandId?: string,
    /** The transport delivered this command before (with `commandId`): its decision, when in the log, is the answer. */
    readonly redelivered = false,
    /** Who ordered it (origin `command`), recorded in its decision. */
    readonly requestedBy?: RequestedBy,
    /**
     * Origin `auto`: what the scheduler did about the session's claim before it sent the command:
     * `held` (it holds the claim for the whole pass), `waived` (it runs unclaimed after the longest
     * wait, its warn line logged; or the store has no claims), `failed` (its attempt failed: the
     * store could not be asked). Absent: the scheduler took no claim (the trigger did not fire on
     * the state it read). Absent or `failed`, the pass claims the session itself when its plan calls
     * the summarizer (the state it plans on may be newer: another replica appended meanwhile; the
     * claims connection may be back).
     */
    readonly schedulerClaim?: SchedulerClaim,
  ) {}
}

/**
 * Published for every answered compaction (dry runs included), for the metrics: `reason` is the
 * noop reason; `replayed` marks an answer without a pass of its own (a decision recorded earlier
 * for a redelivered or concurrent duplicate command, or a pass shared with an identical command
 * in flight), so the metrics do not count it again.
 */
export class CompactionAnswered {
  constructor(
    readonly origin: 'auto' | 'command',
    readonly outcome: CompactionResult['outcome'],
    readonly reason: NoopReason['reason'] | undefined,
    readonly dryRun: boolean,
    readonly replayed = false,
    /** Present when this answer is a pass of its own that failed (outcome `failed`, not replayed): what the operator log says of it. */
    readonly failedPass?: FailedPass,
  ) {}
}

/**
 * A compaction pass that failed, for the service log and `/health`: `reason` is the summarizer's
 * (built from the fault's kind and HTTP status, e.g. `rate limited: HTTP 429 after 2 retries`;
 * never message text nor a key).
 */
export interface FailedPass {
  tenantId: string;
  sessionId: string;
  compactionId: string;
  /** Where it failed: `summarize` (the model call, a blank or unusable reply). */
  stage: 'summarize';
  reason: string;
  /** The same failure as one of the closed set `COMPACTION_FAILURE_KINDS` (a log field, a metric label). */
  failureKind: CompactionFailureKind;
}

/**
 * Published (in process, for the metrics; not a log event) once for every compaction pass that
 * called the summarizer, however it ended: `outcome` is its answer's (`error` when the command
 * was answered with an error, e.g. the session erased meanwhile, or the store failing the append),
 * `used` the usage of the reply its recorded decision used, `discarded` that of every call whose
 * reply went into no decision of its own (see `discardedSummarizerCalls` of the answer). A
 * request that shared an identical pass in flight publishes none: the pass that ran did.
 */
export class SummarizerCallsSpent {
  constructor(
    readonly origin: 'auto' | 'command',
    readonly outcome: CompactionResult['outcome'] | 'error',
    readonly summarizer: SummarizerIdentityInfo,
    readonly used: SummarizerUsage | undefined,
    readonly discarded: SummarizerUsage | undefined,
  ) {}
}
