/**
 * The replay (issue 5): feeds real agent conversations turn by turn through the session service
 * with an auto-compaction policy, checks the window after every turn as a provider would, waits
 * for background compactions to settle, then gathers each session's figures from the service's
 * own answers (log, window, compaction history) and writes the report.
 *
 * {@link runReplay} is the whole command as a function (the CLI in `replay.ts` and the e2e test
 * call it); it throws {@link ReplayError} for problems of the input or environment, including a
 * request the service refuses with a 4xx.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { ESTIMATOR_NAMES, type EstimatorName, type Strategy, type Trigger } from '@lib/compaction';
import { ReplayError, ReplayInterrupted } from './replay-error';
import { signalName } from './stop-on-signals';
import { loadSessionsFile, splitTurns, type ReplaySession } from './sessions-file';
import { FidelityCollector, type FidelityReport } from './run-fidelity';
import { serviceSummarizerDescription, summarizerDescription, type SummarizerIdentity } from './summarizer-description';
import { plansFromOptions, type ReplayPlan } from './policy-forms';
import type { Schemas, SessionServiceClient } from '@lib/client';
import { createReplayClient, ok, probe, ServiceHttpError } from './service-client';
import { readAndCheckWindow, type WindowProblem } from './window-check';
import { createProgress } from './progress';
import { renderFidelity, renderTable, writeReports } from './report';

/** Options of {@link runReplay} (the CLI's options). */
export interface ReplayOptions {
  /** The sessions file. */
  file: string;
  /** Base URL of a running service; without it a service is started in-process on a temporary store. */
  url?: string;
  /** Bearer API key for a service that requires one. */
  apiKey?: string;
  /** Strategy (JSON, short form, or `all`, the default). */
  strategy?: string;
  /** Trigger (JSON, short form or `none`); with `all`, replaces the built-in triggers. */
  trigger?: string;
  /** `cl100k_base` (default), `o200k_base` or `chars`. */
  estimator?: string;
  /** Replay only the first N sessions of the file. */
  sessions?: number;
  /** Sessions replayed at once (default 4). */
  concurrency?: number;
  /** Report directory (default `./replay-report`). */
  out?: string;
  /** Sessions per strategy charted in report.html (default 3). */
  htmlSessions?: number;
  /** Where the table and the examples go (default process.stdout). */
  stdout?: NodeJS.WritableStream;
  /** Where progress and warnings go (default process.stderr). */
  stderr?: NodeJS.WritableStream & { isTTY?: boolean };
  /** Show progress (default true). */
  progress?: boolean;
  /** Measure context fidelity (facts retained, recall reach, baselines; default true). */
  fidelity?: boolean;
  /** Sessions measured for fidelity (the first N; default all replayed). */
  fidelitySessions?: number;
  /** Prefix of the session ids (default `replay-<time>`): keeps runs against one service apart. */
  runId?: string;
  /**
   * Stops the run when aborted (the CLI aborts it on SIGINT/SIGTERM, with the signal's name as the
   * reason): no new turn is sent, the in-process service (if any) is closed and its temporary store
   * removed, and {@link runReplay} rejects with {@link ReplayInterrupted}.
   */
  signal?: AbortSignal;
}

/** The window after one turn. */
export interface TurnRecord {
  turn: number;
  /** Global position of the turn's append. */
  position: string;
  /** Revision of the window read. */
  revision: string;
  /** Window tokens the service reported after the turn. */
  tokens: number;
  /** Tokens of every event appended so far (the window without any compaction). */
  tokensWithoutCompaction: number;
  summaries: number;
}

/** One compaction as charted: after which turn it was recorded. */
export interface CompactionMark {
  compactionId: string;
  outcome: string;
  /** Turn whose append preceded it (the one that triggered it). */
  afterTurn: number;
  tokensBefore?: number;
  tokensAfter?: number;
  archivedCount?: number;
  summarizerCalls: number;
}

/** Figures of one replayed session, all read back from the service. */
export interface SessionReport {
  sessionId: string;
  label: string;
  turns: number;
  /** Conversation events appended. */
  events: number;
  /** Sum of the costs of every appended event (the window if nothing were ever compacted). */
  tokensBefore: number;
  /** The service's final window tokens (after every compaction settled). */
  tokensAfter: number;
  /** Largest window seen after a turn. */
  peakTokens: number;
  compactions: number;
  failedCompactions: number;
  summarizerCalls: number;
  /** Window reads (after each turn, and the final one) that had at least one problem. */
  validationFailures: number;
  perTurn: TurnRecord[];
  compactionMarks: CompactionMark[];
}

