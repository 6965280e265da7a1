/**
 * Token counting off the request thread (issue 17, item 1): the cost of counting a text is chosen
 * by whoever sends it (up to `MAX_TEXT_LENGTH`, 1,000,000 code points, at most 2,000,000 UTF-16 code units, per text), so counting
 * a large request on the event loop would delay every other request of every tenant.
 *
 * Requests whose texts total at most {@link INLINE_COUNT_LIMIT} code units are counted inline (a
 * few milliseconds at worst, and the common case: no thread hop). Larger ones go to a worker
 * thread (piscina), started on first need and stopped after {@link WORKER_IDLE_MS} without work,
 * so an idle service holds no second copy of the vocabularies. Piscina's code itself loads with
 * this module (at start-up): loaded on first need, it held the event loop 20–30 ms in the middle
 * of the first large request (the service run from source, 2-core machine), its longest stretch. Each task has a deadline
 * ({@link DEFAULT_COUNTING_DEADLINE_MS}, time queued included); past it the worker is stopped and
 * the caller gets a {@link CountingTimeoutError}. The deadline starts once the lane's thread is up:
 * starting it (loading the code and both encodings: ~1 s of CPU, 3–4 s from TypeScript sources) is
 * the service's own cost, paid by whichever large task comes first after an idle minute, not a wait
 * behind other large texts; on a busy machine (load 20 on 2 cores) it alone outlasted the deadline and
 * the first compaction answered `failed`. Same numbers as the inline functions.
 *
 * The other text work whose cost a client chooses and that would otherwise hold the event loop is
 * a compaction's: splitting a large summarizer input into chunks, and the extractive summary of a
 * large input (its patterns read every character: ~40 ms per 1,000,000). It runs in a second worker
 * thread of its own ({@link TokenCountingLane} `summaries`), started lazily and stopped when idle
 * like the first, so a compaction never waits behind the appends queued for counting (each up to
 * seconds of CPU: 40 appends of 300,000 emoji held one shared thread ~30 s, a compaction's whole
 * deadline) nor is refused because their queue is full. Each lane keeps its own queue bound
 * ({@link MAX_QUEUED_TASKS}) and runs its tasks first come, first served.
 *
 * A task that ran past its deadline with no other task before it on its lane (it had the thread to
 * itself from the start), while the process used at least {@link TOO_COSTLY_CPU_SHARE} of the
 * deadline in CPU time (so the machine was not starving the thread), is refused with
 * {@link CountingTooCostlyError} instead: it alone costs more than the deadline, so retrying it as
 * it is cannot succeed (an 8,000,000-character text refused
 * after 30 s with "busy with other large texts" and `Retry-After: 1` on an idle service: ncsqliteops F3).
 * Any other refused task (queue full, or deadline passed while it waited or ran behind others) says when to try again
 * (`CountingTimeoutError.retryAfterSeconds`, the HTTP answer's `Retry-After`): the time the lane
 * needs for the tasks it holds at the running mean of its recent tasks' run times
 * ({@link retryAfterSeconds}), so a burst of importers retries about when the queue has drained.
 */
import * as path from 'node:path';
import { Piscina } from 'piscina';
import { yieldToIo } from '@lib/event-store';
import {
  extractiveSummary,
  type ExtractiveSummaryOptions,
  formatEventLines,
  getEstimator,
  isEstimatorName,
  type EstimatorName,
  planSummaryChunks,
  type SessionEvent,
  type SummaryRequest,
  type TokenEstimator,
} from '@lib/compaction';
import { computeEventCosts } from '../domain/event-costs';
import type { EventCosts } from '../events/session-stream-events';
import { CountingTimeoutError, CountingTooCostlyError } from '../errors';
import type { EventCostsTask, ExtractiveSummaryTask, ReadyTask, SummaryChunksTask, TokenCountingTask } from './token-counting-tasks';

/**
 * Most UTF-16 code units (all texts of one request together) counted on the calling thread.
 * Measured (bench figure 10): the costliest text (random ideographs) costs about 2 µs per code
 * unit for both encodings at this size on the 2-core reference machine, so at most ~20 ms inline
 * (~110 ms at 32,768 under load); ordinary messages stay far below it and never pay the thread hop.
 */
