/**
 * Builds the configured summarizer from the environment (DESIGN §3.7, issue 4 item 4).
 *
 * | variable | meaning | default |
 * | --- | --- | --- |
 * | `OPENAI_BASE_URL` | base URL of an OpenAI-compatible endpoint, incl. the version path (`http(s)://…/v1`) | the `openai` client's (`https://api.openai.com/v1`) |
 * | `OPENAI_API_KEY` | bearer key | none (a local endpoint may need none) |
 * | `SUMMARIZER_MODEL` | model name | `gpt-4o-mini` |
 * | `SUMMARIZER_TIMEOUT_MS` | per-attempt timeout, integer ms from 1 to 86,400,000 | 60000 |
 * | `SUMMARIZER_MAX_RETRIES` | retries of the `openai` client, integer 0–10 | 2 |
 * | `SUMMARIZER_MAX_INPUT_TOKENS` | bound on one call's input (cl100k_base tokens), integer from {@link minimumSummarizerBound} (what the default prompt needs) to 10,000,000 | 12000 |
 *
 * When neither `OPENAI_BASE_URL` nor `OPENAI_API_KEY` is set (empty counts as unset), the
 * extractive summarizer is used. Values are trimmed.
 */
import { DEFAULT_SHADOW_PROMPT, DEFAULT_SUMMARIZER_SYSTEM_PROMPT, getEstimator, minimumSummarizerInputTokens, STRATEGY_DEFAULTS } from '@lib/compaction';
import { ExtractiveSummarizer } from './extractive-summarizer';
import {
  DEFAULT_SUMMARIZER_MAX_INPUT_TOKENS,
  DEFAULT_SUMMARIZER_MAX_RETRIES,
  DEFAULT_SUMMARIZER_MODEL,
  DEFAULT_SUMMARIZER_TIMEOUT_MS,
  OpenAiSummarizer,
} from './openai-summarizer';
import type { Summarizer } from './summarizer';

/**
 * Smallest accepted `SUMMARIZER_MAX_INPUT_TOKENS` (cl100k_base tokens): the least bound whose
 * chunks keep room for events next to the default recap prompt, shadow prompt and the default
 * overlap of recursive-summarization (DESIGN §3.4, `minimumSummarizerInputTokens`).
 */
export function minimumSummarizerBound(): number {
  return minimumSummarizerInputTokens(
    {
      systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
      shadowPrompt: DEFAULT_SHADOW_PROMPT,
      overlapSize: STRATEGY_DEFAULTS['recursive-summarization'].overlapSize,
    },
    getEstimator('cl100k_base'),
  );
}
/** Largest accepted `SUMMARIZER_MAX_RETRIES`. */
export const MAX_SUMMARIZER_RETRIES = 10;

/** A summarizer setting in the environment is invalid. `variable` names it; the message (`NAME=<value>: what to fix`) says what is expected. */
export class SummarizerConfigError extends Error {
  override readonly name = 'SummarizerConfigError';
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The summarizer the environment asks for: {@link OpenAiSummarizer} when `OPENAI_BASE_URL` or
 * `OPENAI_API_KEY` is set, else {@link ExtractiveSummarizer}. The numeric variables are
 * validated even when the extractive summarizer is chosen, so a typo never goes unnoticed.
 *
 * @throws SummarizerConfigError naming the variable (`OPENAI_BASE_URL` not an http(s) URL,
 *   `SUMMARIZER_MODEL` blank, a number out of range or not an integer). The message never
 *   contains the API key.
 */
export function summarizerFromEnv(env: NodeJS.ProcessEnv): Summarizer {
  const baseURL = read(env, 'OPENAI_BASE_URL');
  const apiKey = read(env, 'OPENAI_API_KEY');
  const modelRaw = env.SUMMARIZER_MODEL;
  if (modelRaw !== undefined && modelRaw.trim() === '' && modelRaw.length > 0) {
    throw new SummarizerConfigError(
      'SUMMARIZER_MODEL',
      `SUMMARIZER_MODEL=${JSON.stringify(modelRaw.slice(0, 32))}: blank: use a model name, e.g. gpt-4o-mini (or leave it unset for the default)`,
    );
  }
  const model = read(env, 'SUMMARIZER_MODEL') ?? DEFAULT_SUMMARIZER_MODEL;
  const timeoutMs = integer(env, 'SUMMARIZER_TIMEOUT_MS', DEFAULT_SUMMARIZER_TIMEOUT_MS, 1, 24 * 3600 * 1000, 'a timeout in milliseconds');
  const maxRetries = integer(env, 'SUMMARIZER_MAX_RETRIES', DEFAULT_SUMMARIZER_MAX_RETRIES, 0, MAX_SUMMARIZER_RETRIES, 'a number of retries');
  const maxInputTokens = integer(env, 'SUMMARIZER_MAX_INPUT_TOKENS', DEFAULT_SUMMARIZER_MAX_INPUT_TOKENS, 1, 10_000_000, 'a number of tokens');
  const least = minimumSummarizerBound();
  if (maxInputTokens < least) {
    throw new SummarizerConfigError(
      'SUMMARIZER_MAX_INPUT_TOKENS',
      `SUMMARIZER_MAX_INPUT_TOKENS=${maxInputTokens}: cannot hold the summarizer's default prompt with room for events: use at least ${least} (cl100k_base tokens)`,
    );
  }
  if (baseURL !== undefined) {
    let url: URL;
    try {
      url = new URL(baseURL);
    } catch {
      throw new SummarizerConfigError(
        'OPENAI_BASE_URL',
        `OPENAI_BASE_URL=${JSON.stringify(baseURL.slice(0, 64))}: not a URL: use an absolute http(s) URL including the version path, e.g. http://127.0.0.1:8080/v1`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new SummarizerConfigError('OPENAI_BASE_URL', `OPENAI_BASE_URL=${url.protocol}//…: use http or https, e.g. https://api.openai.com/v1`);
    }
  }
  if (baseURL === undefined && apiKey === undefined) return new ExtractiveSummarizer();
  return new OpenAiSummarizer({ baseURL, apiKey, model, timeoutMs, maxRetries, maxInputTokens });
}

function read(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name];
  if (v === undefined) return undefined;
  const t = v.trim();
  return t === '' ? undefined : t;
}

function integer(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number, what: string): number {
  const raw = read(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) {
    throw new SummarizerConfigError(name, `${name}=${JSON.stringify(raw.slice(0, 32))}: not valid: use ${what}, an integer from ${min} to ${max}`);
  }
  const n = Number(raw);
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw new SummarizerConfigError(name, `${name}=${JSON.stringify(raw.slice(0, 32))}: not valid: use ${what}, an integer from ${min} to ${max}`);
  }
  return n;
}
