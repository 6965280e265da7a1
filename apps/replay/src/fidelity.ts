/**
 * Context fidelity (issue 16): what the model still knows at the end of a replayed session.
 *
 * For every fact of a conversation ({@link extractFacts}) at the end of the session:
 * - **window retention**: the fact is mentioned in the active window the model would get (the
 *   OpenAI rendering, summaries included);
 * - **recall reach**: `GET /v1/recall?q=<fact>&sessionId=…&limit=5` answers, within those 5 hits,
 *   the event where the fact first appears as recall reads words (`Fact.firstHeldIn`: the first
 *   event after the system message that holds the fact's words, so `Noah` first appears in
 *   `noah_muller_9847` when the user gave that id before the profile gave the name). Recall puts
 *   a session's first mention first (`firstMention`), then repeats, echoes and summaries by
 *   relevance; {@link FactResult.firstStatementRank} tells whether the first user or tool
 *   statement of the value (`Fact.messageIndex`) was among the 5 too;
 * - **passes**: the compactions recorded after the fact's event was appended.
 *
 * Baselines on the same conversations (no service): LangChain `trimMessages` on a token budget
 * (a dropped fact is lost: there is no recall), and, for a summarizing strategy, the same final
 * window with its summary replaced by the same summarizer's summary of the first
 * {@link FIRST_CHARS_BASELINE} characters of the archived text (what input selection is worth).
 */
import { trimMessages, type BaseMessage } from '@langchain/core/messages';
import { DEFAULT_SHADOW_PROMPT, DEFAULT_SUMMARIZER_SYSTEM_PROMPT, formatEvent, type SessionEvent } from '@lib/compaction';
import type { Summarizer } from '../../../libs/session/src/summarizers/summarizer';
import { langChainToOpenAi, toLangChain } from '../../../bench/lib/langchain-messages';
import { mentionsFact, messageText, type Fact } from './fact-extraction';
import type { Schemas, SessionServiceClient } from '@lib/client';
import { ok } from './service-client';
import { eventsWindow, openAiWindow } from './window-check';

/** Hits of a recall query that count for reach. */
export const RECALL_TOP = 5;
/** Characters of the archived text the "first characters" baseline summarizes. */
export const FIRST_CHARS_BASELINE = 12_000;
/** Passes are bucketed 0, 1, …, `MAX_PASS_BUCKET - 1` and `MAX_PASS_BUCKET`+. */
export const MAX_PASS_BUCKET = 5;

/** The outcome of one fact at the end of one session. */
export interface FactResult {
  value: string;
  kind: string;
  /** Message (= event) index of the fact's first user or tool statement (`Fact.messageIndex`). */
  messageIndex: number;
  /** Message index where the fact's words first appear (`Fact.firstHeldIn`): what recall reach asks for. */
  firstHeldIn: number;
  /** Compactions recorded after the fact's event was appended. */
  passes: number;
  /** Whether the fact's event was archived at the end. */
  archived: boolean;
  /** The fact is mentioned in the final window. */
  retained: boolean;
  /** The event where the fact first appears (`Fact.firstHeldIn`) is among the top {@link RECALL_TOP} recall hits. */
  reached: boolean;
  /** 1-based rank of the fact's first user or tool statement (`Fact.messageIndex`) in the recall answer, null when not within the top {@link RECALL_TOP}. */
  firstStatementRank: number | null;
  /** Events of the conversation that hold the fact's words. */
  mentions: number;
  /** Kinds of the top hits (`tool`, `user`, `summary`, …), kept when the first statement is not among them. */
  hitTypes?: string[];
}

/** One session's fidelity under one strategy. */
export interface SessionFidelity {
  sessionId: string;
  /** Compactions that compacted in this session. */
  passes: number;
  windowTokens: number;
  facts: FactResult[];
}

/** Facts retained, by the number of passes they went through. */
export interface PassBucket {
  /** `0`, `1`, …, `5+`. */
  passes: string;
  facts: number;
  retained: number;
}

