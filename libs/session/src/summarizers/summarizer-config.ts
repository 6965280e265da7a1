/**
 * Builds the configured summarizer from the environment (DESIGN §3.7, issue 4 item 4).
 *
 * | variable | meaning | default |
 * | --- | --- | --- |
 * | `OPENAI_BASE_URL` | base URL of an OpenAI-compatible endpoint, incl. the version path (`http(s)://…/v1`), and the query parameters every call carries, if any (`…/v1?api-version=2024-10-21`: sent after the route, see `modelEndpointOf`); no fragment | the `openai` client's (`https://api.openai.com/v1`) |
 * | `OPENAI_API_KEY` | bearer key | none (a local endpoint may need none) |
 * | `SUMMARIZER_MODEL` | model name | `gpt-4o-mini` |
 * | `SUMMARIZER_TIMEOUT_MS` | per-attempt timeout, integer ms | 60000 |
 * | `SUMMARIZER_MAX_RETRIES` | retries of the `openai` client | 2 |
 * | `SUMMARIZER_MAX_INPUT_TOKENS` | bound on one call's input (cl100k_base tokens), at least {@link minimumSummarizerBound} (what the default prompt needs) | 12000 |
 * | `SUMMARIZER_MAX_CALLS_PER_PASS` | bound on one pass's calls (one per chunk; retries aside): a pass needing more fails `call_limit` | 250 |
 *
 * The ranges of the numbers are those of {@link SUMMARIZER_NUMBER_VARIABLES}.
 *
 * When neither `OPENAI_BASE_URL` nor `OPENAI_API_KEY` is set (empty counts as unset), the
 * extractive summarizer is used. Values are trimmed.
 */
import { DEFAULT_SHADOW_PROMPT, DEFAULT_SUMMARIZER_SYSTEM_PROMPT, getEstimator, minimumSummarizerInputTokens, STRATEGY_DEFAULTS } from '@lib/compaction';
import { configurationRefusalMessage, type ConfigurationRefusal } from '../configuration-refusal';
import { ExtractiveSummarizer } from './extractive-summarizer';
import { fetchBlockedPort } from './fetch-blocked-port';
import { ModelEndpointUrlError, modelEndpointOf } from './model-endpoint';
import {
  DEFAULT_SUMMARIZER_MAX_CALLS_PER_PASS,
  DEFAULT_SUMMARIZER_MAX_INPUT_TOKENS,
  DEFAULT_SUMMARIZER_MAX_RETRIES,
  DEFAULT_SUMMARIZER_MODEL,
  DEFAULT_SUMMARIZER_TIMEOUT_MS,
  OpenAiSummarizer,
} from './openai-summarizer';
import type { Summarizer } from './summarizer';

/** {@link minimumSummarizerBound}'s value, once computed. */
let leastBound: number | undefined;

/**
 * Smallest accepted `SUMMARIZER_MAX_INPUT_TOKENS` (cl100k_base tokens): the least bound whose
 * chunks keep room for events next to the default recap prompt, shadow prompt and the default
 * overlap of recursive-summarization (DESIGN §3.4, `minimumSummarizerInputTokens`).
 */
export function minimumSummarizerBound(): number {
  leastBound ??= minimumSummarizerInputTokens(
    {
      systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
      shadowPrompt: DEFAULT_SHADOW_PROMPT,
      overlapSize: STRATEGY_DEFAULTS['recursive-summarization'].overlapSize,
    },
    getEstimator('cl100k_base'),
  );
  return leastBound;
}

/** Largest accepted `SUMMARIZER_MAX_RETRIES`. */
export const MAX_SUMMARIZER_RETRIES = 10;

/**
 * What a number environment variable accepts: an integer from `min` to `max` (both included), in
 * plain decimal digits (spaces around them ignored); `fallback` when unset or blank. `what` names
 * the quantity for error messages (e.g. `a timeout in milliseconds`).
 */
export interface NumberVariable {
  readonly min: number;
  readonly max: number;
  readonly fallback: number;
  readonly what: string;
}

