/**
 * Auto-compaction (issue 4 item 3, issue 7 item 4): after an append to a session that has a
 * policy, a compaction with the policy's strategy and trigger runs in the background, one at a
 * time per session (appends arriving meanwhile cause exactly one more run afterwards). The append's
 * response never waits for it. After `maxConsecutiveFailures` failed compactions in a row, the
 * session backs off: the next automatic attempt waits `backoffMs × 2^(failures − max)` (capped at
 * one hour) after the last failure instead of calling the model on every append
 * ({@link AutoCompactionBackoff}: its clock lives in the process; entering and leaving are logged).
 *
 * Progress or wait (DESIGN §3.5): the rule is the decider's `autoPassDue`, read from the session's
 * log. After an automatic pass that leaves the policy's trigger firing (the part no strategy may
 * archive is already over it) — a compaction, or a `noop`, which the decider then records as a
 * decision with `triggerStillFires` — the next automatic pass waits until the window has grown by
 * a quarter of the token threshold or of the turn limit, or until a pass planned on the window
 * could bring it under the trigger; a skipped run publishes {@link AutoCompactionDeferred} and
 * writes nothing. The wait is derived from the recorded decision only, so a restart and every
 * replica keep it, and a policy that cannot be met leaves one recorded noop per wait period.
 *
 * One pass per session across replicas (a store with `EventStore.tryClaim`: PostgreSQL, SQLite on a file): a pass
 * whose trigger fires claims the session (./session-claims: the claim commanded passes take too) before it plans,
 * and holds the claim until it has answered. A replica that finds the claim held by another
 * replica does not start a pass of its own for the same trigger (that would call the model for a
 * decision the store then refuses as a duplicate): it publishes {@link AutoCompactionClaimedElsewhere}
 * once and looks again every `compactionClaimPollMs` until the claim is free, then runs as after
 * any append (after `autoCompactionClaimMaxWaitMs` it runs unclaimed, with a warn line): on the log as the other replica's decision left it, so it calls the model only when
 * the trigger still fires (the other pass failed, was a noop on an older window, or its replica
 * died: the server, or on SQLite the OS, drops a dead replica's claim). So no session stays over its trigger with
 * nobody compacting it. When the store cannot be asked (the claims connection lost), the pass asks
 * again itself before it calls the model (`schedulerClaim` `failed`, ./session-claims `passClaimsHere`):
 * held elsewhere, it calls none and the scheduler waits as above; still not asked, it runs unclaimed
 * with one warn line. A store without claims runs every pass unclaimed (KurrentDB; a private in-memory SQLite store).
 *
 * A pass is written only while the policy that fired it is in force and its session's life is the
 * one it began in (`passAuthority`): one abandoned because the policy was turned off or replaced
 * meanwhile answers `conflict` (nothing written) and the scheduler looks at the policy now in
 * force once more; one whose session was erased meanwhile ends with the session's 404.
 */
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { DEFAULT_MAX_TEXT_LENGTH } from '@lib/compaction';
import { CommandBus, EventBus, EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { inThisContext, type InContext } from '../async-context';
import { sessionKey } from '../events/session-stream-events';
import { SESSION_SETTINGS } from '../tokens';
import { DEFAULT_CLAIM_MAX_WAIT_MS, DEFAULT_CLAIM_POLL_MS, DEFAULT_COMMAND_CLAIM_MAX_WAIT_MS, passTakesClaim, SessionClaims } from './session-claims';
import { CompactSessionCommand, type SchedulerClaim } from './compact-session-command';
import type { CompactionAnswer } from '../decider/compaction-answer';
import { autoPassDue } from '../decider/compaction-decider';
import { SessionEventsAppended } from './append-session-events';
import { SessionStateCache } from './session-state-cache';
import { SessionNotFoundError } from '../errors';
import { AutoCompactionBackoff } from './auto-compaction-backoff';
import { SessionDecisionRecorded } from './session-decision-recorded';
import { PerSessionLineLimit } from './per-session-line-limit';

/** Settings of the write side. Durations in milliseconds. */
export interface SessionSettings {
  /** Consecutive failed compactions after which auto-compaction backs off (default 3). */
  autoCompactionMaxFailures: number;
  /** Base backoff after that many failures (default 30000 ms). */
  autoCompactionBackoffMs: number;
  /**
   * Longest text of one event, in characters (Unicode code points): the service's `MAX_TEXT_LENGTH`
   * (default {@link DEFAULT_MAX_TEXT_LENGTH}, 1,000,000). A summary longer than it fails its pass
   * (`replyLengthRefusal`, DESIGN §3.7).
   */
  maxTextLength: number;
  /**
   * How often (ms) a pass that found its session claimed by another pass (another replica's, or a
   * commanded one) looks again (`COMPACTION_CLAIM_POLL_MS`, default {@link DEFAULT_CLAIM_POLL_MS});
   * see ./session-claims.
   */
  compactionClaimPollMs: number;
  /**
   * The longest (ms) an automatic pass waits for its session's claim before it runs unclaimed
   * (`AUTO_COMPACTION_CLAIM_MAX_WAIT_MS`, default {@link DEFAULT_CLAIM_MAX_WAIT_MS}): a bound on
   * the wait whatever holds the claim (a pass still calling the model, a claim a connection pooler kept).
   */
  autoCompactionClaimMaxWaitMs: number;
  /**
   * The longest (ms) a commanded pass (HTTP, NATS) waits for its session's claim before it runs
   * unclaimed (`COMPACTION_CLAIM_MAX_WAIT_MS`, default {@link DEFAULT_COMMAND_CLAIM_MAX_WAIT_MS};
   * the service keeps it under `REQUEST_TIMEOUT_MS`). The request waits with it.
   */
  compactionCommandClaimMaxWaitMs: number;
}

/** Defaults of {@link SessionSettings}. */
export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  autoCompactionMaxFailures: 3,
  autoCompactionBackoffMs: 30_000,
  maxTextLength: DEFAULT_MAX_TEXT_LENGTH,
  compactionClaimPollMs: DEFAULT_CLAIM_POLL_MS,
  autoCompactionClaimMaxWaitMs: DEFAULT_CLAIM_MAX_WAIT_MS,
  compactionCommandClaimMaxWaitMs: DEFAULT_COMMAND_CLAIM_MAX_WAIT_MS,
};

