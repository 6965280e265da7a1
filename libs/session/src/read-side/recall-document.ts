import type { SessionEvent } from '@lib/compaction';
import { withoutDefaultIgnorables } from './recall-ignorable';

/**
 * The text recall indexes for one event: what a person would search for, without the
 * `User:`/`Assistant:` prefixes of the formatter (they would make every event match `user`).
 *
 * - user / system / assistant: the text (nothing when null);
 * - assistant: its `refusal` too, on a line of its own (a model is shown it; the formatter counts it in
 *   place of a blank text, and it is indexed also next to a text: it is what the assistant said);
 * - assistant tool calls: one line per call, `id name arguments` (the provider's call id, e.g.
 *   `call_1`, and the raw JSON argument string);
 * - tool: one line per response, `toolCallId name data`;
 * - summary: the summary text (the shadow prompt is boilerplate and is not indexed).
 *
 * Everything a model is shown of an event, and a person may quote, is searchable (DESIGN §5: "every
 * event ever appended"). A call id is indexed on both sides of the call, so searching the id found in a
 * provider's log finds the call and its result. Not indexed: the caller's event ids (not content: they
 * are the window's and the log's keys), a message's participant `name` and a tool message's legacy
 * `name` (a label repeated on every message of that participant, matching everything as the `User:`
 * prefix would; a tool response's own `name` is indexed), `textParts`/`dataParts` (their
 * concatenation is the text or data indexed), `notice`, and the summary's shadow prompt.
 *
 * Lines are joined with `\n`. The control characters U+0001, U+0002 and U+0003 are replaced by spaces:
 * recall uses the first two to mark matches in snippets, and the third to separate scripts in the word
 * index (`RECALL_SCRIPT_BOUNDARY`, put there by `wordIndexText` and dropped from snippets). A NUL (U+0000) is replaced by
 * {@link RECALL_NUL_STANDIN} (U+2400 ␀, not a word character either): FTS5's `snippet()` reads the
 * document as a C string and so cut every snippet at the first NUL (`<mark>nul</mark> ` for a text
 * that goes on after it). The result is folded with {@link recallFold}, as
 * queries are (so snippets, cut from the index, show the folded form; the stored event stays as
 * sent). Returns `''` when there is nothing to index.
 */
export function recallDocument(event: SessionEvent): string {
  const lines: string[] = [];
  switch (event.type) {
    case 'user':
    case 'system':
      if (event.text) lines.push(event.text);
      break;
    case 'assistant':
      if (event.text) lines.push(event.text);
      if (event.refusal) lines.push(event.refusal);
      for (const call of event.toolCalls ?? []) lines.push(`${call.id} ${call.name} ${call.arguments}`);
      break;
    case 'tool':
      for (const response of event.responses ?? []) lines.push(`${response.toolCallId} ${response.name} ${response.data}`);
      break;
    case 'summary':
      if (event.text) lines.push(event.text);
      break;
    default:
      break;
  }
  return recallFold(lines.join('\n'))
    .replace(/[\u0001-\u0003]/g, ' ')
    .replaceAll('\u0000', RECALL_NUL_STANDIN);
}

/** What a NUL of an event's text is in its recall document and snippets (U+2400 SYMBOL FOR NULL, ␀). */
export const RECALL_NUL_STANDIN = '\u2400';

/**
 * The form of text recall indexes and searches: Unicode NFKC, so compatibility forms match their
 * plain ones (full-width `ｘｋ４２` and `xk42`, half-width `ｶﾅ` and `カナ`, `ﬁ` and `fi`, the
 * ideographic space and a space), but for emoji (Extended_Pictographic code points), which stay
 * as they are: NFKC would make `‼️` `!!`, `™️` `TM`, `Ⓜ️` `M` and `🈯` `指`, so they could not be
 * searched as emoji (read models 14; see `recall-searchable`); then without default-ignorable code
 * points but those of emoji ({@link withoutDefaultIgnorables}: `zero\u200Bwidth` is `zerowidth`,
 * Persian `می\u200Cخواهم` is `میخواهم`; read models 15). Applied to documents
 * ({@link recallDocument}) and queries alike. The length may change (usually not).
 */
export function recallFold(text: string): string {
  // ASCII is its own NFKC form and holds neither a pictograph nor a default-ignorable code point.
  if (!NOT_ASCII.test(text)) return text;
  const folded = PICTOGRAPHIC.test(text) ? text.replace(NOT_PICTOGRAPHIC_RUN, (run) => run.normalize('NFKC')) : text.normalize('NFKC');
  return withoutDefaultIgnorables(folded);
}

const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
/** A UTF-16 code unit past ASCII: a text without one is its own {@link recallFold} (a spec checks every ASCII character). */
const NOT_ASCII = /[^\u0000-\u007f]/;
/** Runs of code points {@link recallFold} folds (no pictograph composes with what is around it, so each run folds on its own). */
const NOT_PICTOGRAPHIC_RUN = /\P{Extended_Pictographic}+/gu;

/**
 * Longest chunk of a document in the word index, in UTF-16 code units (see `recall-chunks`: a
 * longer document is indexed as several overlapping rows, so every word of it is found). FTS5
 * grows its pending terms superlinearly within one insert: measured on the 2-core machine,
 * 262,144 code units of distinct words take 18 ms and 1,000,000 take 190 ms (320 ms of event-loop
 * time with GC in the service), which stalled every request while the event was projected
 * (issue 17, item 1). Until read models 21 the word index held only the first 262,144 code
 * points of a document: words further into a longer event were not found.
 */
export const RECALL_WORD_CHUNK_LENGTH = 262_144;
