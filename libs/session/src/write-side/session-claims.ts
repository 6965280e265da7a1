/**
 * The claim of a session's model-calling compaction pass across replicas (a store with
 * `EventStore.tryClaim`: PostgreSQL, SQLite on a file). One rule for every pass, automatic or commanded: a pass
 * that may call the summarizer holds its session's claim from before it plans on the state it
 * will decide on until it has answered, so two replicas never call the model for one decision.
 * Passes that never call the model (a `sliding-window` or `turn-window` plan, a dry run, a
 * `not-triggered` or `noop` answer) take no claim: done twice at once they cost nothing but a
 * refused duplicate append (the store's expected-revision and event-id checks keep the log right).
 *
 * - Automatic passes ({@link AutoCompactionScheduler}) claim when their trigger fires and never
 *   block on a claim held elsewhere: they look again every `compactionClaimPollMs`, at most
 *   `autoCompactionClaimMaxWaitMs`, in the background.
 * - Commanded passes (HTTP, NATS; `CompactSessionHandler`) claim when their plan asks for a
 *   summary; held elsewhere, the command waits for it (a query every `compactionClaimPollMs`, at
 *   most `compactionCommandClaimMaxWaitMs`), then decides again on the session as the other pass
 *   left it (see the handler).
 *
 * A claim is released in a `finally` when the pass ends, whatever became of the request (a client
 * that disconnected included); the server (PostgreSQL) or the OS (SQLite: a file lock) drops a dead replica's claims.
 */
import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import type { EventStore, HeldClaim } from '@lib/event-store';
import { EVENT_STORE, SESSION_SETTINGS } from '../tokens';
import type { SessionSettings } from './auto-compaction';
import { autoTriggerFires, type CompactionStep, type CompactSession } from '../decider/compaction-decider';
import type { SessionWindowState } from '../domain/session-window';
import type { SchedulerClaim } from './compact-session-command';
import { sessionKey, sessionStream } from '../events/session-stream-events';

/**
 * The name of the claim of a session's passes (`EventStore.tryClaim`). The text is the one the
 * automatic passes of the 2026-12-03 release claim, so replicas of both releases exclude each other.
 */
export function sessionClaimName(tenantId: string, sessionId: string): string {
  return `auto-compaction ${JSON.stringify([tenantId, sessionId])}`;
}

/**
 * The rule (see the module doc): whether a pass of `command` on `state` takes its session's claim,
 * i.e. may call the summarizer. A dry run never does (it never calls the model). An automatic
 * pass: when its trigger fires on `state` (asked before it plans, so that it plans on the state
 * the claim protects: the scheduler then runs the whole pass under the claim). A commanded pass:
 * when `step`, its plan on `state`, asks for a summary (a `sliding-window` or `turn-window` plan,
 * and a `noop` or `not-triggered` answer, call no model). Pure.
 */
export function passTakesClaim(command: CompactSession, state: SessionWindowState, step?: CompactionStep): boolean {
  if (command.dryRun) return false;
  if (command.origin === 'auto') return autoTriggerFires(command, state);
  return step?.kind === 'pass' && step.pass.plan.summaryRequest !== undefined;
}

/**
 * The rule in the compaction handler (see the module doc): whether the pass of `command` takes its
 * session's claim there, before it calls the summarizer for `step`, its plan on `state`. A commanded
 * pass: by {@link passTakesClaim}. An automatic one: when its scheduler holds no claim and did not
 * waive it, and `step` calls the summarizer: `schedulerClaim` absent (the trigger did not fire on
 * the state the scheduler read; `step` is planned on a newer state, another replica appended
 * meanwhile) or `failed` (the scheduler's attempt failed, e.g. the claims connection was lost: the
 * pass asks again, on the connection opened anew). Without this, two replicas called the model for
 * one decision. Pure.
 */
export function passClaimsHere(command: CompactSession & { schedulerClaim?: SchedulerClaim }, state: SessionWindowState, step: CompactionStep): boolean {
  if (command.dryRun) return false;
  if (command.origin === 'auto')
    return (command.schedulerClaim === undefined || command.schedulerClaim === 'failed') && step.kind === 'pass' && step.pass.plan.summaryRequest !== undefined;
  return passTakesClaim(command, state, step);
}

/** What {@link SessionClaims.waitFor} got: the claim (null: the pass runs unclaimed) and how long it waited (ms, 0 when the first look got it). */
export interface WaitedClaim {
  claim: HeldClaim | null;
  waitedMs: number;
}

/** Default of `SessionSettings.compactionClaimPollMs` (ms): one claim query per waiting pass per period. */
export const DEFAULT_CLAIM_POLL_MS = 250;
/** Default of `SessionSettings.autoCompactionClaimMaxWaitMs` (ms): longer than a pass of many chunked model calls usually takes. */
export const DEFAULT_CLAIM_MAX_WAIT_MS = 120_000;
/** Default of `SessionSettings.compactionCommandClaimMaxWaitMs` (ms): under the 60 s `REQUEST_TIMEOUT_MS` and the 30 s NATS ack wait. */
export const DEFAULT_COMMAND_CLAIM_MAX_WAIT_MS = 15_000;

type ClaimSettings = Pick<SessionSettings, 'compactionClaimPollMs' | 'compactionCommandClaimMaxWaitMs'>;

/** The session claims of this replica (see the module doc). */
@Injectable()
export class SessionClaims {
  private readonly logger = new Logger('Compaction');
  private waiting = 0;