export const INLINE_COUNT_LIMIT = 8_192;

/** Default longest wait (ms) for one off-thread task, queueing included. */
export const DEFAULT_COUNTING_DEADLINE_MS = 30_000;

/**
 * Most MiB of each worker thread's young generation (V8 `resourceLimits.maxYoungGenerationSizeMb`).
 * V8's default (~48 MiB: three 16 MiB semi-spaces) is filled with short-lived copies while a large
 * request is counted (its events cloned into the thread, their formatted lines, each long
 * pre-token's bytes) and those pages stay resident. Capped, the thread collects sooner; results are
 * the same (only when garbage is collected changes). Measured (built service, 600 events with three
 * 3.5 MB appends of 100–400 KB tool results, 2 cores at load ~10): peak RSS 325 → 294 MiB.
 */
export const WORKER_YOUNG_GENERATION_MB = 4;

/** A worker without work for this long (ms) is stopped (and started again on next need). */
export const WORKER_IDLE_MS = 60_000;

/**
 * Most tasks waiting for a lane's worker (besides the one it runs); more are refused at once with a
 * {@link CountingTimeoutError} (`queueFull`). Counted here, not by piscina's `maxQueue`: piscina
 * 5.3 keeps tasks given an abort signal (every task here: the deadline) in a separate queue that
 * `maxQueue` does not bound (piscinajs/piscina#899).
 */
export const MAX_QUEUED_TASKS = 64;

/**
 * Share of the deadline the process must have spent in CPU time (all its threads, the task's worker
 * among them) while a task that had its thread to itself ran past the deadline, for the task to be
 * refused as too costly ({@link CountingTooCostlyError}): below it the worker may have been starved
 * by a loaded machine (it runs at nice +10), and the refusal is a {@link CountingTimeoutError} to retry.
 */
export const TOO_COSTLY_CPU_SHARE = 0.9;

/** CPU time (ms, user + system) of this process so far: all its threads. */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Weight of the newest task's run time in a lane's running mean ({@link TokenCountingPool} `retryAfterSeconds`). */
const MEAN_WEIGHT = 0.2;

/**
 * When a refused task's caller should try again, in whole seconds: the time the lane's worker needs
 * for the `queued` tasks it holds (the one running included) at `meanTaskMs` each, the running mean
 * of its recent tasks' run times, rounded up; at least 1 (also while no task has finished yet) and at
 * most the deadline, `deadlineMs`, rounded up (no task waits longer).
 */
export function retryAfterSeconds(queued: number, meanTaskMs: number | undefined, deadlineMs: number): number {
  const most = Math.max(1, Math.ceil(deadlineMs / 1000));
  if (meanTaskMs === undefined) return 1;
  return Math.min(most, Math.max(1, Math.ceil((queued * meanTaskMs) / 1000)));
}

/**
 * The two worker threads of a {@link TokenCountingPool}: `counting` counts the tokens of large
 * appends; `summaries` does a compaction's text work (summary chunks, extractive summaries), so a
 * compaction does not queue behind appends.
 */
export type TokenCountingLane = 'counting' | 'summaries';

/** Options of {@link TokenCountingPool}. */
export interface TokenCountingOptions {
  /** See {@link INLINE_COUNT_LIMIT} (code units). */
  inlineLimit?: number;
  /** See {@link DEFAULT_COUNTING_DEADLINE_MS} (ms). */
  deadlineMs?: number;
  /** CPU time (ms) of the process so far, read before and after a task ({@link TOO_COSTLY_CPU_SHARE}); default `process.cpuUsage()`'s. For tests. */
  cpuMs?: () => number;
  /** See {@link WORKER_IDLE_MS} (ms). */
  idleMs?: number;
  /**
   * The worker's entry module (an absolute path); default `token-counting-tasks` next to this file.
   * For tests: a module that wraps it (e.g. one whose loading is held) and re-exports its default.
   */
  workerFile?: string;
}

/** The worker module, next to this file (`.ts` under ts-node and jest, `.js` once built). */
const WORKER_FILE = path.join(__dirname, `token-counting-tasks${path.extname(__filename)}`);

