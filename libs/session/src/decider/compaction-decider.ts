/**
 * The compaction decider (DESIGN §3, §4), in two pure steps around the summarizer call:
 *
 * 1. {@link planSessionCompaction}`(command, state)` → a final conclusion (a replay of an earlier
 *    decision, `not-triggered`, `noop` with its reason, a dry run) or a {@link PlannedCompaction},
 *    whose `plan.summaryRequest` (when present) is what the summarizer must be asked;
 * 2. {@link decideCompaction}`(command, state, pass, summary, context)` → the decision events to
 *    append at `state.revision`, in one append.
 *
 * When the stream moved on, `rebaseCompaction` (./compaction-rebase.ts) re-checks the pass
 * against the newer state so it is decided again without a second summarizer call. No I/O, no
 * clock: time arrives in the context, ids derive from the session, the base revision and the
 * parameters (or the transport's command id).
 */
import {
  autoPassMayRun,
  completePlan,
  getEstimator,
  planCompaction,
  triggerFigures,
  triggerFiguresFire,
  type CompactionPlan,
  type CompactionResult,
  type NoopReason,
  type Strategy,
  type SummaryReply,
  type Trigger,
  type TriggerFigures,
} from '@lib/compaction';
import type { EventData } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  sessionKey,
  type CompactionCompletedData,
  type CompactionFailedData,
  type EstimatorName,
  type EventsArchivedData,
  type SummarizerIdentity,
  type SummaryInsertedData,
} from '../events/session-stream-events';
import { computeEventCosts } from '../domain/event-costs';
import { commandCompactionIds, compactionIdFor, decisionEventIds, summaryIdOn } from '../domain/session-ids';
import { costedWindow, evolveSessionWindow, type RecordedCompaction, type SessionWindowState } from '../domain/session-window';
import { cloneSessionWindow } from '../domain/clone-session-window';
import { SessionNotFoundError } from '../errors';
import type { SummarizerIdentityInfo, SummarizerOutcome, SummarizerUsage } from '../summarizers/summarizer';
import { decisionSummarizer, usageOf } from './summarizer-spend';
import { buildSnapshot } from '../write-side/session-snapshot';
import { compactionParamsKey } from '../write-side/compaction-params';
import type { CompactionConclusion } from './compaction-answer';
import { policySourceFields } from './compaction-by-policy';
import type { SessionAddress } from './session-decider';
import type { RequestedBy } from '../events/requested-by';

/** Command: compact a session with a validated strategy and optional trigger (DESIGN §3.4, §3.5). */
export interface CompactSession extends SessionAddress {
  type: 'CompactSession';
  strategy: Strategy;
  trigger: Trigger | null;
  /** The estimator whose carried costs the pass reads (tokens, or UTF-16 code units for `chars`). */
  estimator: EstimatorName;
  /** Plan and answer, append nothing. */
  dryRun: boolean;
  /** `auto`: run by a session's policy (recorded, and the wait rule of DESIGN §3.5 reads it). */
  origin: 'auto' | 'command';
  /** With origin `command`: who ordered it, recorded in the decision (not part of its identity: a shared pass records its own). */
  requestedBy?: RequestedBy;
  /** Transport command id (may be delivered twice): the compaction id derives from it instead of the base revision. */
  commandId?: string;
  /**
   * With `commandId`: the transport delivered this command before (a NATS redelivery), so its
   * decision may be in the log already; the handler then looks it up there before planning.
   */
  redelivered?: boolean;
  /**
   * Set by `compactionOn` (./compaction-by-policy) when `strategy`, `trigger` and `estimator` are
   * the session's stored policy as in force on the state the pass was decided on, whose event is at
   * `revision` (null when that state does not know it: a log whose last snapshot predates recorded
   * policy revisions): a command that named no strategy, and every automatic pass (origin `auto`).
   * Recorded in the decision as `policyRevision` (`policySourceFields`), with `from: "policy"` for a
   * command; not part of the pass's identity (the same parameters named in the request, or an
   * automatic pass of that policy, on the same revision, are the same compaction).
   */
  byPolicy?: { revision: bigint | null };
}

/**
 * What makes compaction commands the same compaction (see {@link compactionIdentity}). Ids derive
 * from it, so it must never change for commands that existing logs answered: a resend of an old
 * command has to meet its recorded decision ids.
 */