/**
 * The summarizer's number variables and their accepted ranges: the one table
 * {@link summarizerFromEnv} checks against and its messages quote (the service adds it to its own
 * table of number variables). `SUMMARIZER_MAX_INPUT_TOKENS`'s least value is
 * {@link minimumSummarizerBound}, computed on first read.
 */
export const SUMMARIZER_NUMBER_VARIABLES: Readonly<
  Record<'SUMMARIZER_TIMEOUT_MS' | 'SUMMARIZER_MAX_RETRIES' | 'SUMMARIZER_MAX_INPUT_TOKENS' | 'SUMMARIZER_MAX_CALLS_PER_PASS', NumberVariable>
> = {
  SUMMARIZER_TIMEOUT_MS: { min: 1, max: 24 * 3600 * 1000, fallback: DEFAULT_SUMMARIZER_TIMEOUT_MS, what: 'a timeout in milliseconds' },
  SUMMARIZER_MAX_RETRIES: { min: 0, max: MAX_SUMMARIZER_RETRIES, fallback: DEFAULT_SUMMARIZER_MAX_RETRIES, what: 'a number of retries' },
  SUMMARIZER_MAX_INPUT_TOKENS: {
    get min() {
      return minimumSummarizerBound();
    },
    max: 10_000_000,
    fallback: DEFAULT_SUMMARIZER_MAX_INPUT_TOKENS,
    what: 'a number of tokens (cl100k_base; at least what the default prompt needs, with room for events)',
  },
  SUMMARIZER_MAX_CALLS_PER_PASS: { min: 1, max: 100_000, fallback: DEFAULT_SUMMARIZER_MAX_CALLS_PER_PASS, what: 'a number of model calls per pass' },
};

/**
 * A summarizer setting in the environment is invalid: `refusal` names the variable, its value (masked), what is
 * wrong and what is expected; the message is {@link configurationRefusalMessage} of it (`NAME=<value>: <problem>: <fix>`).
 */
export class SummarizerConfigError extends Error {
  override readonly name = 'SummarizerConfigError';
  constructor(readonly refusal: ConfigurationRefusal) {
    super(configurationRefusalMessage(refusal));
  }

  /** The variable refused, e.g. `SUMMARIZER_TIMEOUT_MS`. */
  get variable(): string {
    return this.refusal.variable;
  }
}

/**
 * The summarizer the environment asks for: {@link OpenAiSummarizer} when `OPENAI_BASE_URL` or
 * `OPENAI_API_KEY` is set, else {@link ExtractiveSummarizer}. The numeric variables are
 * validated even when the extractive summarizer is chosen, so a typo never goes unnoticed.
 *
 * @throws SummarizerConfigError naming the variable (`OPENAI_BASE_URL` not an http(s) URL, one on
 *   port 0 or a port `fetch` refuses ({@link fetchBlockedPort}), one holding credentials (`user:password@`,
 *   which `fetch` refuses to send), or one with a fragment or a query parameter given twice,
 *   `SUMMARIZER_MODEL` blank, a number out of range or not an integer). The message never
 *   contains the API key, the URL's credentials nor the value of any of its query parameters (mask `endpoint-url`).
 */