/** Fidelity of one strategy or baseline over every session. */
export interface FidelityRow {
  name: string;
  kind: 'strategy' | 'trim-messages' | 'first-chars';
  sessions: number;
  facts: number;
  retained: number;
  retention: number;
  /** Recall reach; null for a baseline (it has no recall). */
  reached: number | null;
  reach: number | null;
  /** Facts whose first user or tool statement is among the top hits too. */
  reachedFirstStatement: number | null;
  /** Facts whose event was archived (left the window verbatim), and how many of them the window still mentions. */
  archivedFacts: number;
  archivedRetained: number;
  /** Compactions per session: total, median, max; null for trimMessages (it has no passes). */
  passes: { sum: number; median: number; max: number } | null;
  byPasses: PassBucket[];
  /** Final window tokens per session. */
  windowTokens: { sum: number; median: number; max: number };
  /** The facts recall missed (at most 20), for the report; `messageIndex` is the event asked for (`Fact.firstHeldIn`). */
  reachMisses: Array<{ sessionId: string; value: string; kind: string; messageIndex: number }>;
  /**
   * Facts whose first statement was not among the top hits: how many the conversation mentions in
   * more than {@link RECALL_TOP} events, how many of the hits were summaries, and a sample.
   */
  firstStatementMisses?: {
    facts: number;
    mentionedInMoreThanTop: number;
    summaryHits: number;
    sample: Array<{ value: string; kind: string; mentions: number; hitTypes: string[] }>;
  };
  /** What the row is (policy, budget, summarizer). */
  note: string;
}

/** The fidelity section of the report. */
export interface FidelityReport {
  /** The summarizer that wrote the strategies' summaries, in words (see summarizer-description.ts). */
  summarizer: string;
  /** True when that summarizer is a model (not the extractive summarizer). */
  modelSummarizer: boolean;
  /** Budget (tokens) of the trimMessages baseline. */
  trimBudget: number;
  rows: FidelityRow[];
  /** Lines on baselines left out and why (e.g. the "first characters" one against `--url`). */
  notes: string[];
  wallTimeMs: number;
}

/** Conversation entries of the session log, in message order (what the replay reads back). */
export interface LoggedEvent {
  eventId?: string;
  position: string;
  archived?: boolean;
}

/** Sum, median and max. */
function spread(values: number[]): { sum: number; median: number; max: number } {
  if (values.length === 0) return { sum: 0, median: 0, max: 0 };
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return {
    sum: values.reduce((a, b) => a + b, 0),
    median: sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2,
    max: sorted[sorted.length - 1],
  };
}

/** Whether any of `texts` mentions each fact. */
function retainedIn(texts: readonly string[], facts: readonly Fact[]): boolean[] {
  const all = texts.join('\n');
  return facts.map((f) => mentionsFact(all, f.value));
}

/** The final window of a session in the OpenAI rendering, and its summary texts. */
export interface FinalWindow {
  tokens: number;
  messages: Record<string, unknown>[];
  /** Texts of the summaries in the window (the assistant side of each summary pair). */
  summaries: string[];
}

/** Reads the final window (OpenAI rendering for the texts, events rendering for the summaries). */
export async function readFinalWindow(client: SessionServiceClient, sessionId: string, estimator: Schemas['Estimator']): Promise<FinalWindow> {
  const at = (format: 'openai' | 'events', atRevision?: string) =>
    ok(client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId }, query: { estimator, format, ...(atRevision ? { atRevision } : {}) } } }));
  const openai = openAiWindow(await at('openai'));
  const events = eventsWindow(await at('events', openai.revision));
  return {
    tokens: openai.tokens,
    messages: openai.messages,
    summaries: events.events.flatMap((e) => (e.type === 'summary' ? [e.text] : [])),
  };
}

/**
 * Measures one session at its end: retention in `window`, recall reach (one recall query per
 * fact, session-scoped, top {@link RECALL_TOP}), passes per fact from the compactions' global
 * positions. `logged[i]` is the log entry of message `i`.
 */
