import type { SummaryRequest } from '../src';
import { foldRepeatedUserMessages, repeatedMessage } from '../src/repeated-user-messages';

/**
 * Reading an extractive summary's text back for its user messages (test and bench support): which
 * of them it keeps, which it only counts, and which a summary folded into it held. Shared by
 * `extractive-sections-counted.spec.ts` and `bench/summary-user-messages.ts`.
 */

/** The title of a sectioned summary's section of archived user messages. */
export const USERS = 'User messages (oldest first):';
/** The title of a sectioned summary's section of the summaries it folded in. */
export const PREVIOUS = 'Previous summary (merged):';
/** The headings under which a summary lists user messages: its own section, and a folded summary's. */
export const USER_HEADINGS: ReadonlySet<string> = new Set([USERS, 'Earlier user messages:']);
/** A count line, `(+N more)` or `- (+N more)` (trimmed); group 1 is N. */
export const COUNT = /^(?:- )?\(\+(\d+) more\)$/;
/** The compact form's omission marker, `[… N characters omitted …]`. */
export const OMITTED = /\[… \d+ characters omitted …\]/;

/** A summary line as a section writes a message: `text` without `- `, `User: ` or a trailing ` …`; `shortened` when that ` …` was there (cut at a word). */
export interface BareLine {
  text: string;
  shortened: boolean;
}

/** `line` trimmed, without a leading `- ` then `User: `, and without a trailing ` …` (then `shortened`). */
export function bare(line: string): BareLine {
  let text = line
    .trim()
    .replace(/^- /, '')
    .replace(/^User: /, '');
  const shortened = text.endsWith(' …');
  if (shortened) text = text.slice(0, -2);
  return { text, shortened };
}

/** Every line of `summary` (split at `\n`), {@link bare}. */
export function bareLines(summary: string): BareLine[] {
  return summary.split('\n').map(bare);
}

/** Options of {@link keeps}. */
export interface KeepsOptions {
  /**
   * Also take a `(N characters, not shown)` line (the note the summarizer writes for a line with no
   * word boundary under its cap), N the message's length in UTF-16 code units, as keeping it.
   * Default false: only the text itself, whole or shortened at a word, keeps a message.
   */
  notShown?: boolean;
}

/**
 * Whether the summary whose lines are `lines` ({@link bareLines}) keeps `message` (bare) on a line
 * of its own: whole, or shortened at a word (a line ending ` …` whose text starts the message).
 */
export function keeps(lines: readonly BareLine[], message: string, options: KeepsOptions = {}): boolean {
  const note = options.notShown === true ? `(${message.length} characters, not shown)` : undefined;
  return lines.some((l) => l.text === message || (l.shortened && l.text !== '' && message.startsWith(l.text)) || l.text === note);
}

/**
 * What a sectioned summary counts without keeping it, in items: `users`, the archived user
 * messages (its user section's last `(+N more)`, and `N user messages` on its `Left out:` line);
 * `previous`, the lines of the summaries it folded in (every `(+N more)` of its previous section
 * but those under `Earlier artefacts:`, whose count is of artefacts, and `N previous summary lines`
 * and `N earlier …` (a group of the previous section of which none is kept) on its `Left out:`
 * line). 0 and 0 for the compact form (no sections).
 */
export function counts(summary: string): { users: number; previous: number } {
  const out = { users: 0, previous: 0 };
  for (const block of summary.split('\n\n')) {
    const lines = block.split('\n');
    if (lines[0] === USERS) out.users += Number(COUNT.exec(lines[lines.length - 1].trim())?.[1] ?? 0);
    if (lines[0] === PREVIOUS) {
      let artefacts = false;
      for (const line of lines) {
        if (/^Earlier [^:]*:$/.test(line)) artefacts = line === 'Earlier artefacts:';
        else if (!artefacts) out.previous += Number(COUNT.exec(line.trim())?.[1] ?? 0);
      }
    }
    // the sections of which none is kept (`Left out: 10 previous summary lines, 2 tools`)
    if (lines[0].startsWith('Left out: ')) {
      out.users += Number(/(\d+) user messages?/.exec(lines[0])?.[1] ?? 0);
      for (const m of lines[0].matchAll(/(\d+) (?:previous summary lines?|earlier [a-z ]+)/g)) out.previous += Number(m[1]);
    }
  }
  return out;
}

/**
 * The user messages `summary` holds, bare ({@link bare}), in order, repeats included: the `- …`
 * lines under a {@link USER_HEADINGS} heading and every `User: …` line; and `counted`, how many it
 * only counted (the `(+N more)` under such a heading, and `N user messages` and `N earlier user
 * messages` on a `Left out:` line).
 */
export function userMessagesOf(summary: string): { messages: string[]; counted: number } {
  const messages: string[] = [];
  let counted = 0;
  let heading = '';
  for (const raw of summary.split('\n')) {
    const line = raw.trim();
    if (line === '' || (/^[A-Z][^:]*:$/.test(line) && !line.startsWith('- '))) {
      heading = line;
      continue;
    }
    if (line.startsWith('Left out: ')) for (const m of line.matchAll(/(\d+) (?:earlier )?user messages?/g)) counted += Number(m[1]);
    const count = COUNT.exec(line);
    if (count) counted += USER_HEADINGS.has(heading) ? Number(count[1]) : 0;
    else if ((USER_HEADINGS.has(heading) && line.startsWith('- ')) || /^(?:- )?User: /.test(line)) messages.push(bare(line).text);
  }
  return { messages, counted };
}

/** The user messages of `request`'s archived events as a summary writes them (repeats in a row folded into one, see {@link repeatedMessage}), in order. */
export function archivedUserMessages(request: SummaryRequest): string[] {
  return foldRepeatedUserMessages(request.toSummarize).flatMap((e) => (e.user === undefined ? [] : [repeatedMessage(e.user.text, e.user.times)]));
}
