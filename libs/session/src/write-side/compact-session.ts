/**
 * Command and handler: compact a session (DESIGN §3, §4).
 *
 * One pass: load the state at revision R → plan (pure) → call the summarizer when the plan asks →
 * complete the plan → append every decision event in ONE append with expected revision R. If the
 * stream moved on, the plan is re-checked against the new state: when every archived id and the
 * summary's anchor are still active and no other compaction happened, the same decision is
 * appended at the new revision without a second summarizer call; otherwise the pass is recomputed,
 * at most {@link MAX_COMPACTION_ATTEMPTS} times, then reported as `conflict`.
 *
 * Passes that change nothing (`noop`, `not-triggered`) and dry runs append nothing.
 */
import { Inject, Logger, Optional } from '@nestjs/common';
import { CommandHandler, EventBus, type ICommandHandler } from '@nestjs/cqrs';
import {
  completePlan,
  getEstimator,
  isNotice,
  pairToolCalls,
  planCompaction,
  triggerFigures,
  triggerFiguresFire,
  type CompactionPlan,
  type NoopReason,
  type TriggerFigures,
  type CompactionResult,
  type Strategy,
  type SummaryReply,
  type Trigger,
} from '@lib/compaction';
import { DuplicateEventIdError, WrongExpectedRevisionError, findInStream, type EventData, type EventStore, type RecordedEvent } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  EVENTS_ARCHIVED,
  SUMMARY_INSERTED,
  sessionKey,
  sessionStream,
  type CompactionCompletedData,
  type CompactionFailedData,
  type EstimatorName,
  type EventsArchivedData,
  type SessionEventMetadata,
  type SummarizerIdentity,
  type SummaryInsertedData,
} from '../events/session-stream-events';
import { computeEventCosts } from '../domain/event-costs';
import { commandCompactionId, compactionIdFor, decisionEventId, summaryIdFor } from '../domain/session-ids';
import { costedWindow, evolveSessionWindow, orderedWindow, windowTokens, type SessionWindowState, type WindowEntry } from '../domain/session-window';
import { cloneSessionWindow } from '../domain/clone-session-window';
import { SessionNotFoundError } from '../errors';
import { EVENT_STORE, SUMMARIZER } from '../tokens';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { buildSnapshot } from './session-snapshot';
import { SessionStateCache } from './session-state-cache';
import { compactionParamsKey } from './compaction-params';
import { checkStrategyFitsSummarizer } from './summarizer-room';

/** How many times a pass is recomputed after conflicting writes before it reports `conflict`. */
export const MAX_COMPACTION_ATTEMPTS = 4;

/** Compact `sessionId` of `tenantId` with a validated strategy and trigger. */
export class CompactSessionCommand {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
    readonly strategy: Strategy,
    readonly trigger: Trigger | null,
    readonly estimator: EstimatorName,
    readonly dryRun: boolean,
    readonly origin: 'auto' | 'command' = 'command',
    /**
     * Id of the transport command (e.g. a NATS message id), when it may be delivered more than
     * once: the compaction id, hence every decision event id, is then derived from it, so a
     * redelivered command cannot append a second decision (the store rejects the repeated ids).
     */
    readonly commandId?: string,
  ) {}
}

/**
 * The answer to a compaction (DESIGN §3.6). Ids are client ids. Token figures are in the unit of
 * `estimator` (tokens, or UTF-16 code units for `chars`). `revision` is the session's stream
 * revision after the pass (decimal string).
 */
