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
 */
import { Inject, Injectable, Logger } from '@nestjs/common';
import { DEFAULT_MAX_TEXT_LENGTH } from '@lib/compaction';
import { CommandBus, EventBus, EventsHandler, type IEventHandler } from '@nestjs/cqrs';
import { sessionKey } from '../events/session-stream-events';
import { SESSION_SETTINGS } from '../tokens';
import { CompactSessionCommand } from './compact-session-command';
import type { CompactionAnswer } from '../decider/compaction-answer';
import { autoPassDue } from '../decider/compaction-decider';
import { SessionEventsAppended } from './append-session-events';
import { SessionStateCache } from './session-state-cache';
import { SessionNotFoundError } from '../errors';
import { AutoCompactionBackoff } from './auto-compaction-backoff';

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
}

/** Defaults of {@link SessionSettings}. */
export const DEFAULT_SESSION_SETTINGS: SessionSettings = {
  autoCompactionMaxFailures: 3,
  autoCompactionBackoffMs: 30_000,
  maxTextLength: DEFAULT_MAX_TEXT_LENGTH,
};

/** Published when an automatic compaction is skipped until the window grows (DESIGN §3.5). */
export class AutoCompactionDeferred {
  constructor(
    readonly tenantId: string,
    readonly sessionId: string,
  ) {}
}

/** Runs policy compactions in the background after appends, one at a time per session, with backoff. */
@Injectable()
@EventsHandler(SessionEventsAppended)
export class AutoCompactionScheduler implements IEventHandler<SessionEventsAppended> {
  private readonly logger = new Logger('AutoCompaction');
  /** Sessions with a run in progress → whether another run was requested meanwhile. */
  private readonly running = new Map<string, { again: boolean; tenantId: string; sessionId: string }>();
  /** Sessions backing off after failed compactions (their entering and leaving logged). */
  private readonly backoff: AutoCompactionBackoff;
  private readonly idle = new Set<() => void>();

  constructor(
    private readonly commandBus: CommandBus,
    private readonly sessions: SessionStateCache,
    @Inject(SESSION_SETTINGS) private readonly settings: SessionSettings,
    private readonly eventBus: EventBus,
  ) {
    this.backoff = new AutoCompactionBackoff(settings, this.logger);
  }

  handle(event: SessionEventsAppended): void {
    if (!event.hasPolicy) return;
    const key = sessionKey(event.tenantId, event.sessionId);
    const run = this.running.get(key);
    if (run) {
      run.again = true;
      return;
    }
    this.running.set(key, { again: false, tenantId: event.tenantId, sessionId: event.sessionId });
    void this.loop(key);
  }

  /** Number of sessions with an automatic compaction in progress. */
  get inProgress(): number {
    return this.running.size;
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
        await this.runOnce(key, run.tenantId, run.sessionId);
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

  private async runOnce(key: string, tenantId: string, sessionId: string): Promise<void> {
    try {
      const state = await this.sessions.load(key);
      const policy = state?.policy;
      if (!state || !policy?.strategy) return this.backoff.forget(key, tenantId, sessionId, state ? 'its policy was removed' : 'the session has no events');
      if (!this.backoff.mayRun(key, tenantId, sessionId, state.consecutiveFailures)) return;
      const command = new CompactSessionCommand(tenantId, sessionId, policy.strategy, policy.trigger, policy.estimator, false, 'auto');
      // Waiting for growth since the last recorded automatic pass that left the trigger firing (DESIGN §3.5).
      if (!autoPassDue(command, state)) {
        this.eventBus.publish(new AutoCompactionDeferred(tenantId, sessionId));
        return;
      }
      const answer: CompactionAnswer = await this.commandBus.execute(command);
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
        this.backoff.forget(key, tenantId, sessionId, 'the session was erased');
      } else this.logger.warn(`auto-compaction of a session failed: ${(err as Error).name}: ${(err as Error).message}`);
    }
  }
}
