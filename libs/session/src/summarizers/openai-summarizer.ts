/**
 * A summarizer backed by any OpenAI-compatible chat-completions endpoint, through the `openai`
 * package (DESIGN §3.7).
 *
 * The input is bounded in tokens: the request is split with `planSummaryChunks` (in the token
 * counting worker when large, see `TokenCountingPool`) into chunks
 * that fit `maxInputTokens` (system + user message, in the estimator's unit), summarized oldest
 * first; an event too large for one chunk goes in marked parts over consecutive chunks, nothing
 * left out. A previous summary too large for its share of a call is not cut either: it is split
 * the same way into marked parts that fill the first calls, so every part of it reaches the model
 * once. After each reply the next chunk is re-planned with that reply as its first current
 * summary (the running summary is folded forward and its real size is budgeted: a chunk it no
 * longer fits beside is split in two). A reply always goes whole into the next call when it
 * takes at most about half of a call's room; one too long to go whole into the next call beside
 * some of the content still to fold in fails the pass (the model is only told the pass's budget,
 * which can be larger, and no `max_tokens` is sent): it is never cut, and folding it again in
 * parts could go on without end when the replies do not shrink. The newest archived events are always
 * in the last call, so they are never the part that is cut off. Calls: one per chunk, about
 * (cost of the previous summaries and the archived events) / (room of a chunk), at most
 * `maxCallsPerPass` (`SUMMARIZER_MAX_CALLS_PER_PASS`, retries aside): a pass whose plan needs more
 * fails before its first call (`call_limit`, no call made), and one whose re-planned chunks come to
 * more (replies longer than planned) fails before the call past the bound, with the calls made.
 *
 * The summary budget: with `options.estimator` (the session's) and `request.maxSummaryTokens`,
 * every call's user message ends with the length the recap may have (`summaryLengthSection`, in
 * tokens, or characters for a `chars` session): the pass's budget for the last call, and at most
 * the room the next call keeps for the running summary for the others (`runningSummaryLengthLimit`); its cost is taken off the input bound when the
 * chunks are planned (when the bound cannot spare it, the model is not told). No `max_tokens` is
 * sent: a reply longer than the budget is used as it is (the pass then saves less). A reply the
 * endpoint cut off at its own output limit (`finish_reason: length`) is a failure, never a
 * silently truncated summary. So is a reply longer than `options.maxTextLength` (the longest text an
 * event may hold, `replyLengthRefusal`), an intermediate chunk's reply included: the pass fails at
 * the first one, before it is carried into the next call.
 *
 * Faults never throw: they resolve to `{ ok: false, reason, failureKind }` with a reason built from the
 * fault's kind and HTTP status only (never message text, never the API key), and its kind of the
 * closed set `COMPACTION_FAILURE_KINDS` chosen with it ({@link describeCallError}, `readReply`). Timeouts,
 * 408/409/429/5xx and connection errors are retried (`maxRetries`) by {@link withRetries}, as the
 * `openai` client would (exponential backoff, `Retry-After` / `retry-after-ms` honoured), except
 * that a wait the endpoint asks for over 60 s or `timeoutMs`, whichever is longer, fails the call at
 * once, and the call's signal ends a wait between attempts. A 429 pauses every call of this
 * summarizer (every session's passes) for the wait it asked for, else its call's backoff
 * ({@link EndpointPause}): each attempt waits the pause out first, and one whose pause has more
 * than that bound left fails at once, no call made; after the pause one attempt probes the
 * endpoint and the others follow once it is not answered 429.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type OpenAI from 'openai';
import {
  buildSummarizerMessages,
  type CompactionFailureKind,
  getEstimator,
  JOIN_SLACK,
  runningSummaryLengthLimit,
  runningSummaryRoom,
  summaryLengthLimit,
  summaryLengthSection,
  type SummaryRequest,
  type TokenEstimator,
} from '@lib/compaction';
import { answeredModelName, mergeAnsweredModels } from '../decider/summarizer-spend';
import { replyRefusal } from '../domain/reply-refusal';
import { CountingTimeoutError, CountingTooCostlyError } from '../errors';
import { sharedTokenCountingPool } from '../token-counting/token-counting-pool';
import type { SummarizeOptions, Summarizer, SummarizerIdentityInfo, SummarizerInputBound, SummarizerOutcome } from './summarizer';
import { callSignal } from './call-signal';
import { EndpointPause, EndpointPausedError } from './endpoint-pause';
import { RetryWaitTooLongError, withRetries } from './model-call-retries';
import { modelEndpointOf } from './model-endpoint';

/** Default request timeout, milliseconds (per HTTP attempt). */
export const DEFAULT_SUMMARIZER_TIMEOUT_MS = 60_000;
/** Default number of retries after a failed attempt ({@link withRetries}). */
export const DEFAULT_SUMMARIZER_MAX_RETRIES = 2;
/**
 * The longest wait before a retry (ms) that an endpoint's `Retry-After` may ask for is the larger of
 * this and the per-attempt timeout; a longer one fails the call at once (60 s: the bound the
 * `openai` client kept before 5.x).
 */
export const RETRY_WAIT_FLOOR_MS = 60_000;
/**
 * Default bound on the chat-completions calls of one pass (one per chunk; retries aside): at the default
 * input bound a call folds in about 8,000–9,000 tokens of events, so 250 calls about 2 million tokens,
 * or two events of `MAX_TEXT_LENGTH`'s default 1,000,000 emoji (118 calls each).
 */