export interface CompactionIdentity {
  /**
   * The id the pass decides under (its decision event ids derive from it): from (session,
   * transport command id) when the command has one, else from (session, base revision, parameters).
   */
  compactionId: string;
  /** Canonical key of (strategy, trigger, estimator). */
  paramsKey: string;
  /**
   * For a transport command (`commandId`): every id an earlier build gave its compaction in this
   * life (`commandCompactionIds`, `compactionId` first), under which a redelivery finds the decision
   * an earlier delivery recorded; empty otherwise.
   */
  commandCompactionIds: string[];
  /**
   * Equal exactly for commands whose passes on the base revision are identical (same tenant,
   * session, compaction id, parameters, base revision and dry-run flag): one pass may answer them
   * all. Not the origin: a commanded compaction with the policy's parameters sent right after an
   * append (README's recipe for a window within the policy before the next model call) shares the
   * automatic pass that append started, instead of calling the summarizer a second time for the
   * same decision (newcomer ncllm); the decision is recorded with the origin of the pass that ran.
   */
  passKey: string;
}

/**
 * The identity of `command` on a session state at revision `basedOnRevision` of the stream's
 * `incarnation` (the state's, see `session-ids`) (the one rule for compaction ids:
 * {@link planSessionCompaction} decides under it, the handler shares passes and finds recorded
 * decisions with it).
 */
export function compactionIdentity(command: CompactSession, basedOnRevision: bigint, incarnation: bigint): CompactionIdentity {
  const key = sessionKey(command.tenantId, command.sessionId);
  const paramsKey = compactionParamsKey(command.strategy, command.trigger, command.estimator);
  const commandIds = command.commandId !== undefined ? commandCompactionIds(key, incarnation, command.commandId) : null;
  const compactionId = commandIds ? commandIds[0] : compactionIdFor(key, incarnation, basedOnRevision, paramsKey);
  const passKey = JSON.stringify([command.tenantId, command.sessionId, compactionId, paramsKey, basedOnRevision.toString(), command.dryRun]);
  return { compactionId, commandCompactionIds: commandIds ?? [], paramsKey, passKey };
}

/**
 * A pass that will append decisions: its id, what it is based on, and the planner's plan
 * (`outcome: 'compacted'`, or `noop` for an automatic noop to record, DESIGN §3.5).
 */
export interface PlannedCompaction {
  compactionId: string;
  /** Canonical key of (strategy, trigger, estimator): two passes with the same key on an unchanged session are one decision. */
  paramsKey: string;
  /** The revision the pass was planned on (recorded as `basedOnRevision`, also after a rebase). */
  basedOnRevision: bigint;
  /** The plan for the state it was made (or rebased) on; `plan.summaryRequest` is the summarizer's input, when one is needed. */
  plan: CompactionPlan;
}

/** The first step's answer: conclude without appending, or a pass to decide (after the summarizer call it may ask for). */
export type CompactionStep = { kind: 'conclude'; conclusion: CompactionConclusion } | { kind: 'pass'; pass: PlannedCompaction };

/** What deciding needs from outside: the time, when the pass started, and which summarizer answered. */
export interface CompactionContext {
  now: Date;
  /** When the pass started (for `durationMs`). */
  startedAt: Date;
  summarizer: SummarizerIdentityInfo;
  /**
   * Usage of the summarizer calls this pass made earlier whose replies it discarded (planned
   * again after the stream moved on, or after an erasure): recorded with the decision, summed
   * into its `summarizer` figures and as `summarizer.discarded` ({@link decisionSummarizer}).
   */
  discarded?: SummarizerUsage;
  /**
   * An id of this pass (one summarizer call), put in the decision events' metadata. Passes that
   * decide at once on the same revision with the same parameters derive the same event ids, and
   * could make byte-identical events (a failure recorded in the same millisecond): the store would
   * then take the second append for a retry of the first and answer it as written, and that pass
   * would report a decision of its own. With it, the second is refused as a duplicate and answered
   * as a replay of the first.
   */
  passId?: string;
}