export interface CompactionAnswer {
  /**
   * Id of the recorded decision (`GET …/compactions/:compactionId`); present exactly when
   * `recorded` is true (issue 17: an unrecorded answer carries no id that leads nowhere).
   */
  compactionId?: string;
  outcome: CompactionResult['outcome'];
  archived: string[];
  kept: string[];
  summary?: { id: string; text: string; shadowPrompt: string; insertBeforeId: string; coveredIds: string[]; tokens: number };
  tokensBefore: number;
  tokensAfter: number;
  tokensEstimatedSaved: number;
  revision: string;
  /** Global position of the last decision event written (decimal string); absent when nothing was written. Pass it as `minPosition` to read the window after it. */
  position?: string;
  estimator: EstimatorName;
  dryRun: boolean;
  /**
   * Whether the decision is in the log (and in the compaction history under `compactionId`).
   * `noop`, `not-triggered`, `conflict` and dry runs are answered but not recorded.
   */
  recorded: boolean;
  /** True when this answer is a decision recorded earlier for the same unchanged input. */
  replayed?: boolean;
  /** Present when outcome is `failed`. */
  failure?: { stage: 'summarize'; reason: string };
  /** Present when outcome is `noop`: why nothing was archived (`within-limit`, `newest-turn-only`, `open-tool-call`). */
  reason?: NoopReason['reason'];
  /** With reason `open-tool-call`: the call that held the cut back. */
  toolCallId?: string;
  /** With reason `open-tool-call`: the assistant event holding that call. */
  eventId?: string;
  /**
   * With a trigger, for a pass that was not a dry run and not `not-triggered`: whether the trigger
   * still fires on the window after the pass (the part no strategy may archive is over it; DESIGN
   * §3.5: the next automatic pass then waits for growth).
   */
  triggerStillFires?: boolean;
  /** User events in the window after the pass (with `triggerStillFires`), for the growth rule of DESIGN §3.5. */
  turnsAfter?: number;
  /** Present for a dry run that would call the summarizer: what it would be asked. */
  pendingSummary?: { insertBeforeId: string; coveredIds: string[] };
  summarizer?: SummarizerIdentity;
}

interface DecisionBatch {
  events: EventData[];
  result: CompactionResult;
  summarizer?: SummarizerIdentity;
  /** Trigger figures of the window after the pass. */
  after: TriggerFigures;
}

/**
 * Published for every answered compaction (commanded or automatic, dry runs included), for the
 * metrics: `reason` is the noop reason, when the outcome is `noop`.
 */
export class CompactionAnswered {
  constructor(
    readonly origin: 'auto' | 'command',
    readonly outcome: CompactionResult['outcome'],
    readonly reason: NoopReason['reason'] | undefined,
    readonly dryRun: boolean,
  ) {}
}

/** The `triggerStillFires` / `turnsAfter` fields of an answer for a trigger and the window figures after the pass. */
function stillFiring(trigger: Trigger | null, after: TriggerFigures): Pick<CompactionAnswer, 'triggerStillFires' | 'turnsAfter'> {
  return trigger ? { triggerStillFires: triggerFiguresFire(trigger, after), turnsAfter: after.turns } : {};
}