export const DEFAULT_SUMMARIZER_MAX_CALLS_PER_PASS = 250;
/** Default bound on one call's input (system + user message), in estimator units. */
export const DEFAULT_SUMMARIZER_MAX_INPUT_TOKENS = 12_000;
/** The endpoint used when no base URL is given. */
export const DEFAULT_OPENAI_BASE_URL = 'https://api.openai.com/v1';
/** Default model name. */
export const DEFAULT_SUMMARIZER_MODEL = 'gpt-4o-mini';

/** Options of {@link OpenAiSummarizer}. */
export interface OpenAiSummarizerOptions {
  /**
   * Base URL including the version path, e.g. `http://127.0.0.1:8080/v1`, with the query parameters
   * every request carries, if any (`https://x.openai.azure.com/openai/v1?api-version=2024-10-21`: sent
   * as `POST …/v1/chat/completions?api-version=2024-10-21`, see `modelEndpointOf`). Default
   * {@link DEFAULT_OPENAI_BASE_URL}; the process environment is never read.
   */
  baseURL?: string;
  /**
   * Bearer key. Optional for local endpoints that need none (a placeholder is then sent,
   * because the `openai` client requires one). Never logged nor put in a failure reason.
   */
  apiKey?: string;
  /** Model name sent with every request. Default {@link DEFAULT_SUMMARIZER_MODEL}. */
  model?: string;
  /** Per-attempt timeout in milliseconds, integer > 0. Default 60000. */
  timeoutMs?: number;
  /** Retries after a failed attempt (the `openai` client's policy, see {@link withRetries}), integer ≥ 0. Default 2. */
  maxRetries?: number;
  /** Bound on one call's input in `estimator` units, integer > 0. Default 12000. */
  maxInputTokens?: number;
  /** Bound on the calls of one pass (one per chunk; an attempt's retries are not counted), integer > 0. Default {@link DEFAULT_SUMMARIZER_MAX_CALLS_PER_PASS}. */
  maxCallsPerPass?: number;
  /** Estimator used to size chunks. Default `cl100k_base`. */
  estimator?: TokenEstimator;
}

/** Placeholder bearer sent when no key is configured (local endpoints). */
const NO_KEY = 'no-key-configured';

/**
 * The `openai` package's client class, loaded on first use: a service with the extractive
 * summarizer never loads the package (about 150 modules).
 */
function openAiClient(): typeof OpenAI {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (require('openai') as typeof import('openai')).default;
}

/** See the module documentation. */
export class OpenAiSummarizer implements Summarizer {
  readonly identity: SummarizerIdentityInfo;
  /** Resolved settings (the key excluded). */
  readonly settings: { baseURL: string; timeoutMs: number; maxRetries: number; maxInputTokens: number; maxCallsPerPass: number; estimator: string };
  /** `maxInputTokens` with its estimator (see {@link Summarizer.inputBound}). */
  readonly inputBound: SummarizerInputBound;
  private readonly client: OpenAI;
  private readonly estimator: TokenEstimator;
  /** The endpoint's rate-limit pause, shared by every call of this summarizer (one per process: the service makes one summarizer). */
  private readonly pause = new EndpointPause();

  /**
   * @throws RangeError when `timeoutMs`, `maxRetries`, `maxInputTokens` or `maxCallsPerPass` is not an integer in
   *   range, or `model` is blank (the message names the option), or `baseURL` has a fragment or a
   *   query parameter twice ({@link modelEndpointOf}); TypeError when `baseURL` is not a URL.
   */
  constructor(options: OpenAiSummarizerOptions = {}) {
    const model = options.model ?? DEFAULT_SUMMARIZER_MODEL;
    if (typeof model !== 'string' || model.trim() === '') throw new RangeError('model must be a non-empty string');
    const timeoutMs = options.timeoutMs ?? DEFAULT_SUMMARIZER_TIMEOUT_MS;
    const maxRetries = options.maxRetries ?? DEFAULT_SUMMARIZER_MAX_RETRIES;
    const maxInputTokens = options.maxInputTokens ?? DEFAULT_SUMMARIZER_MAX_INPUT_TOKENS;
    if (!Number.isSafeInteger(timeoutMs) || timeoutMs <= 0) throw new RangeError('timeoutMs must be an integer > 0 (milliseconds)');
    if (!Number.isSafeInteger(maxRetries) || maxRetries < 0) throw new RangeError('maxRetries must be an integer ≥ 0');
    if (!Number.isSafeInteger(maxInputTokens) || maxInputTokens <= 0) throw new RangeError('maxInputTokens must be an integer > 0');
    const maxCallsPerPass = options.maxCallsPerPass ?? DEFAULT_SUMMARIZER_MAX_CALLS_PER_PASS;
    if (!Number.isSafeInteger(maxCallsPerPass) || maxCallsPerPass <= 0) throw new RangeError('maxCallsPerPass must be an integer > 0');
    this.estimator = options.estimator ?? getEstimator('cl100k_base');
    // a query of the URL (Azure's ?api-version=…) is sent after the route, not inside the path
    const endpoint = modelEndpointOf(options.baseURL ?? DEFAULT_OPENAI_BASE_URL);
    this.client = new (openAiClient())({
      // explicit, so the client never falls back to process.env (OPENAI_BASE_URL, OPENAI_ORG_ID, …)
      baseURL: endpoint.baseURL,
      ...(endpoint.defaultQuery === undefined ? {} : { defaultQuery: endpoint.defaultQuery }),
      adminAPIKey: null,
      organization: null,
      project: null,
      // the client's debug log can include request details; message text must never be logged
      logLevel: 'off',
      apiKey: options.apiKey && options.apiKey.length > 0 ? options.apiKey : NO_KEY,
      timeout: timeoutMs,
      // one attempt per request: the retries are withRetries' (the client's own wait no bound nor signal ends)
      maxRetries: 0,
      fetch: sameRealmErrorsFetch,
    });
    this.identity = { kind: 'openai-compatible', model };
    this.settings = { baseURL: this.client.baseURL, timeoutMs, maxRetries, maxInputTokens, maxCallsPerPass, estimator: this.estimator.name };
    this.inputBound = { maxInputTokens, estimator: this.estimator };
  }