/** The decision of one pass: the events to append (in one append, at `state.revision`) and the figures to answer with. */
export interface CompactionDecision {
  compactionId: string;
  events: EventData[];
  result: CompactionResult;
  /** The summarizer's identity and usage (every call made for the pass, discarded ones included), when it was called. */
  summarizer?: SummarizerIdentity;
  /** Trigger figures of the window after the pass (DESIGN §3.5). */
  after: TriggerFigures;
  /** Whether it is appended on top of events appended while the pass ran (see {@link stillFiring}). */
  rebased: boolean;
  /** For a recorded noop (an automatic one of DESIGN §3.5, or one recorded for its discarded summarizer calls): why nothing was archived. */
  noop?: NoopReason;
}

/**
 * With a trigger: whether it still fires on the window figures `after` a pass, and the user
 * events (turns) in that window, for the wait rule of DESIGN §3.5 (an automatic pass that leaves
 * it firing makes the next one wait for growth from these figures). Without a trigger: nothing.
 *
 * `rebased`: the decision was written on top of events appended while the pass ran (its
 * `basedOnRevision` is older than the revision it was appended at). Then the window after it
 * holds events the pass never looked at, which the next pass may archive: a trigger still firing
 * proves nothing about the part no strategy may archive, so `turnsAfter` is left out and the
 * next automatic pass does not wait for growth (it plans on the new window; if that one leaves
 * the trigger firing too, the wait starts from there).
 */
export function stillFiring(trigger: Trigger | null, after: TriggerFigures, rebased = false): { triggerStillFires?: boolean; turnsAfter?: number } {
  if (!trigger) return {};
  const triggerStillFires = triggerFiguresFire(trigger, after);
  return rebased ? { triggerStillFires } : { triggerStillFires, turnsAfter: after.turns };
}

/** The cost of the costliest summary in the active window of `state` under `estimator` (0 when it has none). */
function largestSummaryCost(state: SessionWindowState, estimator: EstimatorName): number {
  let largest = 0;
  for (const { event, tokens } of costedWindow(state, estimator)) if (event.type === 'summary' && tokens > largest) largest = tokens;
  return largest;
}

/**
 * While an automatic pass waits for growth (DESIGN §3.5: the last one left the trigger firing),
 * whether a pass planned now on `state` could end that: it archives something, and the window it
 * leaves, with its new summary costing its whole budget (`maxSummaryTokens`) or as much as the
 * costliest summary in the window when more (what the model really writes), no longer fires the
 * trigger. Then the part no strategy
 * may archive is no longer over it (a new turn made the former newest turn archivable, say), and
 * the wait ends; a window whose floor is still over the trigger (a pinned system message over it)
 * keeps waiting. Pure; plans on a copy (the planner only: no summarizer call). O(window).
 */
export function autoPassCouldMeetTrigger(command: CompactSession, state: SessionWindowState): boolean {
  if (!command.trigger || state.revision === null) return false;
  const step = planSessionCompaction({ ...command, dryRun: false }, cloneSessionWindow(state));
  if (step.kind !== 'pass' || step.pass.plan.outcome !== 'compacted') return false;
  const after = cloneSessionWindow(state);
  const archived: EventsArchivedData = { compactionId: step.pass.compactionId, archivedIds: step.pass.plan.archivedIds };
  evolveSessionWindow(after, { type: EVENTS_ARCHIVED, data: archived, revision: state.revision + 1n });
  const figures = triggerFigures(costedWindow(after, command.estimator));
  // With the new summary at its whole budget, or at the size the summaries in the window have when
  // larger (a model that writes more than it is asked would otherwise seem to meet the trigger on
  // every append, and be called on every append: newcomer ncllm saw 18 calls in 18 appends): a
  // pass whose own summary would leave the trigger firing would call the summarizer for nothing.
  const { summaryRequest } = step.pass.plan;
  const summaryTokens = summaryRequest ? Math.max(summaryRequest.maxSummaryTokens ?? Infinity, largestSummaryCost(state, command.estimator)) : 0;
  return !triggerFiguresFire(command.trigger, { ...figures, tokens: figures.tokens + summaryTokens });
}

/**
 * The wait of DESIGN §3.5, from the log: the window figures (tokens in the estimator's unit, user
 * events) an automatic pass with parameters `paramsKey` (see {@link compactionIdentity}) must
 * grow from before the next one runs, or null when nothing holds it back. They are those the
 * session's last recorded decision left when it was an automatic pass of the same parameters
 * (`compacted`, or a recorded `noop`) that left the trigger firing (`triggerStillFires`, with
 * `turnsAfter`: not a decision rebased onto events it never looked at). A commanded compaction,
 * a failure or a new policy since ends the wait. Every process reads it from the same log, so the
 * wait holds across restarts and replicas. Pure, O(1).
 */