/** Handles {@link CompactSessionCommand} (one pass, see the module doc). */
@CommandHandler(CompactSessionCommand)
export class CompactSessionHandler implements ICommandHandler<CompactSessionCommand, CompactionAnswer> {
  private readonly logger = new Logger('Compaction');

  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    @Inject(SUMMARIZER) private readonly summarizer: Summarizer,
    @Optional() private readonly eventBus?: EventBus,
  ) {}

  /**
   * @throws InvalidRequestError (400 `invalid_parameter`) when the strategy's prompts leave too little of the summarizer's input bound for events.
   * @throws SessionNotFoundError (404) when the session has no events.
   * Summarizer faults never throw: they are recorded as a failed compaction.
   */
  async execute(command: CompactSessionCommand): Promise<CompactionAnswer> {
    const answer = await this.pass(command);
    this.eventBus?.publish(new CompactionAnswered(command.origin, answer.outcome, answer.reason, command.dryRun));
    return answer;
  }

  private async pass(command: CompactSessionCommand): Promise<CompactionAnswer> {
    checkStrategyFitsSummarizer(command.strategy, this.summarizer);
    const key = sessionKey(command.tenantId, command.sessionId);
    const paramsKey = compactionParamsKey(command.strategy, command.trigger, command.estimator);
    let state = await this.mustLoad(key, command.sessionId);
    for (let attempt = 0; attempt < MAX_COMPACTION_ATTEMPTS; attempt++) {
      const replay = await this.replayIfUnchanged(key, state, paramsKey, command);
      if (replay) return replay;
      const started = Date.now();
      const basedOn = state.revision!;
      const compactionId = command.commandId !== undefined ? commandCompactionId(key, command.commandId) : compactionIdFor(key, basedOn, paramsKey);
      const plan = planCompaction(costedWindow(state, command.estimator), command.strategy, command.trigger);
      if (plan.outcome !== 'compacted') return this.unrecorded(plan, state, command);
      if (command.dryRun) return this.dryRunAnswer(compactionId, plan, state, command);

      let outcome: SummarizerOutcome | undefined;
      if (plan.summaryRequest) outcome = await this.summarize(plan);
      // Append, re-checking against newer states without calling the summarizer again.
      let current = state;
      let currentPlan = plan;
      for (;;) {
        const batch = this.decisions(key, compactionId, currentPlan, outcome, current, basedOn, paramsKey, command, started);
        try {
          const appended = await this.store.appendToStream(sessionStream(key), batch.events, { expectedRevision: current.revision! });
          return this.answer(compactionId, batch, appended.nextExpectedRevision, appended.position, command);
        } catch (err) {
          if (err instanceof DuplicateEventIdError) {
            // The same compaction (same base revision and parameters) was decided concurrently.
            const latest = await this.mustLoad(key, command.sessionId);
            // A redelivered transport command: its own decision is in the log already.
            const own =
              command.commandId !== undefined
                ? await findInStream(
                    this.store,
                    sessionStream(key),
                    (e) =>
                      (e.type === COMPACTION_COMPLETED || e.type === COMPACTION_FAILED) && (e.data as { compactionId?: string }).compactionId === compactionId,
                  )
                : null;
            if (own) return this.replayOf(own, latest, command);
            const replayed = await this.replayIfUnchanged(key, latest, paramsKey, command, true);
            if (replayed) return replayed;
            state = latest;
            break;
          }
          if (!(err instanceof WrongExpectedRevisionError)) throw err;
          const latest = await this.mustLoad(key, command.sessionId);
          const rebased = rebasePlan(currentPlan, current, latest, command.estimator);
          if (!rebased) {
            state = latest;
            break;
          }
          current = latest;
          currentPlan = rebased;
        }
      }
    }
    const latest = await this.mustLoad(key, command.sessionId);
    const kept = orderedWindow(latest);
    const tokens = windowTokens(kept, command.estimator);
    return {
      outcome: 'conflict',
      archived: [],
      kept: kept.map((e) => e.event.id),
      tokensBefore: tokens,
      tokensAfter: tokens,
      tokensEstimatedSaved: 0,
      revision: latest.revision!.toString(),
      estimator: command.estimator,
      dryRun: command.dryRun,
      recorded: false,
    };
  }

  /**
   * A private snapshot of the session's state. The cache folds newer events into its shared object
   * in place, so a pass that kept that object across the summarizer call would see its base revision
   * move and append a stale plan at the newest revision, bypassing the expected-revision check.
   */
  private async mustLoad(key: string, sessionId: string): Promise<SessionWindowState> {
    const state = await this.sessions.load(key);
    if (!state || state.revision === null) throw new SessionNotFoundError(sessionId);
    return cloneSessionWindow(state);
  }

  private async summarize(plan: CompactionPlan): Promise<SummarizerOutcome> {
    try {
      return await this.summarizer.summarize(plan.summaryRequest!);
    } catch (err) {
      this.logger.warn(`summarizer threw: ${(err as Error).name}`);
      return { ok: false, reason: `summarizer error: ${(err as Error).name}`, calls: 1, promptTokens: 0, completionTokens: 0 };
    }
  }

  /**
   * When the last decision of the session was made with the same parameters and no conversation
   * event arrived since, the input is unchanged: answer with that decision instead of a new one.
   */
  private async replayIfUnchanged(
    key: string,
    state: SessionWindowState,
    paramsKey: string,
    command: CompactSessionCommand,
    force = false,
  ): Promise<CompactionAnswer | null> {
    const last = state.lastCompaction;
    if (!last || last.paramsKey !== paramsKey || (state.eventsSinceCompaction > 0 && !force)) return null;
    if (last.outcome !== 'failed' && !force) return null;
    const [recorded] = await this.store.readStream(sessionStream(key), { fromRevision: last.revision, maxCount: 1 });
    if (!recorded) return null;
    return this.replayOf(recorded, state, command);
  }

  /** The answer replaying `recorded` (a CompactionCompleted or CompactionFailed event), on the window of `state`. */
  private replayOf(recorded: RecordedEvent, state: SessionWindowState, command: CompactSessionCommand): CompactionAnswer {
    const kept = orderedWindow(state);
    const tokensAfter = windowTokens(kept, command.estimator);
    if (recorded.type === COMPACTION_FAILED) {
      const data = recorded.data as CompactionFailedData;
      return {
        compactionId: data.compactionId,
        outcome: 'failed',
        archived: data.archivedIds,
        kept: kept.map((e) => e.event.id),
        tokensBefore: data.tokensBefore,
        tokensAfter,
        tokensEstimatedSaved: 0,
        revision: state.revision!.toString(),
        estimator: command.estimator,
        dryRun: command.dryRun,
        recorded: true,
        replayed: true,
        failure: { stage: 'summarize', reason: data.reason },
        ...(data.summarizer ? { summarizer: data.summarizer } : {}),
      };
    }
    const data = recorded.data as CompactionCompletedData;
    return {
      compactionId: data.compactionId,
      outcome: 'compacted',
      archived: [],
      kept: kept.map((e) => e.event.id),
      tokensBefore: data.tokensBefore,
      tokensAfter: data.tokensAfter,
      tokensEstimatedSaved: data.tokensEstimatedSaved,
      revision: state.revision!.toString(),
      estimator: command.estimator,
      dryRun: command.dryRun,
      recorded: true,
      replayed: true,
    };
  }

  private unrecorded(plan: CompactionPlan, state: SessionWindowState, command: CompactSessionCommand): CompactionAnswer {
    const noop = plan.noop;
    return {
      outcome: plan.outcome,
      ...(noop ? { reason: noop.reason, ...(noop.reason === 'open-tool-call' ? { toolCallId: noop.toolCallId, eventId: noop.eventId } : {}) } : {}),
      ...(plan.outcome === 'noop' && !command.dryRun ? stillFiring(command.trigger, triggerFigures(costedWindow(state, command.estimator))) : {}),
      archived: [],
      kept: plan.keptIds.length || plan.archivedIds.length ? [...plan.keptIds] : orderedWindow(state).map((e) => e.event.id),
      tokensBefore: plan.tokensBefore,
      tokensAfter: plan.tokensBefore,
      tokensEstimatedSaved: 0,
      revision: state.revision!.toString(),
      estimator: command.estimator,
      dryRun: command.dryRun,
      recorded: false,
    };
  }

  private dryRunAnswer(compactionId: string, plan: CompactionPlan, state: SessionWindowState, command: CompactSessionCommand): CompactionAnswer {
    const estimator = getEstimator(command.estimator);
    const result = plan.summaryRequest
      ? { ...completePlan(plan, { reply: { text: '(summary pending)' }, summaryId: summaryIdFor(compactionId), estimator }) }
      : completePlan(plan, { estimator });
    return {
      outcome: result.outcome,
      archived: result.archivedIds,
      kept: result.keptIds,
      tokensBefore: result.tokensBefore,
      tokensAfter: plan.tokensBefore - plan.tokensArchived,
      tokensEstimatedSaved: plan.tokensArchived,
      revision: state.revision!.toString(),
      estimator: command.estimator,
      dryRun: true,
      recorded: false,
      ...(plan.summaryRequest ? { pendingSummary: { insertBeforeId: plan.summaryInsertBeforeId!, coveredIds: plan.summaryRequest.coveredIds } } : {}),
    };
  }

  /** Builds the decision events of one pass against `state` (whose revision is the expected revision). */
  private decisions(
    key: string,
    compactionId: string,
    plan: CompactionPlan,
    outcome: SummarizerOutcome | undefined,
    state: SessionWindowState,
    basedOn: bigint,
    paramsKey: string,
    command: CompactSessionCommand,
    started: number,
  ): DecisionBatch {
    const estimator = getEstimator(command.estimator);
    const summaryId = summaryIdFor(compactionId);
    const reply: SummaryReply | undefined = outcome ? (outcome.ok ? { text: outcome.text } : { failure: outcome.reason }) : undefined;
    const result = completePlan(plan, plan.summaryRequest ? { reply, summaryId, estimator } : { estimator });
    const summarizer: SummarizerIdentity | undefined = outcome
      ? { ...this.summarizer.identity, calls: outcome.calls, promptTokens: outcome.promptTokens, completionTokens: outcome.completionTokens }
      : undefined;
    const metadata: SessionEventMetadata = { tenantId: command.tenantId, sessionId: command.sessionId };
    const now = new Date().toISOString();
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
    const snapshot = buildSnapshot(after, state.consecutiveFailures);
    const figuresAfter = triggerFigures(costedWindow(after, command.estimator));
    const common = {
      compactionId,
      strategy: command.strategy,
      trigger: command.trigger,
      estimator: command.estimator,
      basedOnRevision: basedOn.toString(),
      origin: command.origin,
      paramsKey,
      checkpoint: snapshot,
    };
    if (result.outcome === 'failed') {
      const data: CompactionFailedData = {
        ...common,
        stage: 'summarize',
        reason: result.failureReason ?? 'summarizer failed',
        ...(summarizer ? { summarizer } : {}),
        failedAt: now,
        tokensBefore: result.tokensBefore,
        archivedIds: result.archivedIds,
      };
      payloads.push({ type: COMPACTION_FAILED, data });
    } else {
      const data: CompactionCompletedData = {
        ...common,
        outcome: 'compacted',
        archivedCount: result.archivedIds.length,
        keptCount: result.keptIds.length,
        tokensBefore: result.tokensBefore,
        tokensAfter: result.tokensAfter,
        tokensEstimatedSaved: result.tokensEstimatedSaved,
        keptIds: result.keptIds,
        ...(summarizer ? { summarizer } : {}),
        durationMs: Date.now() - started,
        completedAt: now,
        ...stillFiring(command.trigger, figuresAfter),
      };
      payloads.push({ type: COMPACTION_COMPLETED, data });
    }
    return {
      events: payloads.map((p, i) => ({ id: decisionEventId(key, compactionId, i), type: p.type, data: p.data, metadata })),
      result,
      summarizer,
      after: figuresAfter,
    };
  }

  private answer(compactionId: string, batch: DecisionBatch, revision: bigint, position: bigint, command: CompactSessionCommand): CompactionAnswer {
    const { result } = batch;
    return {
      compactionId,
      outcome: result.outcome,
      archived: result.archivedIds,
      kept: result.keptIds,
      ...(result.summary
        ? {
            summary: {
              id: result.summary.id,
              text: result.summary.text,
              shadowPrompt: result.summary.shadowPrompt,
              insertBeforeId: result.summary.insertBeforeId,
              coveredIds: result.summary.coveredIds,
              tokens: result.summary.tokens,
            },
          }
        : {}),
      tokensBefore: result.tokensBefore,
      tokensAfter: result.tokensAfter,
      tokensEstimatedSaved: result.tokensEstimatedSaved,
      revision: revision.toString(),
      position: position.toString(),
      estimator: command.estimator,
      dryRun: false,
      recorded: true,
      ...(result.outcome === 'failed' ? { failure: { stage: 'summarize' as const, reason: result.failureReason ?? 'summarizer failed' } } : {}),
      ...(result.outcome === 'compacted' ? stillFiring(command.trigger, batch.after) : {}),
      ...(batch.summarizer ? { summarizer: batch.summarizer } : {}),
    };
  }
}