  /**
   * Summarizes `request` in one or more calls (see the module documentation). Resolves to
   * `ok: true` with the last reply, trimmed; or to `ok: false` at the first failed call, the
   * first reply over `options.maxTextLength` characters, or a plan of more calls than
   * `maxCallsPerPass` ({@link callLimitFailure}), the
   * reason prefixed with `chunk k: ` when the input was split. Usage is summed over the
   * HTTP attempts made (`SummarizerUsage`): every attempt that reached the endpoint is a call, the
   * client's retries included (`retries`); one that never connected (see {@link neverConnected}) is
   * not; an attempt that failed, or a reply whose usage {@link readUsage} cannot read, counts in
   * `unreportedUsageCalls`, its tokens unknown. Every reply's `model` (an unusable reply's too)
   * goes into `answeredModels` (`answeredModelName`, `mergeAnsweredModels`).
   */
  async summarize(request: SummaryRequest, options: SummarizeOptions = {}): Promise<SummarizerOutcome> {
    const usage = { calls: 0, promptTokens: 0, completionTokens: 0, retries: 0, unreportedUsageCalls: 0, answeredModels: [] as string[] };
    let chunkCalls = 0;
    let planned: FirstPlan;
    try {
      planned = await this.firstPlan(request, options);
    } catch (err) {
      return { ok: false, ...planFailure(err), ...usage };
    }
    const { lengthLimit, reserved } = planned;
    let pending = planned.chunks;
    // a pass that would need more calls than the bound (less those its earlier attempts made) fails before its first one: nothing spent
    const spent = options.callsSpent ?? 0;
    if (spent + pending.length > this.settings.maxCallsPerPass)
      return { ok: false, ...callLimitFailure(spent, spent + pending.length, this.settings), ...usage };
    const chunked = pending.length > 1;
    // what the next call can carry of a reply, as the plans share the bound (the length section's cost taken off it)
    const room = chunked ? (runningSummaryRoom(request, this.settings.maxInputTokens - reserved, this.estimator) ?? 0) : 0;
    let running: string | null = null;
    while (pending.length > 0) {
      const chunk = pending[0];
      const prefix = chunked ? `chunk ${++chunkCalls}: ` : '';
      // between chunks, the caller says whether the pass is still wanted (it aborts the signal when not): no call is sent then
      if (chunkCalls > 1) await options.beforeNextCall?.();
      if (options.signal?.aborted) return { ok: false, reason: `${prefix}aborted`, failureKind: 'aborted', ...usage };
      // a reply that the next call carries is asked for no more than the room that call keeps for it
      const limit = lengthLimit && pending.length > 1 ? runningSummaryLengthLimit(lengthLimit, room) : lengthLimit;
      const { system, user } = buildSummarizerMessages(chunk, limit ? { lengthLimit: limit } : {});
      let completion: OpenAI.Chat.Completions.ChatCompletion;
      // every HTTP attempt of this call (the client's retries included) is entered in `attempts` by the fetch
      const attempts: AttemptLedger = { made: 0, reached: 0, retriesReached: 0 };
      // a signal of this call's own: the SDK never removes the listener it adds to the one it is given
      const call = callSignal(options.signal);
      try {
        completion = await attemptLedger.run(attempts, () =>
          withRetries(
            () =>
              this.client.chat.completions.create(
                {
                  model: this.identity.model,
                  messages: [
                    { role: 'system', content: system },
                    { role: 'user', content: user },
                  ],
                },
                { signal: call.signal },
              ),
            {
              maxRetries: this.settings.maxRetries,
              maxWaitMs: this.longestRetryWaitMs(),
              retryable: retriedFailure,
              headersOf: failedAnswerHeaders,
              signal: call.signal,
              pause: this.pause,
              rateLimited: rateLimitedAnswer,
            },
          ),
        );
      } catch (err) {
        // attempts that reached the endpoint are calls, none of them with usage reported
        addAttempts(usage, attempts, null);
        const failure = describeCallError(err, attempts, this.settings);
        return { ok: false, reason: prefix + failure.reason, failureKind: failure.failureKind, ...usage };
      } finally {
        call.release();
      }
      addAttempts(usage, attempts, readUsage(completion?.usage));
      // the model the endpoint says answered (it may differ from the one asked for: a dated version, a proxy's substitute)
      const answered = answeredModelName((completion as { model?: unknown } | null)?.model);
      if (answered !== null) usage.answeredModels = mergeAnsweredModels(usage.answeredModels, [answered]);
      const read = readReply(completion);
      if ('reason' in read) return { ok: false, reason: prefix + read.reason, failureKind: read.failureKind, ...usage };
      // a reply no event could hold (not valid Unicode, too long) is unusable, the running summary of a chunk included: it fails here, never carried on nor stored
      const refused = replyRefusal(read.text, options.maxTextLength);
      if (refused) return { ok: false, reason: prefix + refused, failureKind: 'invalid_reply', ...usage };
      running = read.text;
      const rest = pending.slice(1);
      if (rest.length === 0) break;
      // Fold the reply into the next chunk and re-plan that chunk only, so the running summary's
      // real size is budgeted (a chunk it no longer fits is split) and each event is planned
      // again once, not once per call (an event split into many parts would make that quadratic).
      // The running summary goes first: it covers older content than the next chunk's parts of a
      // previous summary, if any.
      const next: SummaryRequest = {
        ...request,
        currentSummaries: [running, ...rest[0].currentSummaries],
        toSummarize: rest[0].toSummarize,
        overlap: rest[0].overlap,
      };
      let replanned: SummaryRequest[];
      try {
        replanned = await this.plan(next, reserved);
      } catch (err) {
        return { ok: false, ...planFailure(err), ...usage };
      }
      // A reply too long to go whole into the next call beside some of what it must fold in is
      // never cut, nor split and folded again (a model whose replies do not shrink would never
      // finish): the pass fails. (A reply within about half a call's room always fits: see
      // planSummaryChunks.)
      const first = replanned[0];
      const progress = first.currentSummaries.length > 1 || first.toSummarize.length > 0 || replanned.length === 1;
      if (first.currentSummaries[0] !== running || !progress) {
        const units = `${this.estimator.count(running)} ${this.estimator.name} units`;
        return {
          ok: false,
          reason: `${prefix}reply too long to carry into the next call whole (${units}, input bound ${this.settings.maxInputTokens})`,
          failureKind: 'invalid_reply',
          ...usage,
        };
      }
      pending = [...replanned, ...rest.slice(1)];
      // replies longer than planned can split the chunks left: the bound holds on the calls made and those still planned
      if (spent + chunkCalls + pending.length > this.settings.maxCallsPerPass)
        return { ok: false, ...callLimitFailure(spent + chunkCalls, spent + chunkCalls + pending.length, this.settings), ...usage };
    }
    return { ok: true, text: running ?? '', ...usage };
  }