/** Why a session's auto-compaction backoff ended, by the decision that ended it (the end of its "leaves backoff" line). */
const BACKOFF_ENDED_BECAUSE: Record<SessionDecisionRecorded['decision'], string> = {
  compacted: 'a compaction succeeded',
  'policy-cleared': 'its policy was removed',
  erased: 'the session was erased',
};

/** Published when an automatic compaction is skipped until the window grows (DESIGN §3.5). */
export class AutoCompactionDeferred {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
  ) {}
}

/**
 * Published when an automatic pass is put off because another replica holds the session's claim
 * (once per wait: the looks again while it lasts are not published).
 */
export class AutoCompactionClaimedElsewhere {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
  ) {}
}

/** A session's automatic compaction in this process: another run requested meanwhile, and whether it waits for another replica's claim. */
interface SessionRun {
  again: boolean;
  tenantId: string;
  sessionId: string;
  /** True while the session's claim is held by another replica (from the first refusal to the next run that gets past it). */
  waiting: boolean;
  /** When (ms since epoch) the wait began (meaningful while `waiting`). */
  waitingSince: number;
  /**
   * Runs a function in the async context of the append that last asked for a pass (its request's
   * logger, so a pass's log lines carry that request's id): a run's later passes were made in the
   * context of the append that started the run, their lines carrying its id (newcomer ncllmfaults F7).
   */
  inRequester: InContext;
}