export function autoPassBaseline(state: SessionWindowState, paramsKey: string): TriggerFigures | null {
  const last = state.lastCompaction;
  if (!last || last.outcome === 'failed' || last.paramsKey !== paramsKey || !last.stillFiring) return null;
  return last.stillFiring;
}

/**
 * Whether the window of `state` has grown enough since the last automatic pass that left the
 * trigger of `command` firing ({@link autoPassBaseline}; `autoPassMayRun`: a quarter of the token
 * threshold, or of the turn limit and at least one turn), or no such pass holds it back. O(window).
 */
function grownSinceStuckAutoPass(command: CompactSession, state: SessionWindowState): boolean {
  const paramsKey = compactionParamsKey(command.strategy, command.trigger, command.estimator);
  return autoPassMayRun(command.trigger, autoPassBaseline(state, paramsKey), triggerFigures(costedWindow(state, command.estimator)));
}

/**
 * The progress rule of automatic compaction (DESIGN §3.5), the one every layer calls: whether an
 * automatic pass of `command` (the session's policy) may run on `state` now. It may when no
 * recorded automatic pass left the trigger firing ({@link autoPassBaseline}), when the window has
 * grown by a quarter of the token threshold or of the turn limit since that pass, or when a pass
 * planned now could bring the window under the trigger ({@link autoPassCouldMeetTrigger}: a new
 * turn made the former newest turn archivable). Otherwise the pass waits (the scheduler counts it
 * as deferred and writes nothing). Pure; O(window) (it may plan on a copy).
 */
export function autoPassDue(command: CompactSession, state: SessionWindowState): boolean {
  return grownSinceStuckAutoPass(command, state) || autoPassCouldMeetTrigger(command, state);
}

/**
 * Whether the trigger of the automatic pass `command` fires on the window of `state` (true without
 * a trigger: the pass then plans as a commanded one would). A pass whose trigger does not fire
 * answers `not-triggered` and never calls the summarizer. Pure; O(window).
 */
export function autoTriggerFires(command: CompactSession, state: SessionWindowState): boolean {
  return !command.trigger || triggerFiguresFire(command.trigger, triggerFigures(costedWindow(state, command.estimator)));
}

/**
 * Whether the `noop` plan of `command` on `state` is recorded as a decision, by either rule:
 * - DESIGN §3.5: an automatic pass (not a dry run) whose trigger still fires on the unchanged
 *   window, and only when the window has grown enough since the last recorded one (so one record
 *   per wait period, never one per append, also when passes of several replicas race: each plans
 *   on the log as it is);
 * - its spend ({@link recordsSpentNoop}): a pass that called the summarizer and discarded the
 *   replies before concluding `noop` (newcomer ncauditor F2).
 * Any other noop (a commanded one, a pass with no trigger, that called no summarizer) writes nothing.
 */
function recordsNoop(command: CompactSession, plan: CompactionPlan, state: SessionWindowState, discarded: SummarizerUsage | undefined): boolean {
  if (plan.outcome !== 'noop' || command.dryRun) return false;
  if (recordsSpentNoop(state, discarded)) return true;
  if (command.origin !== 'auto' || !command.trigger) return false;
  if (!triggerFiguresFire(command.trigger, triggerFigures(costedWindow(state, command.estimator)))) return false;
  return grownSinceStuckAutoPass(command, state);
}

/**
 * Whether a `noop` conclusion (not a dry run) on `state` is recorded for its spend: the pass
 * called the summarizer and discarded the replies (`discarded`: planned again after another
 * pass's decision, say, and then nothing was left to archive). The decision (one
 * `CompactionCompleted`, outcome `noop`, its reason, its `summarizer` the discarded calls) puts
 * those calls in the session's log, where the compaction history and its spend show them; without
 * it they showed only in the command's answer and `/metrics`.
 *
 * Except while an automatic wait is in force (DESIGN §3.5: the session's last decision is an
 * automatic pass that left its trigger firing, {@link autoPassBaseline}): a decision recorded then
 * would end that wait (a commanded one, or one of other parameters) or move its baseline (the
 * policy's own pass, recorded before the window has grown enough), so the noop writes nothing, as
 * before. A noop recorded by this rule outside a wait starts none: a commanded decision never
 * does, and an automatic noop with a firing trigger outside a wait is recorded by the rule of
 * §3.5 anyway. Pure, O(1).
 */