export async function measureSession(
  client: SessionServiceClient,
  sessionId: string,
  facts: readonly Fact[],
  logged: readonly LoggedEvent[],
  compactionPositions: readonly string[],
  window: FinalWindow,
): Promise<SessionFidelity> {
  const indexOfEvent = new Map<string, number>();
  logged.forEach((e, i) => e.eventId !== undefined && indexOfEvent.set(e.eventId, i));
  const compacted = compactionPositions.map((p) => BigInt(p));
  const retained = retainedIn(window.messages.map(messageText), facts);
  const results: FactResult[] = [];
  for (const [k, fact] of facts.entries()) {
    const at = BigInt(logged[fact.messageIndex].position);
    const page = await ok(client.GET('/v1/recall', { params: { query: { q: fact.value, sessionId, limit: String(RECALL_TOP) } } }));
    const ranks = page.items.map((h) => (h.type === 'summary' ? undefined : indexOfEvent.get(h.eventId)));
    const first = ranks.indexOf(fact.messageIndex);
    results.push({
      value: fact.value,
      kind: fact.kind,
      messageIndex: fact.messageIndex,
      firstHeldIn: fact.firstHeldIn,
      passes: compacted.filter((p) => p > at).length,
      archived: logged[fact.messageIndex].archived === true,
      retained: retained[k],
      reached: ranks.includes(fact.firstHeldIn),
      firstStatementRank: first < 0 ? null : first + 1,
      mentions: fact.heldIn.length,
      ...(first < 0 ? { hitTypes: page.items.map((h) => h.type) } : {}),
    });
  }
  return { sessionId, passes: compacted.length, windowTokens: window.tokens, facts: results };
}

/**
 * The trimMessages baseline of one conversation: LangChain `trimMessages` (`strategy: 'last'`,
 * `startOn: 'human'`, `includeSystem: true`) of the whole conversation to `budget` tokens, with
 * our costs of the same events as its counter. Returns which facts the trimmed window mentions
 * and its tokens; facts it dropped are lost.
 */
export async function trimBaseline(
  events: readonly SessionEvent[],
  costs: readonly number[],
  facts: readonly Fact[],
  budget: number,
): Promise<{ retained: boolean[]; tokens: number }> {
  const { lc, costOf } = toLangChain(events, costs);
  const counter = (msgs: BaseMessage[]) => msgs.reduce((s, m) => s + (m === undefined ? 0 : (costOf.get(m.id ?? '') ?? 0)), 0);
  const trimmed = await trimMessages(lc, { maxTokens: budget, strategy: 'last', startOn: 'human', includeSystem: true, tokenCounter: counter });
  const texts = langChainToOpenAi(trimmed).map((m) => (m === undefined ? '' : messageText(m)));
  return { retained: retainedIn(texts, facts), tokens: counter(trimmed) };
}

/**
 * The first `maxChars` characters of the archived events' formatted text (DESIGN §3.1 lines,
 * joined by newlines), as the summarizer's `toSummarize` lines (the last one cut).
 */
export function firstCharsOf(archived: readonly SessionEvent[], maxChars = FIRST_CHARS_BASELINE): string[] {
  const lines: string[] = [];
  let left = maxChars;
  for (const e of archived) {
    if (lines.length > 0) left -= 1; // the joining newline
    if (left <= 0) break;
    const text = formatEvent(e);
    lines.push(text.slice(0, left));
    left -= Math.min(text.length, left);
  }
  return lines;
}

/**
 * The "first characters" baseline of one session: the final window's messages without its
 * summaries, plus the summary `summarizer` writes of {@link firstCharsOf} the archived events
 * (no previous summary, no overlap). Returns which facts that window mentions; null when nothing
 * was archived or the summarizer failed.
 */
export async function firstCharsBaseline(
  summarizer: Summarizer,
  archived: readonly SessionEvent[],
  window: FinalWindow,
  facts: readonly Fact[],
): Promise<boolean[] | null> {
  if (archived.length === 0) return null;
  const outcome = await summarizer.summarize({
    systemPrompt: DEFAULT_SUMMARIZER_SYSTEM_PROMPT,
    shadowPrompt: DEFAULT_SHADOW_PROMPT,
    currentSummaries: [],
    toSummarize: firstCharsOf(archived),
    overlap: [],
    coveredIds: archived.map((e) => e.id),
  });
  if (!outcome.ok) return null;
  const summaries = new Set(window.summaries);
  const kept = window.messages.filter(
    (m) => !(m.role === 'assistant' && summaries.has(m.content as string)) && !(m.role === 'user' && m.content === DEFAULT_SHADOW_PROMPT),
  );
  return retainedIn([...kept.map(messageText), outcome.text], facts);
}

