/**
 * Checkable facts of a conversation, derived from its messages without a model (issue 16): the
 * identifiers and values a user gives and the tools pass and return (user ids, reservation and
 * payment ids, flight numbers, dates, amounts, names, e-mail addresses), each tied to the message
 * (= event: the replay appends one event per message) where it first appears.
 *
 * Sources, and only these (an assistant's own words are not facts the conversation established):
 * - user messages: patterns (snake-case ids ending in digits, upper-case codes mixing letters and
 *   digits, ISO dates, `$` amounts, e-mail addresses, "my name is First Last");
 * - tool call arguments and tool results: parsed as JSON when they are, and then the values under
 *   the keys of {@link FACT_KEYS} (free-text keys such as `thought` or `expression` are skipped);
 *   a result that is not JSON (`Error: not enough seats on flight HAT229`) is read with the
 *   user-message patterns.
 *
 * A fact is a literal string; {@link mentionsFact} says whether a text contains it (bounded by
 * non-alphanumeric characters on both sides, so `HAT22` is not found in `HAT229`).
 */

/** What kind of value a fact is. */
export type FactKind = 'id' | 'date' | 'amount' | 'name' | 'email';

/** Where a fact was first seen. */
export type FactSource = 'user' | 'tool-arguments' | 'tool-result';

/** One checkable fact of a conversation. */
export interface Fact {
  /** The literal value, as it appears in the message (e.g. `sofia_kim_7287`, `2024-05-27`, `$239`, `Sofia`). */
  value: string;
  kind: FactKind;
  /** Index (0-based) of the first message that states it: a user message, a tool call's arguments or a tool result that mentions it (an assistant's text does not count). */
  messageIndex: number;
  source: FactSource;
  /** The JSON key it was found under (tool arguments and results), when any. */
  key?: string;
  /** Every message of the conversation (any role, sources or not) whose text mentions the value ({@link mentionsFact}). Includes {@link messageIndex}. */
  mentionedIn: number[];
  /**
   * Every message that holds the value as recall sees words ({@link holdsWords}: `Noah` is in
   * `noah_muller_9847`): the events a recall for it may rightly answer with. Includes
   * {@link mentionedIn}.
   */
  heldIn: number[];
  /**
   * The event where the fact first appears as recall reads words: the first of {@link heldIn}
   * that is not an instruction ({@link isInstruction}: a system prompt is not a statement of the
   * conversation; a notice is, as recall's first mention counts it). Usually {@link messageIndex}; earlier when an earlier event holds the value's
   * words without stating it literally (the name `Mia` in the user id `mia_li_3668`, a lower-case
   * `sofia`) or an assistant said it before any user or tool did. Recall reach asks for this event.
   */
  firstHeldIn: number;
}

/**
 * Whether an OpenAI chat message is an instruction: a `system` or `developer` message that is not a notice
 * (named `notice`: an injected message such as "a file arrived", a real event of the conversation, DESIGN §3.1).
 * Recall's first mention skips instructions and summaries only.
 */
export function isInstruction(message: Record<string, unknown>): boolean {
  return (message.role === 'system' || message.role === 'developer') && message.name !== 'notice';
}

/**
 * JSON keys whose values are facts, and their kind. Values under other keys are not facts (they
 * are options, free text, or flags): e.g. the `prices` of flight search results, `thought`.
 */
export const FACT_KEYS: Readonly<Record<string, FactKind>> = {
  user_id: 'id',
  reservation_id: 'id',
  payment_id: 'id',
  id: 'id',
  flight_number: 'id',
  zip: 'id',
  date: 'date',
  dob: 'date',
  created_at: 'date',
  first_name: 'name',
  last_name: 'name',
  email: 'email',
  price: 'amount',
  amount: 'amount',
  balance: 'amount',
  total: 'amount',
  refund: 'amount',
};

const TEXT_PATTERNS: ReadonlyArray<{ kind: FactKind; pattern: RegExp; group?: number }> = [
  { kind: 'email', pattern: /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g },
  { kind: 'id', pattern: /\b[a-z]+(?:_[a-z]+)*_\d{3,}\b/g }, // sofia_kim_7287, gift_card_7480005
  { kind: 'id', pattern: /\b(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z])[A-Z0-9]{5,}\b/g }, // OI5L9G, HAT229
  { kind: 'date', pattern: /\b\d{4}-\d{2}-\d{2}\b/g },
  { kind: 'amount', pattern: /\$\d+(?:,\d{3})*(?:\.\d+)?/g }, // $239, $1,234.50 (not the comma after $299,)
  { kind: 'name', pattern: /\b(?:[Mm]y name is|I am|I'm)\s+([A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)/g, group: 1 },
];

/** Values found in free text with the patterns, in order of appearance. */
export function factsInText(text: string): Array<{ value: string; kind: FactKind }> {
  const found: Array<{ at: number; value: string; kind: FactKind }> = [];
  for (const { kind, pattern, group } of TEXT_PATTERNS) {
    for (const m of text.matchAll(pattern)) {
      const value = m[group ?? 0];
      if (value) found.push({ at: (m.index ?? 0) + m[0].indexOf(value), value, kind });
    }
  }
  return found.sort((a, b) => a.at - b.at).map(({ value, kind }) => ({ value, kind }));
}

/** Values under {@link FACT_KEYS} anywhere in a parsed JSON value, in document order. */
function factsInJson(value: unknown, key?: string, out: Array<{ value: string; kind: FactKind; key: string }> = []) {
  if (Array.isArray(value)) {
    for (const v of value) factsInJson(v, key, out);
  } else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) factsInJson(v, k, out);
  } else if (key !== undefined && FACT_KEYS[key] !== undefined && (typeof value === 'string' || typeof value === 'number')) {
    const text = String(value).trim();
    // a bare small number (a count, a flag) is not a checkable fact
    if (text !== '' && !(typeof value === 'number' && Math.abs(value) < 10)) out.push({ value: text, kind: FACT_KEYS[key], key });
  }
  return out;
}

