/**
 * Command and handler: compact a session (DESIGN §3, §4). The decisions are the compaction
 * decider's (decider/compaction-decider.ts); this handler only does the I/O around them:
 *
 * load the state at revision R → plan → call the summarizer when the plan asks → decide → append
 * every decision event in ONE append at expected revision R. When the stream moved on, the pass is
 * rebased onto the newer state and decided again without a second summarizer call
 * (`rebaseCompaction`); when it no longer holds, the pass is planned again, at most
 * {@link MAX_COMPACTION_ATTEMPTS} times, then answered as `conflict`.
 *
 * Duplicates cost one summarizer call. Identical commands in this process at once (the same
 * {@link compactionIdentity} `passKey`: session, command identity, parameters, base revision: they
 * read the session before the pass's decision landed) share one pass and get the same answer
 * (single flight), also when one reaches the pass just after it ended ({@link SETTLED_PASS_SHARE_MS}). A redelivered transport command whose decision
 * is in the log is answered with it before anything is planned. Duplicates across processes meet
 * the store's refusal of the decision ids and are answered with the recorded decision; on a store
 * with claims (PostgreSQL) a commanded pass whose plan calls the summarizer first takes the
 * session's claim (./session-claims: the rule automatic passes follow too), waiting while another
 * pass holds it, then decides again on the state that pass left (the same compaction recorded
 * meanwhile is its answer, `replayed`), so replicas call the model once per decision. A pass that
 * ended (failed included) is never shared with a command that arrives afterwards: asked again, the
 * same request is a new pass on the revision the last one left.
 *
 * Every summarizer call's cost shows (./summarizer-spend): a reply the pass does not use (planned
 * again, erased meanwhile, another pass's decision found) is summed into the decision it finally
 * writes (`summarizer.discarded`; a pass planned again that then finds nothing to archive records
 * a `noop` decision for them, `recordsSpentNoop`), reported in the answer
 * (`discardedSummarizerCalls`) whatever it is (in the body of a 404 or 400 refusal too), and
 * published for the metrics ({@link SummarizerCallsSpent}), also when the command ends in an error.
 */