export function summarizerFromEnv(env: NodeJS.ProcessEnv): Summarizer {
  const baseURL = read(env, 'OPENAI_BASE_URL');
  const apiKey = read(env, 'OPENAI_API_KEY');
  const modelRaw = env.SUMMARIZER_MODEL;
  if (modelRaw !== undefined && modelRaw.trim() === '' && modelRaw.length > 0) {
    throw new SummarizerConfigError({
      variable: 'SUMMARIZER_MODEL',
      value: modelRaw,
      problem: 'blank',
      fix: 'use a model name, e.g. gpt-4o-mini (or leave it unset for the default)',
    });
  }
  const model = read(env, 'SUMMARIZER_MODEL') ?? DEFAULT_SUMMARIZER_MODEL;
  const timeoutMs = integer(env, 'SUMMARIZER_TIMEOUT_MS');
  const maxRetries = integer(env, 'SUMMARIZER_MAX_RETRIES');
  const maxInputTokens = integer(env, 'SUMMARIZER_MAX_INPUT_TOKENS');
  const maxCallsPerPass = integer(env, 'SUMMARIZER_MAX_CALLS_PER_PASS');
  if (baseURL !== undefined) {
    let url: URL;
    try {
      url = new URL(baseURL);
    } catch {
      throw new SummarizerConfigError({
        variable: 'OPENAI_BASE_URL',
        value: env.OPENAI_BASE_URL!,
        mask: 'endpoint-url',
        problem: 'not a URL',
        fix: 'use an absolute http(s) URL including the version path, e.g. http://127.0.0.1:8080/v1',
      });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new SummarizerConfigError({
        variable: 'OPENAI_BASE_URL',
        value: env.OPENAI_BASE_URL!,
        mask: 'endpoint-url',
        problem: `not an http(s) URL (scheme ${url.protocol})`,
        fix: 'use http or https, e.g. https://api.openai.com/v1',
      });
    }
    if (url.port === '0')
      throw new SummarizerConfigError({
        variable: 'OPENAI_BASE_URL',
        value: env.OPENAI_BASE_URL!,
        mask: 'endpoint-url',
        problem: 'port 0 is no port a server can be reached on, so every call would fail',
        fix: "use the endpoint's port, e.g. http://127.0.0.1:8080/v1 (or none for the scheme's default)",
      });
    if (url.username !== '' || url.password !== '')
      throw new SummarizerConfigError({
        variable: 'OPENAI_BASE_URL',
        value: env.OPENAI_BASE_URL!,
        mask: 'endpoint-url',
        problem: 'it holds credentials (user:password@), which fetch refuses to send, so every call would fail before connecting',
        fix: 'remove them from the URL and give the key in OPENAI_API_KEY (sent as Authorization: Bearer …), e.g. https://llm.internal.example/v1',
      });
    const blocked = fetchBlockedPort(url);
    if (blocked !== undefined) {
      throw new SummarizerConfigError({
        variable: 'OPENAI_BASE_URL',
        value: env.OPENAI_BASE_URL!,
        mask: 'endpoint-url',
        problem: `port ${blocked} is one that fetch refuses to connect to (the Fetch standard's "bad ports"), so every call would fail`,
        fix: 'serve the endpoint on another port, e.g. 8080, and use that port',
      });
    }
    try {
      modelEndpointOf(baseURL);
    } catch (err) {
      // The fix of the fault found (a URL with both is refused for its fragment first).
      const repeated = err instanceof ModelEndpointUrlError && err.fault === 'repeated-parameter';
      throw new SummarizerConfigError({
        variable: 'OPENAI_BASE_URL',
        value: env.OPENAI_BASE_URL!,
        mask: 'endpoint-url',
        problem: (err as Error).message,
        fix: repeated
          ? 'give each query parameter once, e.g. https://x.openai.azure.com/openai/v1?api-version=2024-10-21'
          : 'remove the #… part (the query parameters every call needs go after ?), e.g. https://x.openai.azure.com/openai/v1?api-version=2024-10-21',
      });
    }
  }
  if (baseURL === undefined && apiKey === undefined) return new ExtractiveSummarizer();
  return new OpenAiSummarizer({ baseURL, apiKey, model, timeoutMs, maxRetries, maxInputTokens, maxCallsPerPass });
}

function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  if (v === undefined) return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

/** `env[name]` checked against its row of {@link SUMMARIZER_NUMBER_VARIABLES}; the message of a refusal states that range. */
function integer(env: NodeJS.ProcessEnv, name: keyof typeof SUMMARIZER_NUMBER_VARIABLES): number {
  const { min, max, fallback, what } = SUMMARIZER_NUMBER_VARIABLES[name];
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  const digits = /^\d+$/.test(raw);
  const n = Number(raw);
  if (!digits || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new SummarizerConfigError({
      variable: name,
      value: env[name]!,
      problem: digits ? 'out of range' : 'not an integer in plain decimal digits',
      fix: `use ${what}, an integer from ${min} to ${max}`,
    });
  }
  return n;
}