function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  const t = text.trim();
  if (!t.startsWith('{') && !t.startsWith('[')) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(t) };
  } catch {
    return { ok: false };
  }
}

function factsInStructured(text: string): Array<{ value: string; kind: FactKind; key?: string }> {
  const parsed = parseJson(text);
  return parsed.ok ? factsInJson(parsed.value) : factsInText(text);
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const mentionPatterns = new Map<string, RegExp>();

/** True when `text` contains `value` with no letter or digit right before or after it. */
export function mentionsFact(text: string, value: string): boolean {
  let re = mentionPatterns.get(value);
  if (!re) {
    re = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegExp(value)}(?![\\p{L}\\p{N}])`, 'u');
    if (mentionPatterns.size > 50_000) mentionPatterns.clear();
    mentionPatterns.set(value, re);
  }
  return re.test(text);
}

/**
 * The words of `text` as recall indexes them (FTS5 `unicode61 remove_diacritics 2`): runs of
 * letters and digits, lower-cased, without diacritics, joined by single spaces and framed by
 * spaces (so a phrase is found with `includes(' a b ')`).
 */
export function recallWords(text: string): string {
  const words =
    text
      .normalize('NFKD')
      .replace(/\p{M}/gu, '')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  return ` ${words.join(' ')} `;
}

/** True when the words of `text` contain the words of `value` in a row, as a recall phrase query finds them. */
export function holdsWords(text: string, value: string): boolean {
  const phrase = recallWords(value);
  return phrase.trim() !== '' && recallWords(text).includes(phrase);
}

/**
 * Every text of an OpenAI chat message a model would read: its content (string or text parts),
 * its tool calls' names and argument strings. Used both to find facts and to look for them in a
 * window.
 */
export function messageText(message: Record<string, unknown>): string {
  const parts: string[] = [];
  const content = message.content;
  if (typeof content === 'string') parts.push(content);
  else if (Array.isArray(content))
    for (const p of content) if (p && typeof (p as { text?: unknown }).text === 'string') parts.push((p as { text: string }).text);
  for (const call of (message.tool_calls as Array<{ function?: { name?: string; arguments?: string } }> | undefined) ?? []) {
    parts.push(`${call.function?.name ?? ''} ${call.function?.arguments ?? ''}`);
  }
  return parts.join('\n');
}

/**
 * The facts of one conversation (OpenAI chat messages, in order), each once, in order of first
 * appearance. Deterministic; never throws on well-formed messages.
 */
export function extractFacts(messages: readonly Record<string, unknown>[]): Fact[] {
  const texts = messages.map(messageText);
  const words = texts.map(recallWords);
  // where a value counts as said: user messages, tool call arguments, tool results (not an assistant's own words)
  const sourceTexts = messages.map((m, i) => (m.role === 'user' || m.role === 'tool' ? texts[i] : m.role === 'assistant' ? callsText(m) : ''));
  const facts = new Map<string, Fact>();
  const add = (found: Array<{ value: string; kind: FactKind; key?: string }>) => {
    for (const f of found) {
      if (facts.has(f.value)) continue;
      const mentionedIn = texts.flatMap((t, i) => (mentionsFact(t, f.value) ? [i] : []));
      const heldIn = words.flatMap((w, i) => (w.includes(recallWords(f.value)) ? [i] : []));
      const first = mentionedIn.find((i) => mentionsFact(sourceTexts[i], f.value));
      // a value the message holds only in a form no text shows literally (e.g. a JSON number
      // written 1e3) cannot be checked: skip it
      if (first === undefined) continue;
      const source: FactSource = messages[first].role === 'user' ? 'user' : messages[first].role === 'tool' ? 'tool-result' : 'tool-arguments';
      const firstHeldIn = heldIn.find((i) => !isInstruction(messages[i])) ?? first;
      facts.set(f.value, { value: f.value, kind: f.kind, messageIndex: first, source, ...(f.key ? { key: f.key } : {}), mentionedIn, heldIn, firstHeldIn });
    }
  };
  messages.forEach((m, i) => {
    if (m.role === 'user') add(factsInText(texts[i]));
    else if (m.role === 'assistant') {
      for (const call of (m.tool_calls as Array<{ function?: { arguments?: string } }> | undefined) ?? [])
        add(factsInStructured(call.function?.arguments ?? ''));
    } else if (m.role === 'tool' && typeof m.content === 'string') add(factsInStructured(m.content));
  });
  return [...facts.values()].sort((a, b) => a.messageIndex - b.messageIndex);
}

/** The tool calls of an assistant message as text (names and argument strings). */
function callsText(message: Record<string, unknown>): string {
  return ((message.tool_calls as Array<{ function?: { name?: string; arguments?: string } }> | undefined) ?? [])
    .map((c) => `${c.function?.name ?? ''} ${c.function?.arguments ?? ''}`)
    .join('\n');
}