import { Inject, Logger, Optional } from '@nestjs/common';
import { CommandHandler, EventBus, type ICommandHandler } from '@nestjs/cqrs';
import { getEstimator, type SummaryRequest } from '@lib/compaction';
import { replyRefusal } from '../domain/reply-refusal';
import { randomUUID } from 'node:crypto';
import { DuplicateEventIdError, WrongExpectedRevisionError, findInStream, type EventStore, type HeldClaim, type RecordedEvent } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { recordedCompactionOf, type RecordedCompaction, type SessionWindowState } from '../domain/session-window';
import { cloneSessionWindow } from '../domain/clone-session-window';
import { InvalidRequestError, SessionNotFoundError, withDiscardedSummarizerCalls } from '../errors';
import { ReadModelStore } from '../read-side/read-model-store';
import { latestErasure } from '../read-side/queries/erasure-query';
import { holdsCompaction } from '../read-side/queries/compaction-history-query';
import { COMMAND_EVENT_STORE, SESSION_SETTINGS, SUMMARIZER } from '../tokens';
import type { Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import {
  compactionIdentity,
  compactionToReplay,
  decideCompaction,
  passAuthority,
  planSessionCompaction,
  type CompactSession,
  type PlannedCompaction,
} from '../decider/compaction-decider';
import { compactionOn, policyStillInForce, sharedAnswerTo } from '../decider/compaction-by-policy';
import { rebaseCompaction } from '../decider/compaction-rebase';
import { answerCompaction, positionedAnswer, type CompactionAnswer, type CompactionConclusion } from '../decider/compaction-answer';
import { AcknowledgedPositions } from './acknowledged-positions';
import { SessionStateCache, type InvalidationWatch } from './session-state-cache';
import { checkStrategyFitsSummarizer } from './summarizer-room';
import { tellDecidingOn } from './decision-watch';
import { discardedSummarizerCalls, SummarizerSpend } from '../decider/summarizer-spend';
import { DEFAULT_SESSION_SETTINGS, type SessionSettings } from './auto-compaction';
import { passClaimsHere, SessionClaims } from './session-claims';
import { CompactionAnswered, CompactSessionCommand, SummarizerCallsSpent, type FailedPass } from './compact-session-command';
import { SessionDecisionRecorded } from './session-decision-recorded';

export { CompactionAnswered, CompactSessionCommand, SummarizerCallsSpent, type FailedPass } from './compact-session-command';

/** How many times a pass is planned again after conflicting writes before it answers `conflict`. */
export const MAX_COMPACTION_ATTEMPTS = 4;
/** How many times one pass is rebased onto a newer state (no summarizer call) before it is planned again. */
export const MAX_COMPACTION_REBASES = 32;
/**
 * How long (ms) the answer of a pass that recorded a decision stays shared after the pass ended,
 * with identical requests that read the session at the pass's base revision (before the decision
 * landed) but reach the pass only after it ended (their read answered while the pass was
 * appending; e.g. PostgreSQL answers queued behind the append's).
 */
export const SETTLED_PASS_SHARE_MS = 1000;
/** At most this many ended passes' answers are kept for {@link SETTLED_PASS_SHARE_MS} (the oldest go first). */
const MAX_SETTLED_PASSES = 256;
/** Longest wait (ms) of a pass stopped by an erasure for the erasure's record in the read models, so its 404 says when it was erased. */
const ERASURE_RECORD_WAIT_MS = 2000;

/** Handles {@link CompactSessionCommand} (one pass, see the module doc). */
@CommandHandler(CompactSessionCommand)
export class CompactSessionHandler implements ICommandHandler<CompactSessionCommand, CompactionAnswer> {
  private readonly logger = new Logger('Compaction');
  /** Passes in progress in this process, by {@link compactionIdentity} `passKey`, with the answer they will give. */
  private readonly inFlight = new Map<string, Promise<CompactionAnswer>>();
  /**
   * Passes that recorded a decision and ended less than {@link SETTLED_PASS_SHARE_MS} ago, by
   * `passKey` (base revision included): only a request that read the session before that decision
   * landed can have the key, and the pass is its answer too.
   */
  private readonly settled = new Map<string, CompactionAnswer>();
  /** Passes running now ({@link whenIdle}). */
  private running = 0;
  /** Waiters of {@link whenIdle}. */
  private readonly idle = new Set<() => void>();
  /** The 404s of passes an erasure stopped while they ran (their answer waits for the erasure's record: {@link notFoundAnswer}). */
  private readonly erasedDuringPass = new WeakSet<SessionNotFoundError>();

  constructor(
    @Inject(COMMAND_EVENT_STORE) private readonly store: EventStore,
    private readonly sessions: SessionStateCache,
    @Inject(SUMMARIZER) private readonly summarizer: Summarizer,
    @Optional() private readonly eventBus?: EventBus,
    @Optional() private readonly acknowledged: AcknowledgedPositions = new AcknowledgedPositions(),
    @Optional() @Inject(SESSION_SETTINGS) private readonly settings: Pick<SessionSettings, 'maxTextLength'> = DEFAULT_SESSION_SETTINGS,
    /** Where an erased session's `erasedAt` is read (as `GET /v1/sessions/{id}` reads it); without it, a 404 carries none. */
    @Optional() private readonly readModels?: ReadModelStore,
    /** The session claims of commanded passes that call the summarizer (./session-claims); without it, they run unclaimed. */
    @Optional() private readonly claims?: SessionClaims,
  ) {}

  /**
   * @throws InvalidRequestError (400 `invalid_parameter`) when the strategy's prompts leave too little of the summarizer's input bound for events;
   *   naming `strategy` when the command names none and the session has no policy in force on the state loaded (`compactionOn`: nothing written),
   *   also when the policy was cleared while the pass's summarizer call ran: then with `discardedSummarizerCalls`, those calls
   *   (`withDiscardedSummarizerCalls`), as the 404 below.
   * @throws SessionNotFoundError (404) when the session has no events (also when it was erased
   *   while the pass ran): with `erasedAt` when the id's latest erasure is in the read models, and
   *   `discardedSummarizerCalls` when the pass called the summarizer ({@link notFoundAnswer}).
   * Summarizer faults never throw: they are recorded as a failed compaction. Any other error
   * (e.g. the store failing) is thrown after the summarizer calls the pass made are published
   * ({@link SummarizerCallsSpent} with outcome `error`).
   */
  async execute(command: CompactSessionCommand): Promise<CompactionAnswer> {
    this.running++;
    try {
      return await this.executeOnce(command);
    } finally {
      if (--this.running === 0) {
        for (const resolve of this.idle) resolve();
        this.idle.clear();
      }
    }
  }

  /**
   * Resolves when no pass of this handler runs (at once when none does): the service's shutdown
   * waits for it before Nest's `app.close()`, which unsubscribes the event bus's handlers before
   * anything else waits, so that a pass the shutdown aborted still publishes its answer (its
   * failed-pass log line, its metrics).
   */
  whenIdle(): Promise<void> {
    if (this.running === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  /** {@link execute}'s work. */
  private async executeOnce(command: CompactSessionCommand): Promise<CompactionAnswer> {
    // A compaction by policy takes a policy checked when it was set (PUT …/policy), as automatic passes do.
    if (command.strategy !== null) checkStrategyFitsSummarizer(command.strategy, this.summarizer);
    const spend = new SummarizerSpend();
    let answered: { answer: CompactionAnswer; shared: boolean };
    try {
      answered = await this.answerOnce(command, spend);
    } catch (err) {
      // e.g. erased meanwhile (404) or the store failing the append: the calls made were spent all the same
      spend.discardPending();
      this.publishSpend(command, 'error', spend);
      if (err instanceof SessionNotFoundError) throw await this.notFoundAnswer(command, spend, err.writtenAgain, this.erasedDuringPass.has(err));
      // refused after a model call (by policy, the policy cleared meanwhile): the refusal carries the calls too
      if (err instanceof InvalidRequestError) throw withDiscardedSummarizerCalls(err, discardedSummarizerCalls(this.summarizer.identity, spend.discarded));
      throw err;
    }
    const { answer, shared } = answered;
    const replayed = shared || answer.replayed === true;
    const failedPass: FailedPass | undefined =
      answer.outcome === 'failed' && !replayed && answer.failure && answer.compactionId
        ? {
            tenantId: command.tenantId,
            sessionId: command.sessionId,
            compactionId: answer.compactionId,
            stage: answer.failure.stage,
            reason: answer.failure.reason,
            // a pass of its own (not replayed) always recorded one
            failureKind: answer.failure.failureKind ?? 'other',
          }
        : undefined;
    this.eventBus?.publish(new CompactionAnswered(command.origin, answer.outcome, answer.reason, command.dryRun, replayed, failedPass));
    if (answer.outcome === 'compacted' && command.origin === 'command' && !command.dryRun && !replayed)
      this.eventBus?.publish(new SessionDecisionRecorded(command.tenantId, command.sessionId, 'compacted'));
    this.publishSpend(command, answer.outcome, spend);
    return answer;
  }

  /**
   * The 404 of a pass that found its session gone (never written, or erased, perhaps while the
   * summarizer ran): the erased-session 404 of `GET /v1/sessions/{id}` (`erasedAt` of the id's
   * latest erasure, {@link latestErasure}) carrying the calls the pass made
   * (`discardedSummarizerCalls`: the endpoint served them, their replies went into no decision);
   * `writtenAgain` when the pass found the session written again after the erasure (its message says so);
   * `erasedDuringPass` when the erasure stopped the pass while it ran (aborting its model call): its
   * record may not be projected yet, so it is waited for, at most {@link ERASURE_RECORD_WAIT_MS}.
   */
  private async notFoundAnswer(
    command: CompactSessionCommand,
    spend: SummarizerSpend,
    writtenAgain: boolean,
    erasedDuringPass: boolean,
  ): Promise<SessionNotFoundError> {
    const erasure = () => (this.readModels ? latestErasure(this.readModels, command.tenantId, command.sessionId)?.erasedAt : undefined);
    let erasedAt = erasure();
    // Stopped by the erasure's deletion (its watch aborted the model call): its record follows within milliseconds, then its projection.
    for (const until = Date.now() + ERASURE_RECORD_WAIT_MS; erasedDuringPass && this.readModels && !erasedAt && Date.now() < until; erasedAt = erasure())
      await new Promise((resolve) => setTimeout(resolve, 10));
    return new SessionNotFoundError(command.sessionId, erasedAt, discardedSummarizerCalls(this.summarizer.identity, spend.discarded), writtenAgain);
  }

  /** Publishes what the pass of `command` spent on the summarizer (nothing when it called none, or shared another pass). */
  private publishSpend(command: CompactSessionCommand, outcome: SummarizerCallsSpent['outcome'], spend: SummarizerSpend): void {
    if (!spend.used && !spend.discarded) return;
    this.eventBus?.publish(new SummarizerCallsSpent(command.origin, outcome, this.summarizer.identity, spend.used, spend.discarded));
  }

  /**
   * The answer of the pass of `command` on the session's revision as loaded: the pass of an
   * identical command on that revision in this process when there is one (`shared`): in progress,
   * or ended with a decision recorded less than {@link SETTLED_PASS_SHARE_MS} ago (this request read
   * the session before that decision landed); else a pass of its own, that identical commands
   * arriving meanwhile share. Every sharer gets the same answer (and the same error).
   * `spend` records the summarizer calls of a pass of its own (a shared one records nothing there).
   */
  private async answerOnce(command: CompactSessionCommand, spend: SummarizerSpend): Promise<{ answer: CompactionAnswer; shared: boolean }> {
    const watch = this.sessions.watch(sessionKey(command.tenantId, command.sessionId));
    try {
      const state = await this.load(command);
      // the parameters on this state: the command's, or the policy in force on it (a 400 when there is none)
      const decided = compactionOn(command, state);
      const { passKey } = compactionIdentity(decided, state.revision!, state.incarnation);
      // a copy each: callers may not expect an answer shared with other requests
      const ended = this.settled.get(passKey);
      if (ended) return { answer: sharedAnswerTo(structuredClone(ended), decided), shared: true };
      const running = this.inFlight.get(passKey);
      // An automatic pass whose scheduler holds the session's claim never waits for another pass: that pass may be a
      // command by policy waiting for this very claim (newcomer ncops65 F1: each waited for the other until the
      // command's wait for the claim ran out, 15 s, then it ran unclaimed). It runs on its own; the command, once it
      // has the claim, finds this pass's decision and answers it (`replayed`), no second model call.
      const holdsClaim = command.origin === 'auto' && command.schedulerClaim === 'held';
      if (running && !holdsClaim) return { answer: sharedAnswerTo(structuredClone(await running), decided), shared: true };
      const pass = this.answer(command, decided, state, watch, spend);
      // identical commands arriving meanwhile share this pass (the one already running keeps its sharers)
      if (!running) this.inFlight.set(passKey, pass);
      try {
        const answer = await pass;
        if (answer.recorded && !command.dryRun) this.settle(passKey, answer);
        return { answer, shared: false };
      } finally {
        if (this.inFlight.get(passKey) === pass) this.inFlight.delete(passKey);
      }
    } finally {
      watch.release();
    }
  }

  /** Keeps `answer` of the ended pass `passKey` for {@link SETTLED_PASS_SHARE_MS} (see `settled`). */
  private settle(passKey: string, answer: CompactionAnswer): void {
    if (this.settled.size >= MAX_SETTLED_PASSES) this.settled.delete(this.settled.keys().next().value!);
    this.settled.set(passKey, answer);
    setTimeout(() => {
      if (this.settled.get(passKey) === answer) this.settled.delete(passKey);
    }, SETTLED_PASS_SHARE_MS).unref();
  }

  /**
   * One pass of `request`, planned first on `state` with `decided` (its parameters there,
   * `compactionOn`), answered (its summarizer calls in `spend`) with the parameters it was last
   * decided with.
   */
  private async answer(
    request: CompactSessionCommand,
    decided: CompactSession,
    state: SessionWindowState,
    watch: InvalidationWatch,
    spend: SummarizerSpend,
  ): Promise<CompactionAnswer> {
    const used = { command: decided };
    const conclusion = await this.watchedPass(request, used, state, watch, spend);
    const { command } = used;
    const discarded = discardedSummarizerCalls(this.summarizer.identity, spend.discarded);
    // A replayed decision is answered as recorded: read its events (a few, right before its last one).
    const answer = answerCompaction(
      conclusion.kind === 'replay' ? { ...conclusion, decisionEvents: await this.decisionEvents(command, conclusion.recorded) } : conclusion,
      command,
      discarded,
    );
    // A store that did not tell the position the answer stands on: its head, at or past it.
    const { position } = answer;
    return position !== undefined ? { ...answer, position } : positionedAnswer(answer, await this.store.headPosition());
  }

  /**
   * The pass of `request`, planned first on `loaded` (a private copy) with `used.command` (its
   * parameters there, `compactionOn`), with `watch` on the session: an erasure while the summarizer
   * was called sends the pass back to load and plan again. Each summarizer reply is entered in
   * `spend`: used when its decision is written, else discarded (and the discarded ones recorded
   * with the decision the pass writes, if it writes one). A command by policy takes its parameters
   * anew from each state it is planned on (`compactionOn`: the policy in force there, or a 400 when
   * none is), kept in `used.command` (what the answer is built with), and is never rebased across a
   * change of policy (`policyStillInForce`): it is planned again.
   */
  private async watchedPass(
    request: CompactSessionCommand,
    used: { command: CompactSession },
    loaded: SessionWindowState,
    watch: InvalidationWatch,
    spend: SummarizerSpend,
  ): Promise<CompactionConclusion> {
    const stream = sessionStream(sessionKey(request.tenantId, request.sessionId));
    let state = loaded;
    let command = used.command;
    if (command.redelivered && command.commandId !== undefined) {
      // Decided by an earlier delivery, perhaps before later decisions: answer it, plan nothing.
      const recorded = await this.recordedDecision(command, compactionIdentity(command, state.revision!, state.incarnation).commandCompactionIds);
      if (recorded) return { kind: 'replay', recorded, state };
    }
    // An automatic pass whose policy was changed since the scheduler read it is not this session's pass any more.
    const early = this.abandoned(command, loaded, state, spend);
    if (early) return early;
    // the pass's start: its durationMs covers every attempt, a discarded summarizer call included
    const startedAt = new Date();
    // The session's claim (./session-claims), held from the first plan that calls the summarizer until the pass ends.
    let claim: HeldClaim | null | undefined;
    try {
      for (let attempt = 0; attempt < MAX_COMPACTION_ATTEMPTS; attempt++) {
        // a reply of the attempt before is not used: this one is planned on a newer state (a noop it
        // concludes is then recorded with the calls discarded, recordsSpentNoop, so the log shows them)
        spend.discardPending();
        // planned on `state`: a command by policy takes the policy in force there
        command = used.command = compactionOn(request, state);
        let step = planSessionCompaction(command, state, spend.discarded);
        if (claim === undefined && this.claims && step.kind === 'pass' && passClaimsHere(command, state, step)) {
          const before = state.revision!;
          const waited =
            command.origin === 'auto'
              ? await this.claims.tryWithoutWaiting(command.tenantId, command.sessionId)
              : await this.claims.waitFor(command.tenantId, command.sessionId);
          // An automatic pass never waits: another pass holds the claim, so this one is outrun (`conflict`): its scheduler
          // looks again, finds the trigger firing and the claim held, and waits for it in the background.
          if (waited === 'claimed-elsewhere') {
            spend.discardPending();
            return { kind: 'conflict', state };
          }
          claim = waited.claim;
          // Claimed, or unclaimed after a wait: decided again on the session as the claim's last holder left it (a pass
          // that ended while this one planned included). A store without claims (KurrentDB, in-memory SQLite) goes on as planned.
          if (claim || waited.waitedMs > 0) {
            state = await this.load(request);
            const abandoned = this.abandoned(command, loaded, state, spend);
            if (abandoned) return abandoned;
            command = used.command = compactionOn(request, state);
            const meanwhile = compactionToReplay(state, compactionIdentity(command, state.revision!, state.incarnation).paramsKey, true);
            // The same compaction, decided by another pass since this one read the session: its answer (`replayed`), no model call.
            if (meanwhile && meanwhile.revision > before) return { kind: 'replay', recorded: meanwhile, state };
            step = planSessionCompaction(command, state, spend.discarded);
          }
        }
        if (step.kind === 'conclude') {
          // A transport command sent again with its id after the transport's duplicate window (NATS: 2 minutes) whose
          // pass was recorded then, and that would write nothing now: its decision, not a fresh noop (newcomer ncnats72 F3).
          const recorded = step.conclusion.kind === 'unrecorded' ? await this.recordedEarlier(command, state) : null;
          if (recorded) return { kind: 'replay', recorded, state };
          return await this.withModelCalls(step.conclusion, command);
        }
        // The model calls stop at once when the session is erased meanwhile (watch.signal: by this process, or another once projected),
        // and earlier attempts' calls count against the pass's bound on calls.
        // Between its calls, a pass whose plan another decision has made unwritable stops there and is planned again (newcomer ncrecheck63 F7).
        const [planned, plannedOn, deciding] = [step.pass, state, command];
        const beforeNextCall = () => this.stopIfSuperseded(request, deciding, loaded, plannedOn, planned, watch);
        const summary = planned.plan.summaryRequest
          ? await this.summarize(planned.plan.summaryRequest, command, watch.signal, spend, beforeNextCall)
          : undefined;
        if (summary) spend.called(summary);
        if (watch.invalidated) {
          // Erased meanwhile (perhaps re-created up to the same revision), or stopped between its calls by a decision its plan
          // cannot be rebased onto (stopIfSuperseded): nothing of what was planned may be written.
          watch.rearm();
          state = await this.load(request).catch((err: unknown) => {
            // Its 404 is answered with the erasure's time, which the erasure records right after the deletion that stopped this pass.
            if (err instanceof SessionNotFoundError) this.erasedDuringPass.add(err);
            throw err;
          });
          const abandoned = this.abandoned(command, loaded, state, spend);
          if (abandoned) return abandoned;
          continue;
        }
        let [current, pass] = [state, step.pass];
        const passId = randomUUID();
        for (let rebase = 0; rebase < MAX_COMPACTION_REBASES; rebase++) {
          const context = { now: new Date(), startedAt, summarizer: this.summarizer.identity, passId, discarded: spend.discarded };
          const decision = decideCompaction(command, current, pass, summary, context);
          try {
            // In the life the pass was planned in (rebases stay in it): an erasure since then is refused, whatever the revision.
            const appended = await this.store.appendToStream(stream, decision.events, {
              expectedRevision: current.revision!,
              incarnation: current.incarnation,
            });
            spend.usePending();
            this.sessions.appended(sessionKey(command.tenantId, command.sessionId), current.revision, decision.events, appended, new Date());
            return { kind: 'recorded', decision, revision: appended.nextExpectedRevision, position: appended.position };
          } catch (err) {
            if (!(err instanceof DuplicateEventIdError) && !(err instanceof WrongExpectedRevisionError)) throw err;
            state = await this.load(request);
            if (err instanceof DuplicateEventIdError) {
              // The same compaction was decided concurrently (or this transport command was delivered again): answer with it.
              const own = command.commandId === undefined ? null : await this.recordedDecision(command, [pass.compactionId]);
              const recorded = own ?? compactionToReplay(state, pass.paramsKey, true);
              if (recorded) {
                // this pass's reply is in no decision: the one answered is another pass's
                spend.discardPending();
                return { kind: 'replay', recorded, state };
              }
              // None found: planned again on `state`, unless (erased since, or automatic and its policy changed) the pass is abandoned.
              const abandonedOnDuplicate = this.abandoned(command, loaded, state, spend);
              if (abandonedOnDuplicate) return abandonedOnDuplicate;
              break;
            }
            // Erased (and written again) since it began, or (automatic) its policy changed: abandoned, never rebased.
            const abandoned = this.abandoned(command, loaded, state, spend);
            if (abandoned) return abandoned;
            // By policy, and the policy was replaced or cleared meanwhile: planned again with the one in force now (or refused).
            if (!policyStillInForce(command, state)) break;
            const rebased = rebaseCompaction(pass, current, state, command.estimator);
            if (!rebased) break;
            [current, pass] = [state, rebased];
          }
        }
      }
      spend.discardPending();
      return { kind: 'conflict', state: await this.load(request) };
    } finally {
      if (claim) await this.claims!.release(claim, command.tenantId, command.sessionId);
    }
  }

  /**
   * Null when the pass of `command`, begun on `firedOn`, may still write onto `state`
   * ({@link passAuthority}); else the pass is abandoned and its pending summarizer reply discarded
   * (its usage in `spend.discarded`: the answer's `discardedSummarizerCalls`, and the metrics'
   * discarded calls): a `conflict` conclusion on `state` when an automatic pass's policy is no
   * longer in force (nothing written; the scheduler looks at the current policy again).
   * @throws SessionNotFoundError when `state` is another life of the session (erased since the
   *   pass began, and written again): the 404 of an erased session, with the discarded calls.
   */
  private abandoned(command: CompactSession, firedOn: SessionWindowState, state: SessionWindowState, spend: SummarizerSpend): CompactionConclusion | null {
    const authority = passAuthority(command, firedOn, state);
    if (authority === 'authorised') return null;
    spend.discardPending();
    // `state` is the session's new life (abandoned() is only asked with a loaded state): it was written again since.
    if (authority === 'erased') throw new SessionNotFoundError(command.sessionId, undefined, undefined, true);
    return { kind: 'conflict', state };
  }

  /**
   * Asked between a pass's model calls: invalidates `watch` (the summarizer makes no further call, and
   * the pass is planned again, or abandoned, as after an erasure) when the pass planned on `plannedOn`
   * could not be written any more: the session erased, the command's authority or policy gone
   * ({@link passAuthority}, `policyStillInForce`), or another decision landed that `pass` cannot be
   * rebased onto (`rebaseCompaction`). Before, such a pass sent its remaining chunks to the model, then
   * discarded every reply (newcomer ncrecheck63 F7). Turns appended meanwhile are what a rebase takes
   * in: the pass goes on. A store that fails the read lets it go on (its append decides, as before).
   */
  private async stopIfSuperseded(
    request: CompactSessionCommand,
    command: CompactSession,
    firedOn: SessionWindowState,
    plannedOn: SessionWindowState,
    pass: PlannedCompaction,
    watch: InvalidationWatch,
  ): Promise<void> {
    let now: SessionWindowState | null;
    try {
      now = await this.sessions.load(sessionKey(request.tenantId, request.sessionId));
    } catch {
      return;
    }
    if (watch.invalidated) return;
    if (now?.revision === plannedOn.revision && now.incarnation === plannedOn.incarnation) return;
    const holds =
      now !== null &&
      now.revision !== null &&
      passAuthority(command, firedOn, now) === 'authorised' &&
      policyStillInForce(command, now) &&
      rebaseCompaction(pass, plannedOn, now, command.estimator) !== null;
    if (!holds) watch.invalidate();
  }

  /**
   * The decision of transport command `command` (one with a `commandId`, delivered for the first time: a redelivery
   * looked before planning) when it was recorded earlier in the session's current life, or null. Asked when its pass
   * would write nothing now: the same command id sent again after the transport's duplicate window (the docs tell a
   * client whose answer was lost to resend it with the same id) is answered with what it did. The read models are
   * asked first (one indexed lookup per id form), the log read only for a decision they hold; without read models, null.
   */
  private async recordedEarlier(command: CompactSession, state: SessionWindowState): Promise<RecordedCompaction | null> {
    if (command.commandId === undefined || command.redelivered || command.dryRun || !this.readModels) return null;
    const ids = compactionIdentity(command, state.revision!, state.incarnation).commandCompactionIds;
    if (!holdsCompaction(this.readModels, command.tenantId, command.sessionId, ids)) return null;
    return this.recordedDecision(command, ids);
  }

  /** The decision recorded under one of `compactionIds` (its forms, see `commandCompactionIds`) in the session's log (the newest, read backwards), or null. */
  private async recordedDecision(command: CompactSession, compactionIds: readonly string[]): Promise<RecordedCompaction | null> {
    const stream = sessionStream(sessionKey(command.tenantId, command.sessionId));
    const found = await findInStream(this.store, stream, (e) => compactionIds.includes(recordedCompactionOf(e)?.compactionId ?? ''));
    return found && recordedCompactionOf(found);
  }

  /** The events of the recorded decision `recorded` (appended at once after its base revision, up to its last event). */
  private async decisionEvents(command: CompactSession, recorded: RecordedCompaction): Promise<RecordedEvent[]> {
    const from = BigInt(recorded.basedOnRevision) + 1n;
    if (recorded.revision < from) return [];
    return this.store.readStream(sessionStream(sessionKey(command.tenantId, command.sessionId)), {
      fromRevision: from,
      maxCount: Number(recorded.revision - from + 1n),
    });
  }

  /**
   * A private copy of the session's state. The cache folds newer events into its shared object in
   * place, so a pass that kept that object across the summarizer call would see its base revision
   * move and append a stale decision at the newest revision, bypassing the expected-revision check.
   * @throws SessionNotFoundError when the session has no events.
   */
  private async load(command: CompactSessionCommand): Promise<SessionWindowState> {
    const state = await this.sessions.load(sessionKey(command.tenantId, command.sessionId));
    tellDecidingOn(command, state);
    if (!state || state.revision === null) {
      await this.acknowledged.acknowledgeHead(this.store);
      throw new SessionNotFoundError(command.sessionId);
    }
    return cloneSessionWindow(state);
  }

  /**
   * `conclusion`, and for the dry run of a pass that would call the model, the calls it would make as
   * planned now and the bound on them (`Summarizer.plannedCalls`): the preview of its cost, and of a
   * `call_limit` failure. Other conclusions as they are.
   */
  private async withModelCalls(conclusion: CompactionConclusion, command: CompactSession): Promise<CompactionConclusion> {
    if (conclusion.kind !== 'dry-run' || !conclusion.plan.summaryRequest || !this.summarizer.plannedCalls) return conclusion;
    const modelCalls = await this.summarizer.plannedCalls(conclusion.plan.summaryRequest, { estimator: getEstimator(command.estimator) });
    return modelCalls ? { ...conclusion, modelCalls } : conclusion;
  }

  /**
   * The summarizer's outcome, the one place every pass (HTTP, NATS, automatic) gets its summary:
   * a text longer than the longest text an event may hold (`settings.maxTextLength`) becomes a
   * failure whatever the summarizer (`replyRefusal`: not valid Unicode, or too long; kind `invalid_reply`), and a programming error thrown by it
   * one too (kind `other`; recorded, never half-applied; DESIGN §3.7).
   */
  private async summarize(
    request: SummaryRequest,
    command: CompactSession,
    signal: AbortSignal,
    spend: SummarizerSpend,
    beforeNextCall?: () => Promise<void>,
  ): Promise<SummarizerOutcome> {
    const { maxTextLength } = this.settings;
    let outcome: SummarizerOutcome;
    // the calls of this pass's earlier attempts (retries aside), discarded when it planned again
    const callsSpent = Math.max(0, (spend.discarded?.calls ?? 0) - (spend.discarded?.retries ?? 0));
    try {
      // the session's estimator: the unit of the request's summary budget
      outcome = await this.summarizer.summarize(request, { estimator: getEstimator(command.estimator), maxTextLength, signal, callsSpent, beforeNextCall });
    } catch (err) {
      this.logger.warn(`summarizer threw: ${(err as Error).name}`);
      return { ok: false, reason: `summarizer error: ${(err as Error).name}`, failureKind: 'other', calls: 1, promptTokens: 0, completionTokens: 0 };
    }
    const refused = outcome.ok ? replyRefusal(outcome.text, maxTextLength) : undefined;
    if (!refused) return outcome;
    const { calls, promptTokens, completionTokens } = outcome;
    return { ok: false, reason: refused, failureKind: 'invalid_reply', calls, promptTokens, completionTokens };
  }
}