/**
 * Re-checks a plan made on `before` against `latest` (DESIGN §4): it still holds when no other
 * compaction happened, every archived id and the summary's anchor are still active, the pinned
 * system message is the same, and no answer appended since answers an archived call. Returns the
 * plan rewritten for `latest` (events appended since are kept, figures recomputed), or null.
 */
export function rebasePlan(plan: CompactionPlan, before: SessionWindowState, latest: SessionWindowState, estimator: EstimatorName): CompactionPlan | null {
  const sameCompaction = (before.lastCompaction?.compactionId ?? null) === (latest.lastCompaction?.compactionId ?? null);
  if (!sameCompaction) return null;
  if (!plan.archivedIds.every((id) => latest.active.has(id))) return null;
  if (plan.summaryInsertBeforeId && !latest.active.has(plan.summaryInsertBeforeId)) return null;
  const archived = new Set(plan.archivedIds);
  const window = orderedWindow(latest);
  // A system message appended since supersedes the pinned one: the old plan no longer says so.
  const instructions = (e: WindowEntry) => e.event.type === 'system' && !isNotice(e.event);
  const newestSystem = [...window].reverse().find(instructions);
  const pinnedBefore = [...orderedWindow(before)].reverse().find(instructions);
  if ((newestSystem?.event.id ?? null) !== (pinnedBefore?.event.id ?? null)) return null;
  // An answer appended since to a call the plan archives would be kept without its call (§3.3 rule 3).
  const { calls } = pairToolCalls(window.map((e) => e.event));
  for (const call of calls) {
    if (archived.has(window[call.callAt].event.id) && call.responses.some((r) => !archived.has(window[r].event.id))) return null;
  }
  return {
    ...plan,
    keptIds: window.filter((e) => !archived.has(e.event.id)).map((e) => e.event.id),
    tokensBefore: windowTokens(window, estimator),
  };
}