/**
 * Node flags of the worker: a built service's own (`-r tsconfig-paths/register`, inherited); from
 * sources (ts-node, jest), the hooks that load TypeScript and the `@lib/…` paths. Not ts-node's
 * `process.execArgv`, which names its own CLI script.
 */
function workerExecArgv(): string[] | undefined {
  return path.extname(__filename) === '.ts' ? ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'] : undefined;
}

/** UTF-16 code units of every formatted line of `events` (what counting them reads). */
function formattedLength(events: readonly SessionEvent[]): number {
  let units = 0;
  for (const event of events) for (const line of formatEventLines(event)) units += line.length;
  return units;
}

/** Code units of every text of a summary request. */
function requestLength(request: SummaryRequest): number {
  let units = request.systemPrompt.length + request.shadowPrompt.length;
  for (const texts of [request.currentSummaries, request.toSummarize, request.overlap]) for (const t of texts) units += t.length;
  return units;
}

/**
 * One lane's piscina pool (one thread, started lazily), the tasks sent to it and not yet settled,
 * and `tail`: settles when the last task given to the lane is done (or gave up waiting), so each
 * task is handed to piscina after the one before it: first come, first served (piscina 5.3 does
 * not keep that order for tasks with an abort signal).
 */
interface Lane {
  pool: Piscina | undefined;
  inFlight: number;
  tail: Promise<void>;
  /** Counts {@link TokenCountingPool.close} calls: a task still waiting its turn at a close fails, as piscina fails those it holds. */
  closes: number;
  /** While the lane's thread is starting (see {@link TokenCountingPool.threadUp}): settles once it is up, or failed to start. */
  starting: Promise<void> | undefined;
  /** Running mean of the run times of the lane's finished tasks (ms, on its thread, queueing left out); undefined before the first. */
  meanTaskMs: number | undefined;
}