  /**
   * The calls a pass would make for `request` as planned now (one per chunk; replies longer than
   * planned may split the chunks left, adding some), with the bound on a pass's calls: for a dry run's
   * preview of a pass's cost. Null when the chunks cannot be planned (the planning missed its deadline).
   */
  async plannedCalls(request: SummaryRequest, options: Pick<SummarizeOptions, 'estimator'> = {}): Promise<{ planned: number; max: number } | null> {
    try {
      return { planned: (await this.firstPlan(request, options)).chunks.length, max: this.settings.maxCallsPerPass };
    } catch {
      return null;
    }
  }

  /**
   * The chunks of `request`'s first calls, planned with the length section's cost (from
   * `options.estimator`'s summary budget) taken off the bound; without the section when the bound
   * cannot spare it (the model is then not told the budget). One plan for a pass and its dry run.
   * @throws what `planSummaryChunks` throws in the counting pool (e.g. CountingTimeoutError).
   */
  private async firstPlan(request: SummaryRequest, options: Pick<SummarizeOptions, 'estimator'>): Promise<FirstPlan> {
    const lengthLimit = options.estimator ? summaryLengthLimit(request, options.estimator) : undefined;
    // the length section is part of every call's input: the chunks are planned with its cost taken off the bound
    const reserved = lengthLimit ? this.estimator.count(summaryLengthSection(lengthLimit)) + JOIN_SLACK : 0;
    try {
      return { chunks: await this.plan(request, reserved), lengthLimit, reserved };
    } catch (err) {
      if (reserved === 0) throw err;
      // a bound too tight for the section as well: the model is not told the budget
      return { chunks: await this.plan(request, 0), lengthLimit: undefined, reserved: 0 };
    }
  }

  /**
   * Milliseconds left of the pause the endpoint's last HTTP 429 set (see {@link EndpointPause}):
   * no call is sent to it until then; 0 when there is none.
   */
  pauseRemainingMs(): number {
    return this.pause.remainingMs();
  }

  /** `planSummaryChunks` under the bound less `reserved` units, off the request thread when the request is large (issue 17). */
  private async plan(request: SummaryRequest, reserved: number): Promise<SummaryRequest[]> {
    const chunks = await sharedTokenCountingPool().summaryChunks(request, this.settings.maxInputTokens - reserved, this.estimator);
    return chunks.length > 0 ? chunks : [request];
  }

  /** The longest wait before a retry an endpoint may ask for (ms): the larger of {@link RETRY_WAIT_FLOOR_MS} and the per-attempt timeout. */
  private longestRetryWaitMs(): number {
    return Math.max(RETRY_WAIT_FLOOR_MS, this.settings.timeoutMs);
  }
}

/** {@link OpenAiSummarizer}'s first plan of a pass: its chunks, the length the model is told (undefined: none), and that section's cost taken off the bound. */
interface FirstPlan {
  chunks: SummaryRequest[];
  lengthLimit: ReturnType<typeof summaryLengthLimit> | undefined;
  reserved: number;
}

/** A failed call's reason (human-readable, never message text nor a key) and its kind, chosen together. */
export interface SummarizerFailure {
  reason: string;
  failureKind: CompactionFailureKind;
}

/**
 * The failure of a pass whose chunks come to `needed` calls, more than `settings.maxCallsPerPass`
 * (`call_limit`), after `made` calls (0: refused before the first; earlier attempts of the pass
 * included, `SummarizeOptions.callsSpent`). The reason names the bound's variable and what to change:
 * raise it, or archive less per pass (a session whose backlog already needs more calls is not helped
 * by compacting more often alone).
 */