export function recordsSpentNoop(state: SessionWindowState, discarded: SummarizerUsage | undefined): boolean {
  return discarded !== undefined && discarded.calls > 0 && state.lastCompaction?.stillFiring === undefined;
}

/**
 * Whether a pass's decision may still be appended onto `current` (the state it is about to be
 * appended onto), for a pass of `command` that began on `firedOn` (DESIGN §4, "re-checked against
 * the new state"; the one rule every path of the handler applies: before planning, after the
 * summarizer call when the session was erased meanwhile, and before a rebase onto new appends):
 * - `erased`: `current` is another life of the stream (its incarnation differs: the session was
 *   erased, and perhaps written again, since the pass began). Nothing the pass planned or was
 *   told may be written into that life, whatever its origin: the pass is abandoned.
 * - `policy-changed`: an automatic pass (origin `auto`) whose policy is no longer in force on
 *   `current`: the policy event differs from the one in force on `firedOn` (its revision), or the
 *   policy in force has no strategy or other parameters (strategy, trigger, estimator) than the
 *   command's. The pass is abandoned; a pass of the current policy, if it fires, is a new pass.
 *   A commanded pass carries its own parameters: a policy change does not concern it.
 * - `authorised`: the decision may be appended (rebased, when the stream moved on).
 * Pure, O(1) (a parameters key of each side).
 */
export function passAuthority(
  command: CompactSession,
  firedOn: Pick<SessionWindowState, 'incarnation' | 'policyRevision'>,
  current: Pick<SessionWindowState, 'incarnation' | 'policyRevision' | 'policy'>,
): 'authorised' | 'erased' | 'policy-changed' {
  if (current.incarnation !== firedOn.incarnation) return 'erased';
  if (command.origin !== 'auto') return 'authorised';
  const policy = current.policy;
  if (!policy?.strategy || current.policyRevision !== firedOn.policyRevision) return 'policy-changed';
  const inForce = compactionParamsKey(policy.strategy, policy.trigger, policy.estimator);
  return inForce === compactionParamsKey(command.strategy, command.trigger, command.estimator) ? 'authorised' : 'policy-changed';
}

/**
 * The earlier decision to answer with instead of deciding again, or null:
 * - `compactionId` (the id this pass would decide under) is the last decision's: a transport
 *   command delivered again (its id derives from the command id) after its decision was recorded
 *   and before any other decision. An id derived from the base revision never matches: every
 *   decision moves the revision past the one it was based on.
 * - `concurrent` (the store refused this pass's ids as duplicates: the same compaction was decided
 *   meanwhile): the last decision with the same parameters, whatever its outcome.
 *
 * A failed decision is not replayed otherwise: the same command asked again after a failure is a
 * new pass on the revision the failure left (a new compaction id, a new summarizer call), so a
 * transient summarizer fault does not stick until the session changes. Each failure is recorded,
 * so `consecutiveFailures` (the auto-compaction backoff) counts the retries too.
 */
export function compactionToReplay(state: SessionWindowState, paramsKey: string, concurrent = false, compactionId?: string): RecordedCompaction | null {
  const last = state.lastCompaction;
  if (!last) return null;
  if (compactionId !== undefined && last.compactionId === compactionId) return last;
  return concurrent && last.paramsKey === paramsKey ? last : null;
}

/**
 * Step 1 (DESIGN §3.2–§3.6): plans a pass on `state` (a private copy; null when the session does
 * not exist). Concludes with a replay ({@link compactionToReplay}: a transport command delivered
 * again after its decision), with the planner's
 * `not-triggered` or `noop` (and its reason), or with the dry run's would-be result; otherwise
 * returns the pass to decide, under the compaction id of {@link compactionIdentity}. An automatic
 * `noop` whose trigger still fires is a pass to decide too, once per wait period (`recordsNoop`):
 * its decision records it (`plan.outcome` `noop`, no summarizer call); so is the `noop` of a pass
 * that discarded summarizer replies (`discarded`: their usage, from the handler's ledger;
 * {@link recordsSpentNoop}), whose decision records those calls as its `summarizer`.
 * The dry run's would-be summary takes no id `state` knows (`summaryIdOn`), as the pass's does.
 * @throws SessionNotFoundError when the session has no events.
 */