/** Sum, median and max of a figure over sessions. */
export interface Spread {
  sum: number;
  median: number;
  max: number;
}

/** Figures of one strategy. */
export interface StrategyReport {
  name: string;
  strategy: Strategy;
  trigger: Trigger | null;
  sessions: number;
  turns: number;
  events: number;
  tokensBefore: Spread;
  tokensAfter: Spread;
  peakTokens: Spread;
  /** 1 − after.sum / before.sum. */
  reduction: number;
  compactions: number;
  failedCompactions: number;
  summarizerCalls: number;
  /** Window reads with at least one problem (must be 0). */
  validationFailures: number;
  /** The first problems found (at most 50). */
  problems: WindowProblem[];
  /** From the first append to every background compaction settled. */
  wallTimeMs: number;
  eventsPerSecond: number;
  /** False when background compactions were still running after the settle timeout. */
  settled: boolean;
  /** Time spent measuring fidelity (summed over sessions, divided by the concurrency: an estimate of its wall time), ms. */
  fidelityTimeMs: number;
  sessionReports: SessionReport[];
}

/** The live examples printed at the end. */
export interface ReplayExamples {
  recall?: {
    query: string;
    sessionId: string;
    eventId: string;
    type: string;
    snippet: string;
    compactionId: string;
    compactionStrategy?: string;
    afterTurn?: number;
    hits: number;
  };
  history?: { sessionId: string; compactions: Array<Record<string, unknown>> };
  lines: string[];
}

/** The whole report (report.json). */
export interface ReplayReport {
  file: string;
  service: string;
  estimator: string;
  startedAt: string;
  wallTimeMs: number;
  concurrency: number;
  strategies: StrategyReport[];
  examples: ReplayExamples;
  /** Total over strategies. */
  validationFailures: number;
  /** The summarizer that wrote the summaries, in words (the title's): see summarizer-description.ts. */
  summarizer: string;
  /** Context fidelity per strategy and baselines (issue 16); absent with `fidelity: false`. */
  fidelity?: FidelityReport;
}

function positiveInt(value: number | undefined, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1) throw new ReplayError(`${name} must be a positive integer, got ${value}`);
  return value;
}

function spread(values: number[]): Spread {
  if (values.length === 0) return { sum: 0, median: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { sum: values.reduce((a, b) => a + b, 0), median, max: sorted[sorted.length - 1] };
}

async function pool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>, signal?: AbortSignal): Promise<void> {
  let next = 0;
  let failed: unknown;
  const worker = async () => {
    while (next < items.length && failed === undefined && !signal?.aborted) {
      const i = next++;
      try {
        await work(items[i], i);
      } catch (err) {
        failed ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  if (failed !== undefined) throw failed as Error;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Waits until the service has no automatic compaction in progress and its projection has caught
 * up with the store, seen on two polls in a row (so a compaction that another append just
 * requested is not missed). Returns false after `timeoutMs`.
 */
export async function waitForSettled(client: SessionServiceClient, timeoutMs = 300_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let quietPolls = 0;
  while (Date.now() < deadline) {
    const h = await ok(client.GET('/health'));
    const idle = (h.autoCompactionsInProgress ?? 0) === 0 && h.projector?.lag === 'caught-up';
    quietPolls = idle ? quietPolls + 1 : 0;
    if (quietPolls >= 2) return true;
    await sleep(50);
  }
  return false;
}

/**
 * One entry of a session's log (`GET …/events`, the generated client's schema) with the part of
 * its payload the replay reads: a conversation event's text and its costs (tokens per estimator).
 */
export type LogEntry = Omit<Schemas['LogPage']['events'][number], 'data'> & {
  data: { event?: { type: string; text?: string | null }; costs?: Partial<Record<EstimatorName, number>> };
};

/** Every entry of a session's log, page by page (`GET …/events`). */
export async function readLog(client: SessionServiceClient, sessionId: string): Promise<LogEntry[]> {
  const all: LogEntry[] = [];
  let fromRevision = '0';
  for (;;) {
    const page = await ok(client.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId }, query: { fromRevision, limit: '1000' } } }));
    // the payload is the event's data verbatim (an open object in the API's schema)
    all.push(...(page.events as LogEntry[]));
    if (page.nextRevision === undefined) return all;
    fromRevision = page.nextRevision;
  }
}