  constructor(
    @Inject(SESSION_SETTINGS) private readonly settings: ClaimSettings,
    /** Where claims are taken; without one, or a store without claims, every pass runs unclaimed. */
    @Optional() @Inject(EVENT_STORE) private readonly store?: EventStore,
  ) {}

  /** Number of commanded passes waiting now for a claim another pass holds (the gauge `compaction_commands_waiting_for_claim`). */
  get commandsWaiting(): number {
    return this.waiting;
  }

  /**
   * The session's claim, without waiting: held, `'claimed-elsewhere'` (another pass holds it: on
   * another replica, or another pass of this one), or null when the pass runs unclaimed (a store
   * without claims: KurrentDB, an in-memory SQLite store; or a store that could not be asked: the pass meets the same
   * store and fails or works there).
   */
  async tryClaim(tenantId: string, sessionId: string): Promise<HeldClaim | 'claimed-elsewhere' | null> {
    const claim = await this.ask(tenantId, sessionId);
    if (!(claim instanceof Error)) return claim;
    // One warn line for every pass that runs unclaimed (it may call the model while another replica's pass does).
    this.logger.warn(
      `compaction of session ${JSON.stringify(sessionId)} (tenant ${JSON.stringify(tenantId)}) runs unclaimed: its claim could not be asked for: ${claim.name}: ${claim.message}`,
    );
    return null;
  }

  /**
   * The automatic-compaction scheduler's claim: as {@link SessionClaims.tryClaim}, except that a store
   * that could not be asked answers `'failed'`, with a `debug` line only: the pass then asks itself
   * before it calls the model ({@link passClaimsHere}), and says so when it runs unclaimed. Never rejects.
   */
  async tryClaimForScheduler(tenantId: string, sessionId: string): Promise<HeldClaim | 'claimed-elsewhere' | 'failed' | null> {
    const claim = await this.ask(tenantId, sessionId);
    if (!(claim instanceof Error)) return claim;
    this.logger.debug(
      `auto-compaction of session ${JSON.stringify(sessionId)} (tenant ${JSON.stringify(tenantId)}): its claim could not be asked for (the pass asks again before calling the model): ${claim.name}: ${claim.message}`,
    );
    return 'failed';
  }

  /**
   * The session's claim for an automatic pass that the compaction handler claims ({@link passClaimsHere}):
   * `'claimed-elsewhere'` without waiting, else as {@link SessionClaims.waitFor} (`waitedMs` 0). Never rejects.
   */
  async tryWithoutWaiting(tenantId: string, sessionId: string): Promise<WaitedClaim | 'claimed-elsewhere'> {
    const claim = await this.tryClaim(tenantId, sessionId);
    return claim === 'claimed-elsewhere' ? claim : { claim, waitedMs: 0 };
  }

  /**
   * Releases `claim`, a claim of the session taken by a pass that has ended; then, when the session
   * has no events any more (erased while the pass waited for its claim or ran), tells the store to
   * forget the claim (`EventStore.forgetClaim`: SQLite's lock file, named by a hash of the session):
   * a pass that took the claim after the erasure had created that file again (newcomer
   * ncsqlitereplicas F1: a command waiting for the claim put the erased session's lock file back).
   * Never rejects (a store that cannot be read now keeps the file).
   */
  async release(claim: HeldClaim, tenantId: string, sessionId: string): Promise<void> {
    await claim.release();
    if (!this.store?.forgetClaim) return;
    try {
      if ((await this.store.streamRevision(sessionStream(sessionKey(tenantId, sessionId)))) === null)
        await this.store.forgetClaim(sessionClaimName(tenantId, sessionId));
    } catch {
      // the store cannot be read now: the lock file stays (an empty file; a later erasure deletes it)
    }
  }

  /** One ask of the store: the claim, `'claimed-elsewhere'`, null (no claims here), or the store's error. Never rejects. */
  private async ask(tenantId: string, sessionId: string): Promise<HeldClaim | 'claimed-elsewhere' | null | Error> {
    if (!this.store?.tryClaim) return null;
    try {
      return (await this.store.tryClaim(sessionClaimName(tenantId, sessionId))) ?? 'claimed-elsewhere';
    } catch (err) {
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  /**
   * The session's claim for a commanded pass, waiting while another pass holds it: a look every
   * `compactionClaimPollMs`, for at most `compactionCommandClaimMaxWaitMs` (then null with one
   * `warn` line: the pass runs unclaimed, as a claim is advisory). Never rejects.
   */
  async waitFor(tenantId: string, sessionId: string): Promise<WaitedClaim> {
    const started = Date.now();
    let claim = await this.tryClaim(tenantId, sessionId);
    if (claim !== 'claimed-elsewhere') return { claim, waitedMs: 0 };
    const { compactionClaimPollMs: pollMs, compactionCommandClaimMaxWaitMs: maxWaitMs } = this.settings;
    this.waiting++;
    try {
      for (;;) {
        const left = maxWaitMs - (Date.now() - started);
        if (left <= 0) {
          this.logger.warn(
            `compaction command of session ${JSON.stringify(sessionId)} (tenant ${JSON.stringify(tenantId)}) runs unclaimed: another pass has held its claim for ${maxWaitMs} ms or more (COMPACTION_CLAIM_MAX_WAIT_MS)`,
          );
          return { claim: null, waitedMs: Date.now() - started };
        }
        await new Promise((resolve) => setTimeout(resolve, Math.min(pollMs, left)));
        claim = await this.tryClaim(tenantId, sessionId);
        if (claim !== 'claimed-elsewhere') return { claim, waitedMs: Date.now() - started };
      }
    } finally {
      this.waiting--;
    }
  }
}