/** Rejects with `signal`'s reason once it aborts (a task's deadline passed while it waited its turn). */
function abortedBy(signal: AbortSignal): Promise<never> {
  return new Promise((_resolve, reject) => {
    const fail = () => reject(signal.reason instanceof Error ? signal.reason : new Error(String(signal.reason)));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** See the module documentation. One per process is enough ({@link sharedTokenCountingPool}). */
export class TokenCountingPool {
  private readonly inlineLimit: number;
  private deadline: number;
  private readonly idleMs: number;
  private readonly workerFile: string;
  private readonly cpuMs: () => number;
  private readonly lanes: Record<TokenCountingLane, Lane> = {
    counting: { pool: undefined, inFlight: 0, tail: Promise.resolve(), closes: 0, starting: undefined, meanTaskMs: undefined },
    summaries: { pool: undefined, inFlight: 0, tail: Promise.resolve(), closes: 0, starting: undefined, meanTaskMs: undefined },
  };

  constructor(options: TokenCountingOptions = {}) {
    this.inlineLimit = options.inlineLimit ?? INLINE_COUNT_LIMIT;
    this.deadline = options.deadlineMs ?? DEFAULT_COUNTING_DEADLINE_MS;
    this.idleMs = options.idleMs ?? WORKER_IDLE_MS;
    this.workerFile = options.workerFile ?? WORKER_FILE;
    this.cpuMs = options.cpuMs ?? processCpuMs;
  }

  /**
   * Sets the deadline of the tasks given from now on (`deadlineMs`, ms; see
   * {@link DEFAULT_COUNTING_DEADLINE_MS}): the service's `COUNTING_DEADLINE_MS`, for the shared pool.
   * @throws RangeError when `deadlineMs` is not a positive integer.
   */
  setDeadlineMs(deadlineMs: number): void {
    if (!Number.isSafeInteger(deadlineMs) || deadlineMs < 1) throw new RangeError(`deadlineMs must be a positive integer of milliseconds, not ${deadlineMs}`);
    this.deadline = deadlineMs;
  }

  /** The deadline (ms) of each task, queueing included (see {@link setDeadlineMs}). */
  get deadlineMs(): number {
    return this.deadline;
  }

  /** True while a worker pool of either lane exists (started by a large task, not yet closed). */
  get started(): boolean {
    return this.startedLanes.length > 0;
  }

  /** The lanes whose worker pool exists (started by a large task of theirs, not yet closed), `counting` first. */
  get startedLanes(): TokenCountingLane[] {
    return (['counting', 'summaries'] as const).filter((lane) => this.lanes[lane].pool !== undefined);
  }

  /**
   * `computeEventCosts` of each event, in order, counted inline (on this thread, no await), when
   * their texts total at most the inline limit; undefined for a larger request, which
   * {@link eventCosts} counts off-thread: a caller may then first check what does not need its
   * costs (the append handler checks the rules on the session's state, so a refused large request
   * costs no counting), and call {@link eventCosts}.
   */
  inlineEventCosts(events: readonly SessionEvent[]): EventCosts[] | undefined {
    return formattedLength(events) <= this.inlineLimit ? events.map(computeEventCosts) : undefined;
  }

  /**
   * `computeEventCosts` of each event, in order (lane `counting`): inline for a small request ({@link inlineEventCosts}), else in the worker.
   * @throws CountingTimeoutError when an off-thread count misses its deadline or the queue is full.
   */
  async eventCosts(events: readonly SessionEvent[]): Promise<EventCosts[]> {
    return (
      this.inlineEventCosts(events) ??
      this.run<EventCosts[]>('counting', { kind: 'eventCosts', events } satisfies EventCostsTask, 'counting the tokens of this request')
    );
  }

  /**
   * `planSummaryChunks(request, maxInputTokens, estimator, options)`. Off-thread (lane `summaries`)
   * only for a built-in estimator (a custom one cannot cross threads, so it runs inline).
   * @throws what `planSummaryChunks` throws; CountingTimeoutError as {@link eventCosts}.
   */
  async summaryChunks(
    request: SummaryRequest,
    maxInputTokens: number,
    estimator: TokenEstimator,
    options: { summaryReserve?: number } = {},
  ): Promise<SummaryRequest[]> {
    const name = estimator.name;
    if (!isEstimatorName(name) || getEstimator(name) !== estimator || requestLength(request) <= this.inlineLimit)
      return planSummaryChunks(request, maxInputTokens, estimator, options);
    const task: SummaryChunksTask = { kind: 'summaryChunks', request, maxInputTokens, estimator: name, ...options };
    return this.run<SummaryRequest[]>('summaries', task, 'splitting the summarizer input into chunks');
  }

  /**
   * `extractiveSummary(request, { maxChars, maxLength, estimator })`: inline for a request of at most the
   * inline limit (code units of all its texts), else in the worker of lane `summaries` (a
   * `estimator` that is not one of the named ones keeps it inline).
   * @throws what `extractiveSummary` throws; CountingTimeoutError as {@link eventCosts}.
   */
  async extractiveSummary(request: SummaryRequest, options: ExtractiveSummaryOptions = {}): Promise<string> {
    const { estimator, ...rest } = options;
    const named = estimator === undefined || (isEstimatorName(estimator.name) && getEstimator(estimator.name) === estimator);
    if (!named || requestLength(request) <= this.inlineLimit) return extractiveSummary(request, options);
    const task: ExtractiveSummaryTask = { kind: 'extractiveSummary', request, ...rest, ...(estimator ? { estimator: estimator.name as EstimatorName } : {}) };
    return this.run<string>('summaries', task, 'the extractive summary of this input');
  }

  /** Stops the workers (if any); a later large task starts a new one for its lane. */
  async close(): Promise<void> {
    const pools = Object.values(this.lanes).flatMap((lane) => {
      lane.closes += 1;
      const pool = lane.pool;
      lane.pool = undefined;
      return pool ? [pool] : [];
    });
    await Promise.all(pools.map((pool) => pool.destroy()));
  }

  /**
   * Resolves once `lane` has a thread that has loaded its module: at once when it has one, else
   * after starting it (creating the lane's piscina pool if needed) and running a {@link ReadyTask}
   * on it, without a deadline. Tasks arriving meanwhile share the one start.
   * @throws what piscina throws when the thread fails to load; an Error when the pool is closed meanwhile.
   */
  private threadUp(lane: Lane): Promise<void> {
    if (lane.starting) return lane.starting;
    if (lane.pool && lane.pool.threads.length > 0) return Promise.resolve();
    const closes = lane.closes;
    const start = async (): Promise<void> => {
      // Starting the pool's thread holds the event loop for a few ms (the first worker thread of a
      // process most: 5–10 ms): other requests get a turn first, so that is not added to the
      // caller's own stretch (reading and validating a large body).
      if (!lane.pool) await yieldToIo();
      if (lane.closes !== closes) throw new Error('the token-counting pool was closed while its worker thread started');
      lane.pool ??= new Piscina({
        filename: this.workerFile,
        minThreads: 0,
        maxThreads: 1,
        idleTimeout: this.idleMs,
        resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_GENERATION_MB },
        execArgv: workerExecArgv(),
      });
      try {
        await lane.pool.run({ kind: 'ready' } satisfies ReadyTask);
      } catch (err) {
        if (lane.closes !== closes) throw new Error('the token-counting pool was closed while its worker thread started', { cause: err });
        throw err;
      }
    };
    lane.starting = start().finally(() => (lane.starting = undefined));
    return lane.starting;
  }

  /** {@link retryAfterSeconds} for a task refused by `lane` now (its tasks in flight, its mean run time, the deadline). */
  private retryAfter(lane: Lane): number {
    return retryAfterSeconds(lane.inFlight, lane.meanTaskMs, this.deadline);
  }

  private async run<T>(laneName: TokenCountingLane, task: TokenCountingTask, what: string): Promise<T> {
    const lane = this.lanes[laneName];
    // One task runs, MAX_QUEUED_TASKS wait: counted before any await, so a burst is bounded too.
    if (lane.inFlight > MAX_QUEUED_TASKS) throw new CountingTimeoutError(what, this.deadline, true, this.retryAfter(lane));
    // No task before this one: it has the lane's thread to itself for its whole deadline.
    const alone = lane.inFlight === 0;
    // The process's CPU time (ms) when the task was handed to the thread; undefined while it waited.
    let cpuAtStart: number | undefined;
    lane.inFlight += 1;
    const before = lane.tail;
    let done = () => undefined as void;
    lane.tail = new Promise<void>((resolve) => (done = resolve));
    try {
      const closes = lane.closes;
      // The lane's thread first (not counted in the deadline); tasks waiting for the same start go
      // on in the order they came, so the queue below keeps that order.
      await this.threadUp(lane);
      // The deadline counts from now, the wait for the tasks before this one included.
      const signal = AbortSignal.timeout(this.deadline);
      await Promise.race([before, abortedBy(signal)]);
      if (lane.closes !== closes || !lane.pool) throw new Error(`the token-counting pool was closed before ${what} could run`);
      // A task before this one that missed its deadline stopped the thread: piscina starts another
      // for this one, within its deadline (rare: only right after a timeout).
      const started = performance.now();
      cpuAtStart = this.cpuMs();
      const result = (await lane.pool.run(task, { signal })) as T;
      const ranMs = performance.now() - started;
      lane.meanTaskMs = lane.meanTaskMs === undefined ? ranMs : lane.meanTaskMs + MEAN_WEIGHT * (ranMs - lane.meanTaskMs);
      return result;
    } catch (err) {
      const name = (err as Error | undefined)?.name;
      if (name === 'AbortError' || name === 'TimeoutError') {
        // Alone on its thread from the start, and the process busy for most of the deadline: not a starved thread.
        if (alone && cpuAtStart !== undefined && this.cpuMs() - cpuAtStart >= TOO_COSTLY_CPU_SHARE * this.deadline)
          throw new CountingTooCostlyError(what, this.deadline);
        throw new CountingTimeoutError(what, this.deadline, false, this.retryAfter(lane));
      }
      throw err;
    } finally {
      done();
      lane.inFlight -= 1;
    }
  }
}

let shared: TokenCountingPool | undefined;

/** The process's pool, created on first call (creating it starts no thread). */
export function sharedTokenCountingPool(): TokenCountingPool {
  shared ??= new TokenCountingPool();
  return shared;
}