export function planSessionCompaction(command: CompactSession, state: SessionWindowState | null, discarded?: SummarizerUsage): CompactionStep {
  if (!state || state.revision === null) throw new SessionNotFoundError(command.sessionId);
  const { compactionId, paramsKey } = compactionIdentity(command, state.revision, state.incarnation);
  const replay = compactionToReplay(state, paramsKey, false, compactionId);
  if (replay) return { kind: 'conclude', conclusion: { kind: 'replay', recorded: replay, state } };
  const plan = planCompaction(costedWindow(state, command.estimator), command.strategy, command.trigger);
  if (plan.outcome !== 'compacted') {
    if (recordsNoop(command, plan, state, discarded)) return { kind: 'pass', pass: { compactionId, paramsKey, basedOnRevision: state.revision, plan } };
    return { kind: 'conclude', conclusion: { kind: 'unrecorded', plan, state } };
  }
  if (command.dryRun) {
    const estimator = getEstimator(command.estimator);
    const pending = { reply: { text: '(summary pending)' }, summaryId: summaryIdOn(compactionId, state), estimator };
    const result = completePlan(plan, plan.summaryRequest ? pending : { estimator });
    return { kind: 'conclude', conclusion: { kind: 'dry-run', plan, result, state } };
  }
  return { kind: 'pass', pass: { compactionId, paramsKey, basedOnRevision: state.revision, plan } };
}

/**
 * Step 2 (DESIGN §3.6, §3.7, §4): the decision events of `pass` on `state` (whose revision is the
 * expected revision of the append), given the summarizer's outcome when the plan asked for one:
 * `EventsArchived` (when anything is archived), `SummaryInserted` (with a usable summary, placed
 * before the plan's anchor), then `CompactionCompleted` or, when the summary failed or was blank,
 * `CompactionFailed` (only superseded system messages archived). A `noop` pass (an automatic one
 * recorded for DESIGN §3.5, or one recorded for the summarizer calls it discarded: `recordsNoop`)
 * is one `CompactionCompleted` with outcome `noop` and its reason. The last event carries the
 * session snapshot of the state after the pass and, with a trigger, whether it still fires
 * (DESIGN §3.5). Event ids derive from the compaction id, so a decision appended twice is one.
 * The summary's id is `summaryIdOn(compactionId, state)`: `summary-<compactionId>`
 * unless an event the state holds has it, else the first free `summary-<compactionId>-<n>` (n ≥ 2);
 * derived on `state`, so a pass rebased onto a state where a client appended that id meanwhile
 * takes the next free one. Its `summarizer` (when the pass called one) sums the reply's usage and `context.discarded` (a
 * noop's is `context.discarded` alone).
 */
