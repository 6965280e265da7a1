/**
 * NestJS wiring of the session library: command handlers (append, compact, policy, erase), the
 * auto-compaction scheduler, the projector and the queries, on the event store, read models and
 * summarizer the application gives it.
 *
 * The module starts the projector when the application starts and stops it on shutdown; closing
 * the store and the read-model database stays with whoever opened them.
 */
import { ErasuresInProgress } from './write-side/erasures-in-progress';
import { Inject, Module, type DynamicModule, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { CqrsModule } from '@nestjs/cqrs';
import type { EventStore } from '@lib/event-store';
import { COMMAND_EVENT_STORE, EVENT_STORE, SESSION_SETTINGS, SUMMARIZER } from './tokens';
import type { Summarizer } from './summarizers/summarizer';
import { ReadModelStore } from './read-side/read-model-store';
import { SessionProjector, type SessionProjectorOptions } from './read-side/session-projector';
import { DEFAULT_SESSION_CACHE_SIZE, SessionStateCache } from './write-side/session-state-cache';
import { sessionKey } from './events/session-stream-events';
import { AcknowledgedPositions, recordingAcknowledgedPositions } from './write-side/acknowledged-positions';
import { refusingWritesWhileReadModelsFull } from './write-side/writes-while-read-models-full';
import { refusingWritesWhileReadModelsOffLog } from './write-side/writes-while-read-models-off-log';
import { AppendSessionEventsHandler } from './write-side/append-session-events';
import { PerSessionQueue } from './write-side/per-session-queue';
import { APPENDED_EVENTS_OBSERVER, type AppendedEventsObserver } from './write-side/appended-events-observer';
import { CompactSessionHandler } from './write-side/compact-session';
import { SetCompactionPolicyHandler } from './write-side/set-compaction-policy';
import { EraseSessionHandler } from './write-side/erase-session';
import { InterruptedErasureSweep } from './write-side/interrupted-erasures';
import { AutoCompactionScheduler, DEFAULT_SESSION_SETTINGS, type SessionSettings } from './write-side/auto-compaction';
import { SessionClaims } from './write-side/session-claims';
import { SessionReads } from './queries/session-reads';
import { SessionHistoryReads } from './queries/session-history-reads';
import { DEFAULT_COUNTING_DEADLINE_MS, sharedTokenCountingPool } from './token-counting/token-counting-pool';

/** What {@link SessionModule.forRoot} needs. */
export interface SessionModuleOptions {
  store: EventStore;
  /**
   * The store the commands use ({@link COMMAND_EVENT_STORE}), made from `store`: every read and
   * write of a command (its loads, checks and appends) goes through it, the queries and the
   * projector do not (e.g. to count each store failure of a command as a failed write). Default:
   * `store` itself.
   */
  commandStore?: (store: EventStore) => EventStore;
  readModels: ReadModelStore;
  summarizer: Summarizer;
  settings?: Partial<SessionSettings> & { maxWaitMs?: number };
  /** Start the projector with the application (default true). */
  startProjector?: boolean;
  /** Tuning of the projector (e.g. `worker`: apply events in a worker thread). */
  projector?: SessionProjectorOptions;
  /** Told of the conversation events each append writes (e.g. the metrics' `events_appended_total`). */
  appendedEvents?: AppendedEventsObserver;
  /**
   * Deadline (ms) of each task of the process's token-counting pool, queueing included (the
   * service's `COUNTING_DEADLINE_MS`): past it 503 `counting_timeout`, or 413
   * `counting_too_costly` for a task that had its thread to itself. Default
   * `DEFAULT_COUNTING_DEADLINE_MS` (30,000); set on the shared pool when the module is built.
   */
  countingDeadlineMs?: number;
  /**
   * Bound of the memory the write side's cached session states hold, estimated (bytes; the service's
   * `SESSION_CACHE_MAX_MB`): past it the least recently used states are forgotten (a later command
   * on one loads it from the store again). Default `DEFAULT_SESSION_CACHE_MAX_BYTES` (256 MiB).
   */
  sessionCacheMaxBytes?: number;
}

const OPTIONS = Symbol('SESSION_MODULE_OPTIONS');

/** See the module doc; build it with {@link SessionModule.forRoot}. */
@Module({})
export class SessionModule implements OnApplicationBootstrap, OnApplicationShutdown {
  constructor(
    private readonly projector: SessionProjector,
    sessions: SessionStateCache,
    private readonly scheduler: AutoCompactionScheduler,
    @Inject(EVENT_STORE) private readonly store: EventStore,
    @Inject(OPTIONS) private readonly options: SessionModuleOptions,
    private readonly erasureSweep: InterruptedErasureSweep,
  ) {
    // A session erased through another replica (or process) is forgotten here when its erasure record is projected.
    projector.onErasure((tenantId, sessionId) => sessions.invalidate(sessionKey(tenantId, sessionId)));
  }

  /** A global module providing the handlers and {@link SessionReads}. */
  static forRoot(options: SessionModuleOptions): DynamicModule {
    const settings = { ...DEFAULT_SESSION_SETTINGS, maxWaitMs: 5000, ...options.settings };
    // One pool per process: the module built last sets its deadline (the default too, so an earlier module's does not linger).
    sharedTokenCountingPool().setDeadlineMs(options.countingDeadlineMs ?? DEFAULT_COUNTING_DEADLINE_MS);
    // Every write of the module's handlers is recorded, so reads can wait for this process's own writes.
    const acknowledged = new AcknowledgedPositions();
    const projector = new SessionProjector(options.readModels, options.projector);
    // While the read models cannot be written (disk full), or come from another log than the store's (a store restored under
    // this process), writes are refused: nothing is acknowledged that no read could show.
    const refusing = (store: EventStore) =>
      refusingWritesWhileReadModelsOffLog(
        refusingWritesWhileReadModelsFull(store, () => projector.readModelsFull()),
        () => projector.readModelsOffLog(),
      );
    const store = recordingAcknowledgedPositions(refusing(options.store), acknowledged);
    const commands = options.commandStore ? recordingAcknowledgedPositions(refusing(options.commandStore(options.store)), acknowledged) : store;
    return {
      module: SessionModule,
      global: true,
      imports: [CqrsModule.forRoot()],
      providers: [
        { provide: OPTIONS, useValue: options },
        { provide: EVENT_STORE, useValue: store },
        { provide: COMMAND_EVENT_STORE, useValue: commands },
        { provide: AcknowledgedPositions, useValue: acknowledged },
        { provide: SUMMARIZER, useValue: options.summarizer },
        { provide: APPENDED_EVENTS_OBSERVER, useValue: options.appendedEvents ?? null },
        { provide: SESSION_SETTINGS, useValue: settings },
        { provide: ReadModelStore, useValue: options.readModels },
        { provide: SessionProjector, useValue: projector },
        { provide: SessionStateCache, useFactory: () => new SessionStateCache(commands, DEFAULT_SESSION_CACHE_SIZE, options.sessionCacheMaxBytes) },
        { provide: ErasuresInProgress, useValue: new ErasuresInProgress() },
        // One queue of this process's writes per session, appends and policy PUTs alike: a PUT never races this process's appends.
        { provide: PerSessionQueue, useValue: new PerSessionQueue() },
        AppendSessionEventsHandler,
        CompactSessionHandler,
        SetCompactionPolicyHandler,
        EraseSessionHandler,
        InterruptedErasureSweep,
        SessionClaims,
        AutoCompactionScheduler,
        SessionReads,
        SessionHistoryReads,
      ],
      exports: [
        SessionReads,
        SessionHistoryReads,
        SessionProjector,
        SessionStateCache,
        AutoCompactionScheduler,
        SessionClaims,
        InterruptedErasureSweep,
        EVENT_STORE,
        COMMAND_EVENT_STORE,
        ReadModelStore,
        SUMMARIZER,
        CqrsModule,
      ],
    };
  }

  onApplicationBootstrap(): void {
    if (this.options.startProjector === false) return;
    this.projector.start(this.store);
    this.erasureSweep.start();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.erasureSweep.stop();
    this.scheduler.stopWaiting();
    await this.scheduler.whenIdle();
    await this.projector.stop();
    await sharedTokenCountingPool().close();
  }
}