function bucketsOf(results: ReadonlyArray<{ passes: number; retained: boolean }>): PassBucket[] {
  const buckets: PassBucket[] = Array.from({ length: MAX_PASS_BUCKET + 1 }, (_, i) => ({
    passes: i === MAX_PASS_BUCKET ? `${i}+` : String(i),
    facts: 0,
    retained: 0,
  }));
  for (const r of results) {
    const b = buckets[Math.min(r.passes, MAX_PASS_BUCKET)];
    b.facts++;
    if (r.retained) b.retained++;
  }
  return buckets;
}

/** Aggregates a strategy's sessions into one row. */
export function strategyRow(name: string, note: string, sessions: readonly SessionFidelity[]): FidelityRow {
  const all = sessions.flatMap((s) => s.facts.map((f) => ({ ...f, sessionId: s.sessionId })));
  const retained = all.filter((f) => f.retained).length;
  const reached = all.filter((f) => f.reached).length;
  const archived = all.filter((f) => f.archived);
  return {
    name,
    kind: 'strategy',
    sessions: sessions.length,
    facts: all.length,
    retained,
    retention: all.length ? retained / all.length : 0,
    reached,
    reach: all.length ? reached / all.length : 0,
    reachedFirstStatement: all.filter((f) => f.firstStatementRank !== null).length,
    archivedFacts: archived.length,
    archivedRetained: archived.filter((f) => f.retained).length,
    passes: spread(sessions.map((s) => s.passes)),
    byPasses: bucketsOf(all),
    windowTokens: spread(sessions.map((s) => s.windowTokens)),
    reachMisses: all
      .filter((f) => !f.reached)
      .slice(0, 20)
      .map((f) => ({ sessionId: f.sessionId, value: f.value, kind: f.kind, messageIndex: f.firstHeldIn })),
    firstStatementMisses: firstStatementMisses(all),
    note,
  };
}

function firstStatementMisses(all: readonly FactResult[]): FidelityRow['firstStatementMisses'] {
  const missed = all.filter((f) => f.firstStatementRank === null);
  return {
    facts: missed.length,
    mentionedInMoreThanTop: missed.filter((f) => f.mentions > RECALL_TOP).length,
    summaryHits: missed.reduce((a, f) => a + (f.hitTypes ?? []).filter((t) => t === 'summary').length, 0),
    sample: missed.slice(0, 10).map((f) => ({ value: f.value, kind: f.kind, mentions: f.mentions, hitTypes: f.hitTypes ?? [] })),
  };
}

/**
 * A baseline row: `retained[s][k]` says whether fact k of session s is in the baseline's window;
 * `passes` and `archived` come from the strategy the baseline is compared with (null for
 * trimMessages: no passes; its archived facts are the ones it dropped).
 */
export function baselineRow(
  name: string,
  kind: 'trim-messages' | 'first-chars',
  note: string,
  sessions: ReadonlyArray<{ retained: boolean[]; tokens: number; compared?: SessionFidelity }>,
): FidelityRow {
  const all = sessions.flatMap((s) =>
    s.retained.map((retained, k) => ({ retained, passes: s.compared?.facts[k].passes ?? 0, archived: s.compared ? s.compared.facts[k].archived : !retained })),
  );
  const retained = all.filter((f) => f.retained).length;
  const archived = all.filter((f) => f.archived);
  const comparedPasses = sessions.every((s) => s.compared !== undefined);
  return {
    name,
    kind,
    sessions: sessions.length,
    facts: all.length,
    retained,
    retention: all.length ? retained / all.length : 0,
    reached: null,
    reach: null,
    reachedFirstStatement: null,
    archivedFacts: archived.length,
    archivedRetained: archived.filter((f) => f.retained).length,
    passes: comparedPasses ? spread(sessions.map((s) => s.compared!.passes)) : null,
    byPasses: comparedPasses ? bucketsOf(all) : [],
    windowTokens: spread(sessions.map((s) => s.tokens)),
    reachMisses: [],
    note,
  };
}