/** A compaction history item (`GET …/compactions`, the generated client's schema). */
type CompactionRecord = Schemas['CompactionHistoryItem'];

function summarizerCallsOf(c: CompactionRecord): number {
  return c.summarizer?.calls ?? 0;
}

/** The whole compaction history of a session, oldest first (every page). */
async function readCompactions(client: SessionServiceClient, sessionId: string): Promise<CompactionRecord[]> {
  const all: CompactionRecord[] = [];
  let cursor: string | undefined;
  do {
    const page = await ok(
      client.GET('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId }, query: { limit: '100', ...(cursor ? { cursor } : {}) } } }),
    );
    all.push(...page.compactions);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}

/** Archived user/tool/assistant texts kept for the recall example. */
interface ArchivedText {
  sessionId: string;
  plan: string;
  eventId: string;
  kind: string;
  text: string;
  archivedBy: string;
}

/**
 * The environment of the in-process service and of the fidelity baseline's summarizer: `env` by the
 * service's own rule (`trimmedEnvironment`: values trimmed, a blank one refused), so the replay refuses
 * what the service refuses at its start.
 * @throws ReplayError `configuration error: NAME=" ": set but blank: …`, the service's line (exit code 2).
 */
async function inProcessEnvironment(env: NodeJS.ProcessEnv): Promise<NodeJS.ProcessEnv> {
  // Loaded lazily: a bad file or option stops the command before Nest is even imported.
  const { trimmedEnvironment } = await import('../../session-service/src/config/environment-values');
  return refusedAsReplayError(() => trimmedEnvironment(env));
}

/**
 * `work()`'s result; a setting the service refuses (`ConfigurationError`, `SummarizerConfigError`)
 * rethrown as the {@link ReplayError} `configuration error: <the service's message>`; other errors as they are.
 */
async function refusedAsReplayError<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    const { asConfigurationError } = await import('../../session-service/src/config/configuration-error');
    const refused = asConfigurationError(err);
    throw refused ? new ReplayError(`configuration error: ${refused.message}`) : err;
  }
}