export function callLimitFailure(made: number, needed: number, settings: { maxCallsPerPass: number; maxInputTokens: number }): SummarizerFailure {
  const when = made === 0 ? 'no call made' : `stopped after ${made} ${made === 1 ? 'call' : 'calls'}`;
  return {
    reason:
      `the pass needs at least ${needed} model calls (its input in chunks of SUMMARIZER_MAX_INPUT_TOKENS=${settings.maxInputTokens}), ` +
      `more than SUMMARIZER_MAX_CALLS_PER_PASS=${settings.maxCallsPerPass} allows (${when}): raise SUMMARIZER_MAX_CALLS_PER_PASS, ` +
      'or archive less per pass (e.g. a commanded recursive-summarization pass with a larger maxEventsToKeep, repeated) and compact more often',
    failureKind: 'call_limit',
  };
}

/** The failure of a chunk plan that threw: `timeout` past the worker's deadline, else `other`. */
function planFailure(err: unknown): SummarizerFailure {
  const failureKind = err instanceof CountingTimeoutError || err instanceof CountingTooCostlyError ? 'timeout' : 'other';
  return { reason: `could not split the input into chunks: ${errorName(err)}`, failureKind };
}

/**
 * The reason and kind of a chat-completions call that threw (after its retries), the one place
 * both are chosen, so they never disagree: its kind and status, never its message (which may echo input).
 * The retries a reason names are those made (`attempts.made` − 1: `no retry`, `1 retry`, `2 retries`;
 * an HTTP status `after 2 retries`, or `, not retried`), not those `SUMMARIZER_MAX_RETRIES` allows:
 * an answer marked `x-should-retry: false` is not retried. A connection
 * error says whether an attempt of the call reached the endpoint (`attempts`, the
 * call's {@link AttemptLedger}): `could not reach the model endpoint` only when none did (the
 * call counts no calls, and no retries: the reason says so), `failed after the request was sent` when the last attempt did, `the last
 * attempt could not connect` when an earlier one did. A call the endpoint's pause stopped says
 * `no call made` when it made no attempt, `not retried` when it did. A fault a setting fixes
 * names it (newcomer ncllmfaults F9): 401/403 `; check OPENAI_API_KEY`, 404 or the code
 * `model_not_found` `; check SUMMARIZER_MODEL and OPENAI_BASE_URL`, no attempt connected `; check
 * OPENAI_BASE_URL and that the endpoint is up`, a timeout `; SUMMARIZER_TIMEOUT_MS sets the wait`.
 * Kinds (`COMPACTION_FAILURE_KINDS`): 401/403 `credentials`; 404 or `model_not_found`
 * `model_not_found`; 429, a too-long wait after a 429 and the endpoint's pause `rate_limited`; a
 * timeout `timeout`; the last attempt not connected `unreachable`; a connection lost after the
 * request was sent or while the answer arrived `connection_lost`; 5xx, 408, 409 (a too-long wait
 * after one too) and an error without a status `endpoint_error`; other statuses
 * `request_rejected`; malformed JSON `invalid_reply`; an abort `aborted`; anything else `other`.
 * Pure but for loading the `openai` package's classes.
 */