/** Runs policy compactions in the background after appends, one at a time per session, with backoff. */
@Injectable()
@EventsHandler(SessionEventsAppended, SessionDecisionRecorded)
export class AutoCompactionScheduler implements IEventHandler<SessionEventsAppended | SessionDecisionRecorded> {
  private readonly logger = new Logger('AutoCompaction');
  /** The unmet-trigger lines of {@link warnIfUnmet}: at most one per session a minute. */
  private readonly unmetLines = new PerSessionLineLimit();
  /** Sessions with a run in progress → whether another run was requested meanwhile. */
  private readonly running = new Map<string, SessionRun>();
  /** Set at shutdown: sessions waiting for another replica's claim stop waiting (that replica compacts them). */
  private stopping = false;
  /** Wakes the waits of `running` sessions at shutdown. */
  private readonly wake = new Set<() => void>();
  /** Sessions backing off after failed compactions (their entering and leaving logged). */
  private readonly backoff: AutoCompactionBackoff;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly commandBus: CommandBus,
    private readonly sessions: SessionStateCache,
    @Inject(SESSION_SETTINGS) private readonly settings: SessionSettings,
    private readonly eventBus: EventBus,
    /** Where automatic passes are claimed across replicas (./session-claims); without claims, passes run unclaimed. */
    @Optional() private readonly claims: SessionClaims = new SessionClaims(settings),
  ) {
    this.backoff = new AutoCompactionBackoff(settings, this.logger);
  }

  handle(event: SessionEventsAppended | SessionDecisionRecorded): void {
    if (event instanceof SessionDecisionRecorded) return this.decisionRecorded(event);
    if (!event.hasPolicy) return;
    const key = sessionKey(event.tenantId, event.sessionId);
    const run = this.running.get(key);
    if (run) {
      run.again = true;
      run.inRequester = inThisContext();
      return;
    }
    this.running.set(key, {
      again: false,
      tenantId: event.tenantId,
      sessionId: event.sessionId,
      waiting: false,
      waitingSince: 0,
      inRequester: inThisContext(),
    });
    void this.loop(key);
  }

  /**
   * A decision recorded in this process that ends the session's backoff at once, its line logged: a pass compacted
   * (its failures in a row are 0 again), its policy cleared (no automatic pass to back off), the session erased.
   */
  private decisionRecorded({ tenantId, sessionId, decision }: SessionDecisionRecorded): void {
    this.backoff.forget(sessionKey(tenantId, sessionId), tenantId, sessionId, BACKOFF_ENDED_BECAUSE[decision]);
  }

  /** Number of sessions with an automatic compaction in progress here (not those waiting for another replica's claim). */
  get inProgress(): number {
    let waiting = 0;
    for (const run of this.running.values()) if (run.waiting) waiting++;
    return this.running.size - waiting;
  }

  /** Number of sessions whose automatic pass waits because another replica holds its claim. */
  get waitingForClaim(): number {
    return this.running.size - this.inProgress;
  }

  /** At shutdown: sessions waiting for another replica's claim stop waiting (the passes in progress finish; see {@link whenIdle}). */
  stopWaiting(): void {
    this.stopping = true;
    for (const wake of this.wake) wake();
    this.wake.clear();
  }

  /** Number of sessions in auto-compaction backoff (their failures in a row at the limit or over), as this process knows them. */
  get backingOff(): number {
    return this.backoff.size;
  }

  /** Resolves when no automatic compaction is running (for tests and graceful shutdown). */
  whenIdle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.add(resolve));
  }

  private async loop(key: string): Promise<void> {
    try {
      for (;;) {
        const run = this.running.get(key)!;
        run.again = false;
        const unclaimed = run.waiting && Date.now() - run.waitingSince >= this.settings.autoCompactionClaimMaxWaitMs;
        const outcome = await run.inRequester(() => {
          if (unclaimed)
            this.logger.warn(
              `auto-compaction of session ${JSON.stringify(run.sessionId)} (tenant ${JSON.stringify(run.tenantId)}) runs unclaimed: another pass (another replica's, or a command's) has held its claim for ${this.settings.autoCompactionClaimMaxWaitMs} ms or more`,
            );
          return this.runOnce(key, run.tenantId, run.sessionId, unclaimed);
        });
        if (outcome === 'claimed-elsewhere') {
          if (!run.waiting) {
            this.eventBus.publish(new AutoCompactionClaimedElsewhere(run.tenantId, run.sessionId));
            run.waitingSince = Date.now();
          }
          run.waiting = true;
          if (this.stopping || !(await this.pause(this.settings.compactionClaimPollMs))) break;
          continue;
        }
        run.waiting = false;
        if (!run.again) break;
      }
    } finally {
      this.running.delete(key);
      if (this.running.size === 0) {
        for (const resolve of this.idle) resolve();
        this.idle.clear();
      }
    }
  }

  /** Waits `ms`; false when the shutdown ended the wait. */
  private pause(ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const wake = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.wake.delete(wake);
        resolve(!this.stopping);
      }, ms);
      this.wake.add(wake);
    });
  }

  /**
   * One warn line for a recorded automatic pass that leaves the trigger firing: a `compacted` one (what the strategy keeps,
   * summaries included, is over the trigger; it says to keep less or raise the trigger), and a `noop`: a policy that
   * cannot be met (DESIGN §3.5; recorded once per wait period, so at most one line per period per
   * session), saying why nothing could be archived and what to change. At most one such line per session a minute
   * ({@link PerSessionLineLimit}); the next one written says how many were not:
   * - `open-tool-call`: a tool call's turn holds the cut back. When that call is the session's
   *   first, answered long ago, the cause is usually writers that append tool answers after another
   *   writer's next user message, which pins the whole session (see docs/http-api.md, Compactions);
   * - `within-limit`: the strategy finds nothing to archive, so what it keeps is over the trigger:
   *   the trigger asks for a smaller window than the strategy leaves;
   * - `newest-turn-only`: the window is its newest turn alone (with pinned system messages), which
   *   no strategy archives.
   * `estimator`: the policy's, naming the unit of the window's size.
   */
  private warnIfUnmet(tenantId: string, sessionId: string, answer: CompactionAnswer, estimator: string): void {
    if (!answer.recorded || answer.triggerStillFires !== true) return;
    if (answer.outcome !== 'compacted' && answer.outcome !== 'noop') return;
    // At most one such line per session a minute (a busy session ran a pass, and wrote a line, after nearly every append).
    const withheld = this.unmetLines.admit(sessionKey(tenantId, sessionId));
    if (withheld === null) return;
    const also = withheld > 0 ? ` (${withheld} more such line(s) for this session in the minute before this one were not written)` : '';
    const unit = estimator === 'chars' ? 'UTF-16 code units' : `${estimator} tokens`;
    const who = `session ${JSON.stringify(sessionId)} (tenant ${JSON.stringify(tenantId)})`;
    if (answer.outcome === 'compacted') {
      // Archived, but what it keeps (summaries included) is still over the trigger (newcomer ncpg67 F1: recursive summaries of the
      // extractive summarizer cost about what they replace, 18 passes in 60 turns, each saving a few tokens, without a word).
      this.logger.warn(
        `${who} is still over its trigger after its automatic pass (${answer.tokensAfter} ${unit} in the window after it): what the strategy keeps, summaries included, is over the trigger; keep less (a lower maxEvents, maxTurns, maxTokens or maxEventsToKeep, fewer keepTurns, a lower summarizeAtTokens) or raise the trigger (a recursive-summarization summary may cost as much as what it replaces, and the built-in extractive summarizer's does, up to its bound: rolling-summary holds its summary to half of summarizeAtTokens); the next automatic pass waits for the window to grow (DESIGN §3.5)${also}`,
      );
      return;
    }
    const session = `${who} is over its trigger and its automatic pass archived nothing`;
    const size = `${answer.tokensBefore} ${unit} in the window`;
    const why =
      answer.reason === 'open-tool-call'
        ? `tool call ${JSON.stringify(answer.toolCallId)} (event ${JSON.stringify(answer.eventId)}) holds the cut back (open-tool-call; ${size}). If that call was answered long ago, a tool answer was appended after a later user message (writers interleaving answers and user messages pin the session from that call on): post each tool answer before the session's next user message, or give each worker its own session`
        : answer.reason === 'newest-turn-only'
          ? `the window is its newest turn alone, with the pinned system messages (newest-turn-only; ${size}), and the newest turn is never archived: it stays over the trigger until a user message starts the next turn; raise the trigger above the size of one turn`
          : `the strategy finds nothing to archive (within-limit; ${size}): what it keeps is over the trigger, so the trigger asks for a smaller window than the strategy leaves; keep less (a lower maxEvents, maxTurns, maxTokens or maxEventsToKeep, fewer keepTurns, a lower summarizeAtTokens) or raise the trigger`;
    this.logger.warn(`${session}: ${why}; the next automatic pass waits for the window to grow (DESIGN §3.5)${also}`);
  }

  /** One automatic pass of the session (`unclaimed`: without asking for its claim, after the longest wait for it). */
  private async runOnce(key: string, tenantId: string, sessionId: string, unclaimed = false): Promise<'claimed-elsewhere' | void> {
    try {
      const state = await this.sessions.load(key);
      const policy = state?.policy;
      if (!state || !policy?.strategy)
        return this.backoff.forget(key, tenantId, sessionId, state ? BACKOFF_ENDED_BECAUSE['policy-cleared'] : 'the session has no events');
      if (!this.backoff.mayRun(key, tenantId, sessionId, state.consecutiveFailures)) return;
      const fields = [tenantId, sessionId, policy.strategy, policy.trigger, policy.estimator, false, 'auto'] as const;
      const command = new CompactSessionCommand(...fields);
      // Waiting for growth since the last recorded automatic pass that left the trigger firing (DESIGN §3.5).
      if (!autoPassDue(command, state)) {
        this.eventBus.publish(new AutoCompactionDeferred(tenantId, sessionId));
        return;
      }
      // A pass that may call the model runs on one replica at a time: the claim is taken before planning and held until answered.
      const asked = !unclaimed && passTakesClaim(command, state);
      const claim = asked ? await this.claims.tryClaimForScheduler(tenantId, sessionId) : null;
      if (claim === 'claimed-elsewhere') return 'claimed-elsewhere';
      const held = claim === 'failed' ? null : claim;
      // Told to the pass: not asked here (the trigger did not fire on this state), or asked and the store could not be
      // asked (`failed`), it claims the session itself when its plan, on the state it loads (perhaps newer: another
      // replica appended meanwhile), calls the model (passClaimsHere).
      const schedulerClaim: SchedulerClaim | undefined = held ? 'held' : claim === 'failed' ? 'failed' : unclaimed || asked ? 'waived' : undefined;
      let answer: CompactionAnswer;
      try {
        answer = await this.commandBus.execute(new CompactSessionCommand(...fields, undefined, false, undefined, schedulerClaim));
      } finally {
        if (held) await this.claims.release(held, tenantId, sessionId);
      }
      if (!answer.replayed) this.warnIfUnmet(tenantId, sessionId, answer, policy.estimator);
      // Abandoned (its policy changed while it ran) or outrun by appends: the policy now in force is looked at again.
      if (answer.outcome === 'conflict') {
        const run = this.running.get(key);
        if (run) run.again = true;
      }
      if (!answer.replayed) {
        const after = answer.outcome === 'failed' ? await this.sessions.load(key) : null;
        // A pass the service's shutdown aborted is recorded failed, but it is not the model's failure (the log does not count it either).
        const decision = after?.lastCompaction;
        const interrupted = decision?.compactionId === answer.compactionId && decision?.failure?.interrupted !== undefined;
        this.backoff.passed(key, tenantId, sessionId, interrupted ? 'interrupted' : answer.outcome, after?.consecutiveFailures ?? 0);
      }
    } catch (err) {
      // The session was erased meanwhile: nothing to compact, and nothing went wrong.
      if (err instanceof SessionNotFoundError) {
        this.logger.debug(`auto-compaction skipped: ${err.message}`);
        this.backoff.forget(key, tenantId, sessionId, BACKOFF_ENDED_BECAUSE.erased);
      } else this.logger.warn(`auto-compaction of a session failed: ${(err as Error).name}: ${(err as Error).message}`);
    }
  }
}