async function startInProcessService(env: NodeJS.ProcessEnv): Promise<{ url: string; close: () => Promise<void> }> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-service-'));
  const { createSessionService } = await import('../../session-service/src/create-session-service');
  const { loadServiceConfig } = await import('../../session-service/src/config/service-config');
  let service: Awaited<ReturnType<typeof createSessionService>>;
  try {
    const config = loadServiceConfig({ ...env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', API_KEYS: undefined, RATE_LIMIT_PER_MINUTE: '0' });
    service = await createSessionService(config, { quiet: true, env });
  } catch (err) {
    // a setting the service refuses: nothing was started, leave no temporary store behind
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  await service.app.listen(0, '127.0.0.1');
  const { port } = service.app.getHttpServer().address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      // A request still in flight when closing starts (Ctrl-C mid-turn) leaves its keep-alive socket idle
      // afterwards, and the server would wait for it (Fastify keeps idle sockets 72 s): close idle sockets until done.
      const server = service.app.getHttpServer();
      const reap = setInterval(() => server.closeIdleConnections(), 50);
      try {
        await service.close();
      } finally {
        clearInterval(reap);
      }
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * Runs the whole replay and writes report.json, report.md and report.html into `out`.
 * @throws ReplayError (one line) for an unreadable or malformed file (including a message the
 *   service's parser would reject), an invalid option, a URL where no service answers, without a
 *   URL a setting the in-process service refuses (`configuration error: <the service's line>`), or a 4xx
 *   answer of the service during the run (naming the session, the message and the service's
 *   status, code and message). Other errors (a 5xx answer, a bug) are thrown as they are.
 * @throws ReplayInterrupted once `options.signal` aborts (after closing what the run opened).
 */
export async function runReplay(options: ReplayOptions): Promise<ReplayReport> {
  const stdout = options.stdout ?? process.stdout;
  const stderr = options.stderr ?? process.stderr;
  const estimator = (options.estimator ?? 'cl100k_base') as EstimatorName;
  if (!ESTIMATOR_NAMES.includes(estimator)) throw new ReplayError(`--estimator must be one of ${ESTIMATOR_NAMES.join(', ')}, got "${estimator}"`);
  const concurrency = positiveInt(options.concurrency, '--concurrency', 4);
  const htmlSessions = positiveInt(options.htmlSessions, '--html-sessions', 3);
  const limit = options.sessions === undefined ? undefined : positiveInt(options.sessions, '--sessions', 1);
  const plans = plansFromOptions(options.strategy, options.trigger);
  const outDir = path.resolve(options.out ?? './replay-report');
  let sessions = loadSessionsFile(options.file);
  if (limit !== undefined) sessions = sessions.slice(0, limit);
  const runId = options.runId ?? `replay-${Date.now().toString(36)}`;
  const fidelitySessions =
    options.fidelitySessions === undefined ? sessions.length : Math.min(sessions.length, positiveInt(options.fidelitySessions, '--fidelity-sessions', 1));
  // With --url the service reads its own environment; in process, this one, refused as the service would refuse it.
  const env = options.url ? process.env : await inProcessEnvironment(process.env);
  const fidelity =
    options.fidelity === false
      ? undefined
      : await refusedAsReplayError(() => new FidelityCollector(sessions, fidelitySessions, estimator, env, options.url?.replace(/\/+$/, '')));

  let close: (() => Promise<void>) | undefined;
  let client: SessionServiceClient;
  if (options.url) {
    let parsed: URL;
    try {
      parsed = new URL(options.url);
    } catch {
      throw new ReplayError(`--url "${options.url}" is not a URL (write e.g. http://127.0.0.1:3000)`);
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ReplayError(`--url "${options.url}" must be an http:// or https:// URL`);
    client = createReplayClient(options.url, options.apiKey);
    await probe(client, options.url);
  } else {
    const started = await refusedAsReplayError(() => startInProcessService(env));
    close = started.close;
    client = createReplayClient(started.url);
  }

  const startedAt = new Date();
  const t0 = Date.now();
  const signal = options.signal;
  const turnsOf = sessions.map((s) => splitTurns(s.messages));
  const totalTurns = turnsOf.reduce((a, t) => a + t.length, 0) * plans.length;
  // How far the run got, for the line an interruption prints.
  let turnsDone = 0;
  let phase = `strategy ${plans[0].name} (1 of ${plans.length})`;
  const interruption = () => new ReplayInterrupted(signalName(signal), turnsDone, totalTurns, phase);
  // Rejects once the signal aborts: the run stops waiting for whatever it was doing (settling, fidelity, examples).
  let stopWaiting = (): void => undefined;
  const interrupted = new Promise<never>((_resolve, reject) => {
    stopWaiting = () => reject(interruption());
  });
  signal?.addEventListener('abort', stopWaiting, { once: true });
  const progress = createProgress(stderr, options.progress ?? true);
  try {
    if (signal?.aborted) throw interruption();
    return await Promise.race([interrupted, replayAll()]);
  } catch (err) {
    if (signal?.aborted) throw err instanceof ReplayInterrupted ? err : interruption();
    // A 4xx anywhere else (reads, health): still one line, naming the request.
    throw refused(err);
  } finally {
    // Also when interrupted: the bar gives the terminal its cursor back before the last line.
    progress.stop();
    signal?.removeEventListener('abort', stopWaiting);
    if (close) await close();
  }

  async function replayAll(): Promise<ReplayReport> {
    progress.start(totalTurns, plans[0].name);
    const strategies: StrategyReport[] = [];
    const archivedTexts: ArchivedText[] = [];
    const summarizers: SummarizerIdentity[] = [];
    // runReplay's `finally` stops the progress display when this throws.
    for (const [index, plan] of plans.entries()) {
      phase = `strategy ${plan.name} (${index + 1} of ${plans.length})`;
      strategies.push(
        await replayPlan(client, plan, sessions, turnsOf, {
          runId,
          estimator,
          concurrency,
          progress: () => {
            turnsDone++;
            progress.tick(plan.name);
          },
          phase: (label) => progress.update(label),
          archivedTexts,
          summarizers,
          stderr,
          fidelity,
          signal,
        }),
      );
    }
    phase = 'every turn replayed; reading the results';
    progress.update('every turn replayed: reading the examples and the fidelity baselines');
    const validationFailures = strategies.reduce((a, s) => a + s.validationFailures, 0);
    const examples = await liveExamples(client, strategies, archivedTexts);
    const summarizer = options.url ? serviceSummarizerDescription(options.url.replace(/\/+$/, ''), summarizers) : summarizerDescription(env);
    const fidelityReport = fidelity
      ? await fidelity.report(
          plans,
          strategies.reduce((a, s) => a + s.fidelityTimeMs, 0),
          summarizer,
        )
      : undefined;
    // The bar gives the terminal its cursor back (and the lines stop) before the table is printed.
    progress.stop();
    const report: ReplayReport = {
      file: options.file,
      service: options.url ? options.url.replace(/\/+$/, '') : 'in-process (temporary embedded store)',
      estimator,
      startedAt: startedAt.toISOString(),
      wallTimeMs: Date.now() - t0,
      concurrency,
      strategies,
      examples,
      validationFailures,
      summarizer: summarizer.text,
      ...(fidelityReport ? { fidelity: fidelityReport } : {}),
    };
    // Interrupted while reading the results: runReplay has already rejected ("no report written").
    if (signal?.aborted) throw interruption();
    writeReports(outDir, report, htmlSessions);
    stdout.write(`\n${renderTable(report)}\n`);
    if (report.fidelity) stdout.write(`\n${renderFidelity(report.fidelity)}\n`);
    stdout.write(`\n${examples.lines.join('\n')}\n`);
    stdout.write(`\nreports: ${path.join(outDir, 'report.json')}, report.md, report.html\n`);
    return report;
  }
}

/** `session [2] (task_id 17, id replay-…-token-count-2)`: the file's index and label, and the id it is replayed under. */
function describeSession(session: ReplaySession, index: number, sessionId: string): string {
  const label = session.label !== String(index) ? `task_id ${session.label}, ` : '';
  return `session [${index}] (${label}id ${sessionId})`;
}

/**
 * Which messages of the session a rejected append was about: `message [7] (turn 3)` when the
 * service names the field (`parameter` / `field` = `messages[k]…`, k an index in the turn's
 * request), else the turn's whole range.
 */
function rejectedMessages(err: unknown, offset: number, count: number, turn: number): string {
  const body = err instanceof ServiceHttpError ? err.body : undefined;
  for (const key of ['parameter', 'field']) {
    const m = typeof body?.[key] === 'string' ? /^messages\[(\d+)\]/.exec(body[key]) : null;
    if (m && Number(m[1]) < count) return `message [${offset + Number(m[1])}] (turn ${turn}, messages[${m[1]}] of its request)`;
  }
  return count === 1 ? `message [${offset}] (turn ${turn})` : `messages [${offset}..${offset + count - 1}] (turn ${turn})`;
}

/**
 * A 4xx answer (the service refused the request: bad message, limit, key, conflict) becomes a
 * one-line {@link ReplayError} saying where, with the service's status, code and message; any
 * other error is rethrown as is.
 */
function refused(err: unknown, what?: string): unknown {
  if (!(err instanceof ServiceHttpError) || !err.isClientError) return err;
  return new ReplayError(`${what ?? `the service refused ${err.method} ${err.path}`}: ${err.status}${err.code ? ` ${err.code}` : ''}: ${err.detail}`);
}

interface PlanContext {
  runId: string;
  estimator: EstimatorName;
  concurrency: number;
  progress: () => void;
  /** Says what the plan does between turns (after its last turn: settling, reading the results). */
  phase: (label: string) => void;
  archivedTexts: ArchivedText[];
  /** The summarizers the service's compaction records named (the report's title says them against `--url`). */
  summarizers: SummarizerIdentity[];
  stderr: NodeJS.WritableStream;
  fidelity?: FidelityCollector;
  /** Aborted: no new session or turn is started. */
  signal?: AbortSignal;
}

async function replayPlan(
  client: SessionServiceClient,
  plan: ReplayPlan,
  sessions: ReplaySession[],
  turnsOf: Record<string, unknown>[][][],
  ctx: PlanContext,
): Promise<StrategyReport> {
  const started = Date.now();
  const ids = sessions.map((_, i) => `${ctx.runId}-${plan.name}-${i}`);
  const fed: Array<{ perTurn: Array<Omit<TurnRecord, 'tokensWithoutCompaction'> & { appendRevision: string }>; failures: number }> = [];
  const problems: WindowProblem[] = [];
  let failures = 0;
  const note = (found: WindowProblem[]) => {
    if (found.length === 0) return 0;
    for (const p of found) if (problems.length < 50) problems.push(p);
    failures++;
    return 1;
  };

  await pool(
    sessions,
    ctx.concurrency,
    async (_session, i) => {
      const sessionId = ids[i];
      const params = { path: { sessionId } };
      const session = describeSession(sessions[i], i, sessionId);
      try {
        await ok(client.PUT('/v1/sessions/{sessionId}/policy', { params, body: { strategy: plan.strategy, trigger: plan.trigger, estimator: ctx.estimator } }));
      } catch (err) {
        throw refused(err, `the service rejected the ${plan.name} policy of ${session}`);
      }
      const perTurn: (typeof fed)[number]['perTurn'] = [];
      let sessionFailures = 0;
      let offset = 0;
      for (const [t, batch] of turnsOf[i].entries()) {
        if (ctx.signal?.aborted) return;
        let ack: Schemas['AppendResult'];
        try {
          // the file's messages as they are: the service's parser judges them (a refusal names the message)
          ack = await ok(client.POST('/v1/sessions/{sessionId}/messages', { params, body: { messages: batch as Schemas['OpenAiInputMessage'][] } }));
        } catch (err) {
          throw refused(err, `the service rejected ${rejectedMessages(err, offset, batch.length, t + 1)} of ${session}`);
        }
        offset += batch.length;
        const reading = await readAndCheckWindow(client, sessionId, ctx.estimator, t + 1, ack.position);
        sessionFailures += note(reading.problems);
        perTurn.push({
          turn: t + 1,
          position: ack.position,
          revision: reading.revision,
          tokens: reading.tokens,
          summaries: reading.summaryCount,
          appendRevision: ack.revision,
        });
        ctx.progress();
      }
      fed[i] = { perTurn, failures: sessionFailures };
    },
    ctx.signal,
  );
  // Interrupted: stop here (runReplay has already rejected; nothing more is read).
  if (ctx.signal?.aborted) throw new Error('interrupted');

  ctx.phase(`${plan.name}: waiting for background compactions`);
  const settled = await waitForSettled(client);
  if (!settled) ctx.stderr.write(`replay: warning: background compactions of ${plan.name} were still running after 300 s; figures are read anyway\n`);
  const wallTimeMs = Date.now() - started;

  const sessionReports: SessionReport[] = new Array(sessions.length);
  let fidelityTimeMs = 0;
  // Reading every session back (and measuring its fidelity) takes seconds (about 20 s for 150 sessions): say how far it got.
  let read = 0;
  const reading = () => ctx.phase(`${plan.name}: reading results${ctx.fidelity ? ' and measuring fidelity' : ''}, ${read}/${sessions.length} sessions`);
  reading();
  await pool(
    sessions,
    ctx.concurrency,
    async (session, i) => {
      const sessionId = ids[i];
      const log = await readLog(client, sessionId);
      const final = await readAndCheckWindow(client, sessionId, ctx.estimator, 0);
      const finalFailures = note(final.problems);
      const compactions = await readCompactions(client, sessionId);
      for (const c of compactions) if (c.summarizer) ctx.summarizers.push({ kind: c.summarizer.kind, model: c.summarizer.model });

      const conversation = log.filter((e) => e.type === 'ConversationEventAppended');
      const costAt: Array<{ revision: bigint; cost: number }> = conversation.map((e) => ({
        revision: BigInt(e.revision),
        cost: e.data.costs?.[ctx.estimator] ?? 0,
      }));
      const tokensBefore = costAt.reduce((a, c) => a + c.cost, 0);
      for (const e of conversation) {
        const text = e.data.event?.text;
        if (e.archived && e.archivedBy && typeof text === 'string' && (e.kind === 'user' || e.kind === 'assistant')) {
          ctx.archivedTexts.push({ sessionId, plan: plan.name, eventId: e.eventId ?? '', kind: e.kind, text, archivedBy: e.archivedBy });
        }
      }
      const perTurn: TurnRecord[] = fed[i].perTurn.map(({ appendRevision, ...t }) => {
        const upTo = BigInt(appendRevision);
        return { ...t, tokensWithoutCompaction: costAt.filter((c) => c.revision <= upTo).reduce((a, c) => a + c.cost, 0) };
      });
      const compactionMarks: CompactionMark[] = compactions.map((c) => {
        const at = BigInt(c.position);
        let afterTurn = 0;
        for (const t of perTurn) if (BigInt(t.position) < at) afterTurn = t.turn;
        return {
          compactionId: c.compactionId,
          outcome: c.outcome,
          afterTurn,
          tokensBefore: c.tokensBefore,
          tokensAfter: c.tokensAfter,
          archivedCount: c.archivedIds.length,
          summarizerCalls: summarizerCallsOf(c),
        };
      });
      sessionReports[i] = {
        sessionId,
        label: session.label,
        turns: perTurn.length,
        events: conversation.length,
        tokensBefore,
        tokensAfter: final.tokens,
        peakTokens: Math.max(final.tokens, ...perTurn.map((t) => t.tokens)),
        compactions: compactions.filter((c) => c.outcome === 'compacted').length,
        // recorded automatic noops (a policy that cannot be met, DESIGN §3.5) are neither
        failedCompactions: compactions.filter((c) => c.outcome === 'failed').length,
        summarizerCalls: compactions.reduce((a, c) => a + summarizerCallsOf(c), 0),
        validationFailures: fed[i].failures + finalFailures,
        perTurn,
        compactionMarks,
      };
      if (ctx.fidelity) {
        const t0 = Date.now();
        const compacted = compactions.filter((c) => c.outcome === 'compacted').map((c) => c.position);
        await ctx.fidelity.measure(client, plan, i, sessionId, conversation, compacted);
        fidelityTimeMs += Date.now() - t0;
      }
      read++;
      reading();
    },
    ctx.signal,
  );

  const before = spread(sessionReports.map((s) => s.tokensBefore));
  const after = spread(sessionReports.map((s) => s.tokensAfter));
  const events = sessionReports.reduce((a, s) => a + s.events, 0);
  return {
    name: plan.name,
    strategy: plan.strategy,
    trigger: plan.trigger,
    sessions: sessionReports.length,
    turns: sessionReports.reduce((a, s) => a + s.turns, 0),
    events,
    tokensBefore: before,
    tokensAfter: after,
    peakTokens: spread(sessionReports.map((s) => s.peakTokens)),
    reduction: before.sum > 0 ? 1 - after.sum / before.sum : 0,
    compactions: sessionReports.reduce((a, s) => a + s.compactions, 0),
    failedCompactions: sessionReports.reduce((a, s) => a + s.failedCompactions, 0),
    summarizerCalls: sessionReports.reduce((a, s) => a + s.summarizerCalls, 0),
    validationFailures: failures,
    problems,
    wallTimeMs,
    eventsPerSecond: wallTimeMs > 0 ? events / (wallTimeMs / 1000) : 0,
    settled,
    sessionReports,
    fidelityTimeMs: fidelityTimeMs / ctx.concurrency,
  };
}

const FACT_PATTERNS = [/\b[a-z]+_[a-z]+_\d{3,5}\b/, /\b(?=[A-Z0-9]{6}\b)(?=[A-Z0-9]*\d)[A-Z0-9]*[A-Z][A-Z0-9]*\b/, /\b\d{4}-\d{2}-\d{2}\b/, /\b[A-Za-z]{9,}\b/];

async function liveExamples(client: SessionServiceClient, strategies: StrategyReport[], archived: ArchivedText[]): Promise<ReplayExamples> {
  const lines: string[] = [];
  const examples: ReplayExamples = { lines };
  const marks = new Map<string, { plan: string; mark: CompactionMark }>();
  for (const s of strategies)
    for (const r of s.sessionReports) for (const m of r.compactionMarks) marks.set(`${r.sessionId}/${m.compactionId}`, { plan: s.name, mark: m });

  // 1. Recall: a fact (user id, reservation code, date, long word) said in an archived user turn.
  const candidates = [...archived].sort((a, b) => (a.kind === b.kind ? 0 : a.kind === 'user' ? -1 : 1));
  search: for (const pattern of FACT_PATTERNS) {
    for (const c of candidates) {
      const fact = c.text.match(pattern)?.[0];
      if (!fact) continue;
      const page = await ok(client.GET('/v1/recall', { params: { query: { q: fact, sessionId: c.sessionId, archived: 'true', limit: '100' } } }));
      const hit = page.items.find((h) => h.eventId === c.eventId && h.archived && h.compactionId);
      if (!hit) continue;
      const info = marks.get(`${c.sessionId}/${hit.compactionId}`);
      examples.recall = {
        query: fact,
        sessionId: c.sessionId,
        eventId: hit.eventId,
        type: hit.type,
        snippet: hit.snippet.replace(/\s+/g, ' ').slice(0, 160),
        compactionId: hit.compactionId!,
        compactionStrategy: info?.plan,
        afterTurn: info?.mark.afterTurn,
        hits: page.items.length,
      };
      break search;
    }
  }
  lines.push('Live example 1: recall finds a fact from an archived turn');
  if (examples.recall) {
    const r = examples.recall;
    lines.push(`  GET /v1/recall?q=${r.query}&sessionId=${r.sessionId}&archived=true -> ${r.hits} hit(s)`);
    lines.push(`  ${r.type} event ${r.eventId}: "${r.snippet}"`);
    lines.push(`  archived by compaction ${r.compactionId}${r.compactionStrategy ? ` (${r.compactionStrategy}, after turn ${r.afterTurn})` : ''}`);
  } else {
    lines.push('  no archived user or assistant turn with a searchable fact (nothing was archived?)');
  }

  // 2. Compaction history of the session with the most compactions under a summarizing strategy (else any).
  const all = strategies.flatMap((s) => s.sessionReports.map((r) => ({ s, r })));
  const pick =
    all.filter(({ s }) => s.summarizerCalls > 0).sort((a, b) => b.r.compactions - a.r.compactions)[0] ??
    all.sort((a, b) => b.r.compactions - a.r.compactions)[0];
  lines.push('');
  lines.push('Live example 2: compaction history of one session');
  if (pick && pick.r.compactions + pick.r.failedCompactions > 0) {
    const compactions = await readCompactions(client, pick.r.sessionId);
    lines.push(`  GET /v1/sessions/${pick.r.sessionId}/compactions (${pick.s.name}, ${compactions.length} decisions)`);
    const rows: Array<Record<string, unknown>> = [];
    for (const c of compactions) {
      const mark = pick.r.compactionMarks.find((m) => m.compactionId === c.compactionId);
      const who = c.summarizer;
      rows.push({
        compactionId: c.compactionId,
        outcome: c.outcome,
        afterTurn: mark?.afterTurn,
        origin: c.origin,
        archived: c.archivedIds.length,
        kept: c.keptCount,
        tokensBefore: c.tokensBefore,
        tokensAfter: c.tokensAfter,
        saved: c.tokensSaved,
        summarizer: who ? `${who.kind}/${who.model} x${who.calls}` : null,
      });
      lines.push(
        `  ${c.compactionId}  ${c.outcome}  after turn ${mark?.afterTurn ?? '?'}  ${c.origin}  archived ${c.archivedIds.length}, kept ${c.keptCount ?? '?'}  tokens ${c.tokensBefore} -> ${c.tokensAfter} (saved ${c.tokensSaved})${who ? `  summarizer ${who.kind}/${who.model} x${who.calls}` : ''}${c.failure ? `  reason: ${c.failure.reason}${c.failure.failureKind ? ` (${c.failure.failureKind})` : ''}` : ''}`,
      );
    }
    const last = compactions[compactions.length - 1];
    if (last?.summary) {
      const one = await ok(
        client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
          params: { path: { sessionId: pick.r.sessionId, compactionId: last.compactionId } },
        }),
      );
      lines.push(`  latest summary (GET .../compactions/${last.compactionId}): "${(one.summary?.text ?? '').replace(/\s+/g, ' ').slice(0, 200)}…"`);
    }
    examples.history = { sessionId: pick.r.sessionId, compactions: rows };
  } else {
    lines.push('  no session compacted');
  }
  return examples;
}