export function describeCallError(err: unknown, attempts: Pick<AttemptLedger, 'made' | 'reached'>, settings: { timeoutMs: number }): SummarizerFailure {
  const { timeoutMs } = settings;
  // The retries made (the ledger's attempts after the first), not those allowed: a failure not retried says `no retry`.
  const retries = retriesText(attempts.made - 1);
  const afterRetries = attempts.made > 1 ? ` after ${retries}` : ', not retried';
  const failed = (failureKind: CompactionFailureKind, reason: string): SummarizerFailure => ({ reason, failureKind });
  const { APIUserAbortError, APIConnectionTimeoutError, APIConnectionError, APIError } = openAiClient();
  if (err instanceof RetryWaitTooLongError) {
    const status = err.failure instanceof APIError && typeof err.failure.status === 'number' ? err.failure.status : undefined;
    const code =
      err.failure instanceof APIError && typeof err.failure.code === 'string' && KNOWN_ERROR_CODES.has(err.failure.code) ? ` (${err.failure.code})` : '';
    const what = status === 429 ? `rate limited: HTTP 429${code}` : `model endpoint error: HTTP ${status ?? 'error'}${code}`;
    const seconds = Math.ceil(err.waitMs / 1000);
    const bound = Math.ceil(err.maxWaitMs / 1000);
    return failed(
      status === 429 ? 'rate_limited' : 'endpoint_error',
      `${what}; the endpoint asked to wait ${seconds} s before a retry (${err.header}), longer than the service waits (${bound} s, the larger of 60 s and SUMMARIZER_TIMEOUT_MS): not retried`,
    );
  }
  if (err instanceof EndpointPausedError) {
    // the pause's end (to the second, rounded up), not a countdown: every call it refuses gives the same reason
    const until = new Date(Math.ceil(err.endsAtMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const bound = Math.ceil(err.maxWaitMs / 1000);
    const outcome = attempts.made === 0 ? 'no call made' : 'not retried';
    return failed(
      'rate_limited',
      `rate limited: every call to the model endpoint is paused after its HTTP 429 until ${until}, longer than the service waits (${bound} s, the larger of 60 s and SUMMARIZER_TIMEOUT_MS): ${outcome}`,
    );
  }
  if (err instanceof APIUserAbortError) return failed('aborted', 'aborted');
  if (err instanceof APIConnectionTimeoutError)
    return failed('timeout', `timed out after ${timeoutMs} ms per attempt (${retries}); SUMMARIZER_TIMEOUT_MS sets the wait`);
  if (err instanceof APIConnectionError) {
    if (errorName(err.cause) === REPLY_CUT_OFF)
      return failed('connection_lost', `the connection to the model endpoint was lost while its answer arrived (connection error, ${retries})`);
    // "could not reach" only when no attempt did (calls: 0); else one may have reached the model
    if (attempts.reached === 0)
      return failed(
        'unreachable',
        `could not reach the model endpoint (connection error, ${retries}; no attempt connected, so none is counted in calls or retries); check OPENAI_BASE_URL and that the endpoint is up`,
      );
    if (neverConnected(err))
      return failed(
        'unreachable',
        `the last attempt could not connect to the model endpoint (${attemptsText(attempts.reached)} before it reached it; connection error, ${retries})`,
      );
    return failed('connection_lost', `the connection to the model endpoint failed after the request was sent (connection error, ${retries})`);
  }
  if (err instanceof APIError) {
    const status = typeof err.status === 'number' ? err.status : undefined;
    const code = typeof err.code === 'string' && KNOWN_ERROR_CODES.has(err.code) ? ` (${err.code})` : '';
    if (status === 429) return failed('rate_limited', `rate limited: HTTP 429${code}${afterRetries}`);
    if (status === 401 || status === 403)
      return failed('credentials', `the model endpoint rejected the credentials: HTTP ${status}${code}; check OPENAI_API_KEY`);
    if (typeof status === 'number' && (status >= 500 || status === 408 || status === 409))
      return failed('endpoint_error', `model endpoint error: HTTP ${status}${code}${afterRetries}`);
    if (typeof status === 'number' && status >= 300 && status < 400)
      return failed(
        'request_rejected',
        `the model endpoint answered a redirect: HTTP ${status}; redirects are not followed (conversation text goes only to OPENAI_BASE_URL): set OPENAI_BASE_URL to the endpoint itself`,
      );
    if (typeof status === 'number') {
      // no such model or route: the settings that name them
      if (status === 404 || err.code === 'model_not_found')
        return failed('model_not_found', `model endpoint rejected the request: HTTP ${status}${code}; check SUMMARIZER_MODEL and OPENAI_BASE_URL`);
      return failed('request_rejected', `model endpoint rejected the request: HTTP ${status}${code}`);
    }
    return failed('endpoint_error', `model endpoint error${code}`);
  }
  const name = errorName(err);
  if (name === 'SyntaxError') return failed('invalid_reply', 'malformed JSON in the model reply');
  if (name === 'AbortError') return failed('aborted', 'aborted');
  return failed('other', `unexpected error: ${errorName(err)}`);
}

/**
 * Whether a failed attempt is retried, as the `openai` client decides (6.x `shouldRetry`): a
 * connection error or a timeout; an answer with `x-should-retry: true`, or without
 * `x-should-retry: false` one of 408, 409, 429 or 5xx. Never an abort by the caller.
 */
function retriedFailure(err: unknown): boolean {
  const { APIUserAbortError, APIConnectionError, APIError } = openAiClient();
  if (err instanceof APIUserAbortError) return false;
  if (err instanceof APIConnectionError) return true;
  if (!(err instanceof APIError)) return false;
  const answer = err as { headers?: Headers; status?: unknown };
  const asked = answer.headers?.get('x-should-retry');
  if (asked === 'true' || asked === 'false') return asked === 'true';
  const status = answer.status;
  return status === 408 || status === 409 || status === 429 || (typeof status === 'number' && status >= 500);
}

/** Whether a failed attempt was answered HTTP 429 (rate limited): it pauses every call to the endpoint ({@link EndpointPause}). */
function rateLimitedAnswer(err: unknown): boolean {
  const { APIError } = openAiClient();
  return err instanceof APIError && err.status === 429;
}

/** The headers of the answer that failed an attempt (an `APIError` with an answer), else undefined. */
function failedAnswerHeaders(err: unknown): Headers | undefined {
  const { APIError } = openAiClient();
  return err instanceof APIError ? (err as { headers?: Headers }).headers : undefined;
}

/**
 * The error codes of OpenAI's API reference ("Error codes", and the `code` of its error objects)
 * that a failure reason may name, e.g. `HTTP 401 (invalid_api_key)`. Any other `code` an endpoint
 * sends is left out of the reason: it is text chosen by the endpoint, which may echo the input
 * (a newcomer's fake endpoint answered `ctx_<text of the session>`), and reasons are stored in the
 * log and written to the service's log lines, which must never hold message text.
 */
export const KNOWN_ERROR_CODES: ReadonlySet<string> = new Set([
  'invalid_api_key',
  'invalid_organization',
  'invalid_project',
  'insufficient_quota',
  'rate_limit_exceeded',
  'billing_hard_limit_reached',
  'account_deactivated',
  'unsupported_country_region_territory',
  'model_not_found',
  'context_length_exceeded',
  'string_above_max_length',
  'invalid_request_error',
  'invalid_value',
  'unsupported_parameter',
  'unsupported_value',
  'content_filter',
  'content_policy_violation',
  'server_error',
  'engine_overloaded',
  'model_overloaded',
  'timeout',
]);

/** Reads the reply text, or the reason it is unusable (no choices, refusal, filter, blank) with its kind (`refused` or `invalid_reply`). */
function readReply(completion: unknown): { text: string } | SummarizerFailure {
  const invalid = (reason: string): SummarizerFailure => ({ reason, failureKind: 'invalid_reply' });
  // the client reads an answer as JSON only when its Content-Type says so: anything else arrives as text (newcomer ncmodel71 F3)
  if (typeof completion === 'string')
    return invalid(
      /^\s*data:/.test(completion)
        ? 'malformed reply: a streamed reply (server-sent "data:" lines), which the service does not ask for (stream is not set): the endpoint must answer one JSON chat completion'
        : 'malformed reply: its Content-Type is not application/json, so it was read as text: the endpoint must answer its chat completion as application/json',
    );
  if (!completion || typeof completion !== 'object') return invalid('malformed reply: not a JSON object');
  const choices = (completion as { choices?: unknown }).choices;
  if (!Array.isArray(choices) || choices.length === 0) return invalid('malformed reply: no choices');
  const choice = choices[0] as { finish_reason?: unknown; message?: { content?: unknown; refusal?: unknown } } | null;
  if (!choice || typeof choice !== 'object' || !choice.message || typeof choice.message !== 'object') {
    return invalid('malformed reply: choices[0].message missing');
  }
  if (typeof choice.message.refusal === 'string' && choice.message.refusal.length > 0) {
    return { reason: 'the model refused to summarize (message.refusal set)', failureKind: 'refused' };
  }
  if (choice.finish_reason === 'content_filter') return { reason: 'the model refused to summarize (finish_reason content_filter)', failureKind: 'refused' };
  // a reply cut off by the endpoint's output limit lost its end (work in progress, next step): never used as a summary
  if (choice.finish_reason === 'length') return invalid('reply cut off at the output token limit (finish_reason length)');
  const content = choice.message.content;
  if (content === null || content === undefined) return invalid('blank reply: message content is null');
  // some OpenAI-compatible proxies answer text parts, as requests may send them (newcomer ncmodel71 F5): their texts, joined
  const parts = Array.isArray(content) ? textPartsText(content) : undefined;
  if (Array.isArray(content) && parts === undefined) return invalid('malformed reply: message content is an array with a part that is not text');
  if (typeof content !== 'string' && parts === undefined) return invalid('malformed reply: message content is not a string');
  const whole = parts ?? (content as string);
  const text = whole.trim();
  if (text.length === 0) return invalid(whole.length === 0 ? 'blank reply: empty message content' : 'blank reply: whitespace-only message content');
  return { text };
}

/** The texts of `parts`, joined, when every part is a text part (`{"type":"text","text":"…"}`); undefined otherwise. Pure. */
function textPartsText(parts: unknown[]): string | undefined {
  const texts: string[] = [];
  for (const part of parts) {
    const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
    if (type !== 'text' || typeof text !== 'string') return undefined;
    texts.push(text);
  }
  return texts.join('');
}

/**
 * The token usage a reply reported (its `usage` object): prompt and completion tokens, each a
 * non-negative integer given as a JSON number or a decimal string of one (`"250"`, as some
 * OpenAI-compatible proxies send); null when either figure is absent or unreadable (no `usage`,
 * only `total_tokens`, …): the call's tokens are then unknown, never taken for 0. Pure.
 */
export function readUsage(usage: unknown): { promptTokens: number; completionTokens: number } | null {
  if (typeof usage !== 'object' || usage === null) return null;
  const { prompt_tokens: prompt, completion_tokens: completion } = usage as { prompt_tokens?: unknown; completion_tokens?: unknown };
  const promptTokens = tokenCount(prompt);
  const completionTokens = tokenCount(completion);
  return promptTokens === null || completionTokens === null ? null : { promptTokens, completionTokens };
}

/** A token count: a non-negative safe integer, or a string of decimal digits holding one; null otherwise. */
function tokenCount(x: unknown): number | null {
  const n = typeof x === 'number' ? x : typeof x === 'string' && /^\s*\d{1,15}\s*$/.test(x) ? Number(x) : NaN;
  return Number.isSafeInteger(n) && n >= 0 ? n : null;
}

/** The HTTP attempts of one chat-completions call, counted by {@link sameRealmErrorsFetch}. */
interface AttemptLedger {
  /** Attempts made (requests started), retries included. */
  made: number;
  /** Attempts that reached the endpoint (see {@link neverConnected}: a refused connection did not). */
  reached: number;
  /** Of `reached`, attempts that were a retry (not the call's first attempt). */
  retriesReached: number;
}

/**
 * The ledger of the chat-completions call in progress in this async context: the `openai` client
 * makes every attempt of a call (its retries included) inside the call's context, so concurrent
 * calls of several passes each count their own.
 */
const attemptLedger = new AsyncLocalStorage<AttemptLedger>();

/**
 * Adds one chat-completions call's attempts to `usage`: every attempt that reached the endpoint is
 * a call (`retries` those that were retries), and all of them but the answered one, or all of
 * them when the answer's usage is unknown (`reported` null), are calls with unreported usage.
 */
function addAttempts(
  usage: Required<Pick<SummarizerOutcome, 'calls' | 'promptTokens' | 'completionTokens' | 'retries' | 'unreportedUsageCalls'>>,
  attempts: AttemptLedger,
  reported: { promptTokens: number; completionTokens: number } | null,
): void {
  usage.calls += attempts.reached;
  usage.retries += attempts.retriesReached;
  usage.unreportedUsageCalls += Math.max(0, attempts.reached - (reported ? 1 : 0));
  if (reported) {
    usage.promptTokens += reported.promptTokens;
    usage.completionTokens += reported.completionTokens;
  }
}

/** `no retry` (for 0 or fewer), `1 retry` or `n retries`. */
function retriesText(n: number): string {
  return n <= 0 ? 'no retry' : n === 1 ? '1 retry' : `${n} retries`;
}

/** `1 attempt` or `n attempts`. */
function attemptsText(n: number): string {
  return n === 1 ? '1 attempt' : `${n} attempts`;
}

/** Name of the error {@link sameRealmErrorsFetch} rejects with when a connection is lost while the answer arrives. */
const REPLY_CUT_OFF = 'ReplyCutOffError';

/**
 * Socket error codes of a connection that was never made (refused, no route, name not
 * resolved): the request was never sent, so no model saw it.
 */
const NOT_CONNECTED_CODES: ReadonlySet<string> = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL']);

/**
 * Whether a failed chat-completions call (the `openai` client's error, after its retries) never
 * connected to the endpoint: a connection error, not a timeout, whose cause (followed through
 * `cause` and an `AggregateError`'s `errors`, as Node reports a host of several addresses) has one
 * of {@link NOT_CONNECTED_CODES} and no other code. Such a call is not counted in `calls`: a
 * timeout, a reset or an abort may have reached the model (and be billed), so they are. Pure.
 */
export function neverConnected(err: unknown): boolean {
  const { APIConnectionError, APIConnectionTimeoutError } = openAiClient();
  if (!(err instanceof APIConnectionError) || err instanceof APIConnectionTimeoutError) return false;
  return refusedBeforeConnecting(err.cause);
}

/**
 * Whether a failed `fetch` (its rejection) never connected: its cause chain (followed through
 * `cause` and an `AggregateError`'s `errors`) has one of {@link NOT_CONNECTED_CODES} and no other
 * code. An abort (a timeout) or a reset is not: the request may have reached the model. Pure.
 */
function refusedBeforeConnecting(err: unknown): boolean {
  const codes: string[] = [];
  const visit = (e: unknown, depth: number): void => {
    if (typeof e !== 'object' || e === null || depth > 8) return;
    const { code, cause, errors } = e as { code?: unknown; cause?: unknown; errors?: unknown };
    if (typeof code === 'string') codes.push(code);
    visit(cause, depth + 1);
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return codes.length > 0 && codes.every((code) => NOT_CONNECTED_CODES.has(code));
}

/** The class name of a thrown value (its `name`), never its message. Works across realms. */
function errorName(err: unknown): string {
  if (typeof err === 'object' && err !== null && typeof (err as { name?: unknown }).name === 'string') {
    const name = (err as { name: string }).name;
    return /^[A-Za-z0-9_$.]{1,64}$/.test(name) ? name : 'Error';
  }
  return typeof err;
}

/**
 * `fetch` for the `openai` client, one HTTP attempt per call:
 * - a redirect (3xx) is not followed but answered as it is, which fails the call (`request_rejected`,
 *   saying so): the request carries conversation text, and an endpoint must not send it to a host
 *   the operator never configured;
 * - the answer's body is read whole before it resolves, so a connection lost while the answer
 *   arrives fails the attempt as a connection error (name {@link REPLY_CUT_OFF}), which the client
 *   retries as any other, instead of failing later as it parses the body; the attempt's timeout
 *   covers the body too;
 * - the attempt is entered in the {@link attemptLedger} of the call in progress: made, and reached
 *   the endpoint unless the connection was refused before it was made;
 * - abort errors are rethrown as errors of this realm. Node's fetch rejects with a `DOMException`
 *   of the outer realm, which the `openai` client cannot recognise as an abort when this code runs
 *   in another realm (a jest sandbox, a vm context); it would then report a timeout as a plain
 *   connection error.
 */
const sameRealmErrorsFetch: typeof fetch = async (input, init) => {
  const ledger = attemptLedger.getStore();
  const retry = ledger !== undefined && ledger.made > 0;
  if (ledger) ledger.made++;
  const reached = (): void => {
    if (!ledger) return;
    ledger.reached++;
    if (retry) ledger.retriesReached++;
  };
  let response: Response;
  try {
    // A redirect is answered as it is, never followed: conversation text goes only to OPENAI_BASE_URL (newcomer ncsec62 F1).
    response = await fetch(input, { ...init, redirect: 'manual' });
  } catch (err) {
    if (!refusedBeforeConnecting(err)) reached();
    throw sameRealmError(err);
  }
  reached();
  let body: ArrayBuffer;
  try {
    body = await response.arrayBuffer();
  } catch (err) {
    const name = errorName(err);
    if (name === 'AbortError' || name === 'TimeoutError') throw sameRealmError(err);
    const e = new Error('the connection was lost while the answer arrived', { cause: err });
    e.name = REPLY_CUT_OFF;
    throw e;
  }
  return new Response(body.byteLength === 0 ? null : body, { status: response.status, statusText: response.statusText, headers: response.headers });
};

/** `err`, or for an abort (a timeout) an `AbortError` of this realm (see {@link sameRealmErrorsFetch}). */
function sameRealmError(err: unknown): unknown {
  const name = errorName(err);
  if (name !== 'AbortError' && name !== 'TimeoutError') return err;
  const e = new Error('The operation was aborted');
  e.name = 'AbortError';
  return e;
}