export function decideCompaction(
  command: CompactSession,
  state: SessionWindowState,
  pass: PlannedCompaction,
  summary: SummarizerOutcome | undefined,
  context: CompactionContext,
): CompactionDecision {
  const { compactionId, plan } = pass;
  const key = sessionKey(command.tenantId, command.sessionId);
  // the failure's kind goes with its reason: the summarizer chose both
  const reply: SummaryReply | undefined = summary
    ? summary.ok
      ? { text: summary.text }
      : { failure: summary.reason, ...(summary.failureKind !== undefined ? { failureKind: summary.failureKind } : {}) }
    : undefined;
  const estimator = getEstimator(command.estimator);
  // the summary's id on the state decided on (a rebase's too): never an id an event of the session already has
  const summaryId = plan.summaryRequest ? summaryIdOn(compactionId, state) : undefined;
  const result = completePlan(plan, plan.summaryRequest ? { reply, summaryId, estimator } : { estimator });
  const summarizer = decisionSummarizer(context.summarizer, summary && usageOf(summary), context.discarded);
  const now = context.now.toISOString();
  // from the pass's start to its decision, whichever it is: a failure's time is known as well as a success's
  const durationMs = context.now.getTime() - context.startedAt.getTime();
  const payloads: Array<{ type: string; data: unknown }> = [];
  if (result.archivedIds.length > 0)
    payloads.push({ type: EVENTS_ARCHIVED, data: { compactionId, archivedIds: result.archivedIds } satisfies EventsArchivedData });
  if (result.summary) {
    const s = result.summary;
    const data: SummaryInsertedData = {
      compactionId,
      summaryId: s.id,
      shadowPrompt: s.shadowPrompt,
      text: s.text,
      insertBeforeId: s.insertBeforeId,
      insertBeforeRevision: state.active.get(s.insertBeforeId)!.revision.toString(),
      coveredIds: s.coveredIds,
      costs: computeEventCosts({ id: s.id, type: 'summary', shadowPrompt: s.shadowPrompt, text: s.text }),
      summarizer: summarizer!,
      createdAt: now,
    };
    payloads.push({ type: SUMMARY_INSERTED, data });
  }
  // The state after the pass, folded with the revisions these events will get, for the session snapshot.
  const after = cloneSessionWindow(state);
  let revision = state.revision!;
  for (const p of payloads) evolveSessionWindow(after, { ...p, revision: ++revision });
  const figuresAfter = triggerFigures(costedWindow(after, command.estimator));
  const rebased = state.revision !== pass.basedOnRevision;
  const noop = result.outcome === 'noop' ? plan.noop : undefined;
  const common = {
    compactionId,
    strategy: command.strategy,
    trigger: command.trigger,
    estimator: command.estimator,
    basedOnRevision: pass.basedOnRevision.toString(),
    origin: command.origin,
    ...(command.origin === 'command' && command.requestedBy ? { requestedBy: command.requestedBy } : {}),
    ...policySourceFields(command),
    paramsKey: pass.paramsKey,
    checkpoint: buildSnapshot(after, state.consecutiveFailures),
  };
  if (result.outcome === 'failed') {
    const data: CompactionFailedData = {
      ...common,
      stage: 'summarize',
      reason: result.failureReason ?? 'summarizer failed',
      failureKind: result.failureKind ?? 'other',
      // aborted by the service's shutdown: recorded, but not counted by the backoff
      ...(summary && !summary.ok && summary.interrupted ? { interrupted: summary.interrupted } : {}),
      ...(summarizer ? { summarizer } : {}),
      durationMs,
      failedAt: now,
      tokensBefore: result.tokensBefore,
      archivedIds: result.archivedIds,
      ...(plan.archivedIds.length > result.archivedIds.length ? { plannedArchivedIds: plan.archivedIds } : {}),
      tokensAfter: result.tokensAfter,
      tokensEstimatedSaved: result.tokensEstimatedSaved,
      keptCount: result.keptIds.length,
    };
    payloads.push({ type: COMPACTION_FAILED, data });
  } else {
    const data: CompactionCompletedData = {
      ...common,
      outcome: result.outcome === 'noop' ? 'noop' : 'compacted',
      ...(noop ? { reason: noop.reason, ...(noop.reason === 'open-tool-call' ? { toolCallId: noop.toolCallId, eventId: noop.eventId } : {}) } : {}),
      archivedCount: result.archivedIds.length,
      keptCount: result.keptIds.length,
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      tokensEstimatedSaved: result.tokensEstimatedSaved,
      keptIds: result.keptIds,
      ...(result.archivedIds.length > 0 && plan.archiveReasons ? { archivedBecause: plan.archiveReasons } : {}),
      ...(summarizer ? { summarizer } : {}),
      durationMs,
      completedAt: now,
      ...stillFiring(command.trigger, figuresAfter, rebased),
      ...(result.summaryBudget ? { summaryBudget: result.summaryBudget } : {}),
    };
    payloads.push({ type: COMPACTION_COMPLETED, data });
  }
  const metadata = { tenantId: command.tenantId, sessionId: command.sessionId, ...(context.passId ? { passId: context.passId } : {}) };
  const events = payloads.map((p, i): EventData => ({ ...decisionEventIds(key, state.incarnation, compactionId, i), type: p.type, data: p.data, metadata }));
  return { compactionId, events, result, ...(summarizer ? { summarizer } : {}), after: figuresAfter, rebased, ...(noop ? { noop } : {}) };
}
