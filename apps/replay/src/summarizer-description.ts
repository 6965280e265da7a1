/**
 * Which summarizer wrote a replay's summaries, in words (the report's title and its fidelity
 * section say it). In process the replay's own environment configures the service it starts;
 * against `--url` only the service knows, and its compaction records name it
 * (`summarizer: { kind, model }` of `GET /v1/sessions/{id}/compactions`).
 */

/** A summarizer in words; `model` is true for a model (not the extractive summarizer). */
export interface SummarizerDescription {
  text: string;
  model: boolean;
}

/** A summarizer as a compaction record names it (`kind`: `extractive` or `openai-compatible`). */
export interface SummarizerIdentity {
  kind: string;
  model: string;
}

/**
 * The summarizer `env` selects (the same variables as the service's: `OPENAI_BASE_URL`,
 * `OPENAI_API_KEY`, `SUMMARIZER_MODEL`): what an in-process replay's service uses.
 */
export function summarizerDescription(env: NodeJS.ProcessEnv): SummarizerDescription {
  const base = env.OPENAI_BASE_URL?.trim();
  if (base) return { text: `model summarizer (${env.SUMMARIZER_MODEL?.trim() || 'gpt-4o-mini'} at ${base})`, model: true };
  if (env.OPENAI_API_KEY?.trim()) return { text: `model summarizer (${env.SUMMARIZER_MODEL?.trim() || 'gpt-4o-mini'} at the OpenAI API)`, model: true };
  return { text: 'extractive summarizer (OPENAI_BASE_URL not set)', model: false };
}

/**
 * The summarizer of the service at `serviceUrl`, from the identities its compaction records named
 * during the run (`kind/model`, each once, in first-seen order). No identity (no compaction called
 * a summarizer): says so, since the replay's environment does not tell what the service uses.
 */
export function serviceSummarizerDescription(serviceUrl: string, seen: readonly SummarizerIdentity[]): SummarizerDescription {
  const names = [...new Set(seen.map((s) => `${s.kind}/${s.model}`))];
  if (names.length === 0) return { text: `the summarizer of the service at ${serviceUrl} (no compaction of the run called it)`, model: false };
  return {
    text: `${names.length === 1 ? 'summarizer' : 'summarizers'} ${names.join(', ')} of the service at ${serviceUrl}`,
    model: seen.some((s) => s.kind !== 'extractive'),
  };
}
