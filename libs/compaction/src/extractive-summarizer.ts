/**
 * The deterministic extractive summarizer (DESIGN §3.7), used when no model endpoint is
 * configured. It calls no model: it extracts what it can from the formatted events.
 */
import type { SummaryRequest } from './compaction-types';
import { summaryTextBudget } from './summary-budget';
import { scriptRuns, SPACELESS_LETTER } from './script-runs';
import { fitTextToTokens } from './summary-chunks';
import { graphemeBoundary } from './grapheme-boundary';
import { OMISSION_MARKER, truncateMiddle } from './text';
import { spacelessWordBoundary } from './word-boundary';
import { codePointLength } from './text-length';
import { foldRepeatedUserMessages, repeatedMessage, type FoldedEvent } from './repeated-user-messages';
import { eventCost, fitsTokens, type TokenEstimator } from './token-estimators';

/** Name and version of the extractive summarizer, recorded as the summarizer identity of every decision it makes. */
export const EXTRACTIVE_SUMMARIZER_MODEL = 'extractive-v1';

/** Default bound of an extractive summary, in UTF-16 code units. */
export const DEFAULT_EXTRACTIVE_MAX_CHARS = 6000;

/** Smallest accepted `maxChars` (smaller values are raised to it). */
export const MIN_EXTRACTIVE_MAX_CHARS = 200;

/** Most artefacts a summary rendered without packing lists (extractParts keeps one more, to tell that some were left out). */
const MAX_ARTEFACTS = 80;

/** Every shortening in this summarizer cuts between words, never through one (see truncateMiddle). */
const AT_WORDS = { atWords: true } as const;
const MAX_ARTEFACT_LENGTH = 100;

/** Marker of items left out of a budgeted section ("(+N more)"; a merged summary sums those of each of its sections into one per block, see mergePreviousSummaries). */
const MORE_LINE = /^(?:- )?\(\+\d+ more(?: omitted)?\)$/;
const MORE_SUFFIX = / \(\+\d+ more\)$/;

/** Title of a packed summary's last line, counting the sections of which no item is kept (see leftOutLine). */
const LEFT_OUT = 'Left out: ';
/** A {@link LEFT_OUT} line as {@link leftOutLine} writes it. */
const LEFT_OUT_LINE = /^Left out: \d+ [a-z ]+(?:, \d+ [a-z ]+)*$/;

/** A character a number next to it is part of: a letter, digit, mark, `_` or `.`, except a letter of a script written without spaces. */
const IN_WORD = `(?:(?!${SPACELESS_LETTER})[\\p{L}\\p{N}\\p{M}_.])`;

// Each pattern costs linear time on any text (issue 17, item 1): the e-mail local part starts
// only where a run of its characters starts (else every position of a long run rescans it), and
// identifiers are looked for word by word (see identifierIn).
const ARTEFACT_PATTERNS: RegExp[] = [
  /https?:\/\/[^\s"'<>)\]]+/g, // URLs
  // e-mail addresses and paths take letters, digits and marks of any script (`jürgen.müller@straße.de`,
  // `иван@пример.рф`, `/var/log/журнал-ошибок.log`, `C:\Users\Jürgen\Größe.txt`), not only ASCII's `\w`;
  // a Windows path's folders may hold spaces (`C:\Program Files\x.exe`), its last name none (the words after it are no part of it)
  /(?<![\p{L}\p{N}\p{M}_.+-])[\p{L}\p{N}\p{M}_.+-]+@[\p{L}\p{N}\p{M}_-]+(?:\.[\p{L}\p{N}\p{M}_-]+)+/gu, // e-mail addresses
  /(?:~|\.{1,2})?(?:\/[\p{L}\p{N}\p{M}_.@-]+){2,}\/?|[A-Za-z]:\\(?:[\p{L}\p{N}\p{M}_.-]+(?: [\p{L}\p{N}\p{M}_.-]+)*\\)*[\p{L}\p{N}\p{M}_.-]+/gu, // paths
  /"([A-Za-z_][\w-]{0,40})"\s*:\s*("(?:[^"\\]|\\.){1,80}"|-?\d+(?:\.\d+)?|true|false)/g, // JSON key/value pairs
  /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b/g, // dates
  // snake_case / camelCase names, whole words only (`größe_x1` is not `e_x1`): the word boundaries are Unicode's
  /(?<![\p{L}\p{N}\p{M}_])(?:[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+)(?![\p{L}\p{N}\p{M}_])/gu,
  // numbers, amounts, times, not inside a word of any script (`42` of `ЁЖИК42` is no number); letters
  // of a script written without spaces are no word it is inside (`1234567` of `注文番号1234567を` is one);
  // decimal digits of any script (full-width １２８００ too)
  new RegExp(`(?=[$€£\\p{Nd}])(?:(?<!${IN_WORD})[$€£]?\\p{Nd}+(?:[.,:]\\p{Nd}+)+%?|(?<!${IN_WORD})[$€£]?\\p{Nd}{2,}%?(?!${IN_WORD}))`, 'gu'),
];

/**
 * Identifiers mixing letters and digits, of any script: words are runs of Unicode letters, digits
 * (full-width ones too), combining marks, `_` and `-`, so `DE77ÖÄ` is one identifier (an ASCII-only pattern listed `DE77`,
 * a code that never existed, and recall found it). Looked for in each {@link IDENTIFIER_RUN} holding
 * both a letter and a digit, first cut where its script changes ({@link scriptRuns}): a code
 * written against other text (`予約番号XK42Q9を`, `заказаRU5566пожалуйста`) is an identifier of its
 * own, and a run of letters of a script written without spaces (Chinese, Japanese, Thai: a
 * sentence, not a word) is never one, even with a digit after it (`依頼0`). See {@link identifierIn}.
 */
const WORD_CHAR = /[\p{L}\p{N}\p{M}_＿]/u;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const LETTER = /\p{L}/u;
const DIGIT = /\p{N}/u;

/**
 * The identifier of `word` (a piece of an {@link IDENTIFIER_RUN} as {@link scriptRuns} cuts it:
 * letters, digits, marks, `_`, `-` and their full-width forms only), or null, with its index in
 * `word` (UTF-16 units). It is what the pattern
 * `(?<![\p{L}\p{N}\p{M}_＿])(?=[…]*\p{N})(?=[…]*\p{L})[\p{L}\p{N}][…]{2,}(?<=[\p{L}\p{N}\p{M}_＿])(?![\p{L}\p{N}\p{M}_＿])`
 * matches in it (at most one match: it runs to the word's last character that is not a hyphen),
 * found in one pass: the first letter or digit at the word's start or after a hyphen, to the
 * word's last non-hyphen, when that holds a letter and a digit and 3 characters or more (a later
 * start holds less). The pattern's lookaheads rescanned the rest of the word from every start
 * after a hyphen (`-_-_-_…a1`, 200,000 characters: quadratic, seconds of CPU).
 */
function identifierIn(word: string): { index: number; text: string } | null {
  let start = -1;
  let end = -1;
  let afterHyphen = true;
  for (let i = 0; i < word.length;) {
    const ch = String.fromCodePoint(word.codePointAt(i)!);
    if (start < 0 && afterHyphen && LETTER_OR_DIGIT.test(ch)) start = i;
    afterHyphen = !WORD_CHAR.test(ch);
    if (!afterHyphen) end = i + ch.length;
    i += ch.length;
  }
  if (start < 0 || end <= start) return null;
  const text = word.slice(start, end);
  let chars = 0;
  let letter = false;
  let digit = false;
  for (const ch of text) {
    chars++;
    if (!letter && LETTER.test(ch)) letter = true;
    if (!digit && DIGIT.test(ch)) digit = true;
  }
  return chars >= 3 && letter && digit ? { index: start, text } : null;
}
/**
 * The runs {@link identifierIn} looks in: Unicode words joined by `_` and `-` (and their
 * full-width forms `＿`, `－`: `ＡＢ－１２３４５６`), each then cut where its script changes
 * ({@link scriptRuns}), so `注文番号はＡＢ－１２３４５６です` gives `ＡＢ－１２３４５６`, not the sentence.
 */
const IDENTIFIER_RUN = /[\p{L}\p{N}\p{M}_＿－-]+/gu;

/** Index in {@link ARTEFACT_PATTERNS} of the JSON pairs, the dates and the numbers. */
const PAIR_PATTERN = 3;
const DATE_PATTERN = 4;
const NUMBER_PATTERN = 6;
/** A JSON object key (`"name":`), its name captured. */
const JSON_KEY = /"([A-Za-z_][\w-]*)"\s*:/g;
/** A bare name (no `=`, path or separator): may be a JSON key only. */
const NAME = /^[A-Za-z_][\w-]*$/;

/**
 * The artefacts of `texts` in order of first appearance, each once; with `truncate`, a value over
 * {@link MAX_ARTEFACT_LENGTH} is middle-truncated (between words), else kept whole (callers drop it).
 * Left out, as noise: a number or identifier that is part of a date found at the same place
 * (`2024`, `05`, `12` of `2024-05-12`); a bare name that appears in `texts` only as a JSON object
 * key (`user_id` of `"user_id": …`, its pair `user_id=…` is listed); with `truncate` (the
 * unbudgeted list), a value listed inside a `key=value` pair (`10029` beside `zip=10029`); without
 * it, both stay and the packed form keeps the shorter bare value (see rankArtefacts). Linear in
 * the texts' length. `shortened`: whether a value was middle-truncated.
 */
function collectArtefacts(texts: readonly string[], truncate = true): string[] & { shortened: boolean } {
  let shortened = false;
  const cut = (value: string) => {
    if (!truncate || value.length <= MAX_ARTEFACT_LENGTH) return value;
    shortened = true;
    return truncateMiddle(value, MAX_ARTEFACT_LENGTH, AT_WORDS);
  };
  const found: { at: number; index: number; value: string }[] = [];
  texts.forEach((text, index) => {
    const dates: { start: number; end: number }[] = [];
    for (const m of text.matchAll(ARTEFACT_PATTERNS[DATE_PATTERN])) dates.push({ start: m.index ?? 0, end: (m.index ?? 0) + m[0].length });
    // matches come in order of position: one pointer per pattern walks the dates
    const inDate = () => {
      let j = 0;
      return (start: number, length: number) => {
        while (j < dates.length && dates[j].end <= start) j++;
        return j < dates.length && dates[j].start <= start && start + length <= dates[j].end;
      };
    };
    ARTEFACT_PATTERNS.forEach((pattern, p) => {
      pattern.lastIndex = 0;
      const within = inDate();
      for (const m of text.matchAll(pattern)) {
        const at = m.index ?? 0;
        if (p === NUMBER_PATTERN && within(at, m[0].length)) continue;
        let value = m[0];
        if (p === PAIR_PATTERN && m[1] !== undefined && m[2] !== undefined) value = `${m[1]}=${m[2].replace(/^"|"$/g, '')}`;
        found.push({ at, index, value: cut(value) });
      }
    });
    const within = inDate();
    for (const run of text.matchAll(IDENTIFIER_RUN)) {
      if (!/\p{N}/u.test(run[0]) || !/\p{L}/u.test(run[0])) continue;
      // a change of script ends an identifier, and letters of a script without spaces are none
      for (const piece of scriptRuns(run[0])) {
        const word = piece.text;
        if (piece.spaceless || !/\p{N}/u.test(word) || !/\p{L}/u.test(word)) continue;
        const identifier = identifierIn(word);
        if (identifier === null) continue;
        const at = (run.index ?? 0) + piece.index + identifier.index;
        if (!within(at, identifier.text.length)) found.push({ at, index, value: cut(identifier.text) });
      }
    }
  });
  found.sort((a, b) => a.index - b.index || a.at - b.at || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
  const seen = new Set<string>();
  const unique: string[] = [];
  for (const f of found) {
    if (seen.has(f.value)) continue;
    seen.add(f.value);
    unique.push(f.value);
  }
  // bare names used only as JSON keys: every whole-word occurrence is a `"name":`
  const names = new Set(unique.filter((v) => NAME.test(v)));
  const asKey = new Map<string, number>();
  const asWord = new Map<string, number>();
  if (names.size > 0) {
    // a run longer than every name is none of them (not hashed: a run of CJK text can be megabytes)
    const longest = Math.max(...[...names].map((n) => n.length));
    for (const text of texts) {
      for (const m of text.matchAll(JSON_KEY)) if (names.has(m[1])) asKey.set(m[1], (asKey.get(m[1]) ?? 0) + 1);
      for (const m of text.matchAll(IDENTIFIER_RUN)) if (m[0].length <= longest && names.has(m[0])) asWord.set(m[0], (asWord.get(m[0]) ?? 0) + 1);
    }
  }
  const pairValues = new Set(unique.filter((v) => /^[A-Za-z_][\w-]*=./.test(v)).map((v) => v.slice(v.indexOf('=') + 1)));
  const artefacts = unique.filter((v) => {
    const keys = asKey.get(v) ?? 0;
    if (keys > 0 && keys >= (asWord.get(v) ?? 0)) return false;
    return !truncate || !pairValues.has(v);
  });
  return Object.assign(artefacts, { shortened });
}

/** Marker of an assistant line's tool calls (see the formatter). */
const TOOL_CALLS = ' [tool calls: ';

/**
 * The `…` of an assistant line `Assistant [tool calls: …]` or `Assistant: text [tool calls: …]`
 * (from the first marker after the text's start), or undefined. Linear in the line; the regex it
 * replaces, `/^Assistant(?::[\s\S]*?)? \[tool calls: ([\s\S]*)\]$/`, rescanned the rest of the
 * line at every marker when the line does not end with `]` (O(n²): 40,000 characters took 1 s).
 */
function toolCallsPart(text: string): string | undefined {
  if (!text.endsWith(']')) return undefined;
  let at = -1;
  if (text.startsWith('Assistant:')) at = text.indexOf(TOOL_CALLS, 'Assistant:'.length);
  else if (text.startsWith(`Assistant${TOOL_CALLS}`)) at = 'Assistant'.length;
  return at < 0 ? undefined : text.slice(at + TOOL_CALLS.length, -1);
}

function toolNames(texts: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  const add = (name: string) => counts.set(name, (counts.get(name) ?? 0) + 1);
  for (const text of texts) {
    const calls = toolCallsPart(text);
    if (calls !== undefined) for (const m of calls.matchAll(/(?:^|\), )([\w.:-]+)\(/g)) add(m[1]);
    const responses = /^Tool \[responses: ([\s\S]*)\]$/.exec(text);
    if (responses) for (const m of responses[1].matchAll(/(?:^|, )([\w.:-]+) -> /g)) add(`${m[1]} (result)`);
  }
  return counts;
}

function section(title: string, body: string[]): string {
  return body.length === 0 ? '' : `${title}\n${body.join('\n')}`;
}

function fitLines(lines: string[], budget: number, perLineFloor: number): string[] {
  if (lines.length === 0) return [];
  const total = lines.reduce((s, l) => s + l.length + 1, 0);
  if (total <= budget) return lines;
  const perLine = Math.max(perLineFloor, Math.floor(budget / lines.length) - 1);
  const shortened = lines.map((l) => truncateMiddle(l, perLine, AT_WORDS));
  let used = shortened.reduce((s, l) => s + l.length + 1, 0);
  if (used <= budget) return shortened;
  // still too long: keep the first and the newest lines, say how many in between were left out
  const head: string[] = [shortened[0]];
  const tail: string[] = [];
  used = shortened[0].length + 1 + 60;
  for (let i = shortened.length - 1; i > 0 && used + shortened[i].length + 1 <= budget; i--) {
    tail.unshift(shortened[i]);
    used += shortened[i].length + 1;
  }
  const omitted = shortened.length - head.length - tail.length;
  return omitted > 0 ? [...head, `- [… ${omitted} more omitted …]`, ...tail] : [...head, ...tail];
}

/** Section titles of an extractive summary. */
const TITLES = {
  previous: 'Previous summary (merged):',
  users: 'User messages (oldest first):',
  tools: 'Tools used:',
  artefacts: 'Artefacts (identifiers, values, paths):',
  last: 'Last events before the cut:',
} as const;

/**
 * How the sections of a previous extractive summary are titled once merged into the next one
 * (the same title for every generation, so merging again never nests or renames them).
 */
const EARLIER_TITLES: ReadonlyArray<{ title: string; from: readonly string[] }> = [
  { title: 'Earlier user messages:', from: [TITLES.users, 'Earlier user messages:'] },
  { title: 'Earlier tools used:', from: [TITLES.tools, 'Earlier tools used:'] },
  { title: 'Earlier artefacts:', from: [TITLES.artefacts, 'Earlier artefacts:'] },
  { title: 'Earlier last events:', from: [TITLES.last, 'Earlier last events:'] },
];

/** The titles of {@link EARLIER_TITLES}: the lines that open a group of a folded previous summary. */
const EARLIER_TITLE_LINES: ReadonlySet<string> = new Set(EARLIER_TITLES.map((t) => t.title));

/**
 * What a packed summary's {@link LEFT_OUT} line counts: a section of which no item is kept
 * (`previous`: the whole previous section), or, in a previous section of which some item is kept,
 * one of its groups of which none is (`loose`: its lines before the first "Earlier …:" title;
 * `earlierUsers`, `earlierTools`, `earlierLast`: those under "Earlier user messages:", "Earlier
 * tools used:" (lines of tool names, counted as lines), "Earlier last events:"). The artefacts are
 * never on it (they keep their heading).
 */
type LeftOutKey = 'previous' | 'users' | 'tools' | 'last' | 'loose' | 'earlierUsers' | 'earlierTools' | 'earlierLast';

/** What each {@link LeftOutKey}'s items are called on the {@link LEFT_OUT} line: one, several (lower-case letters and spaces, see {@link LEFT_OUT_LINE}). */
const LEFT_OUT_NAMES: Record<LeftOutKey, readonly [string, string]> = {
  previous: ['previous summary line', 'previous summary lines'],
  loose: ['previous summary line', 'previous summary lines'],
  earlierUsers: ['earlier user message', 'earlier user messages'],
  earlierTools: ['earlier tools line', 'earlier tools lines'],
  earlierLast: ['earlier last event', 'earlier last events'],
  users: ['user message', 'user messages'],
  tools: ['tool', 'tools'],
  last: ['last event', 'last events'],
};

/** The {@link LeftOutKey} of a previous-summary group of which no line is kept, by the group's title (`undefined`: the loose lines). */
const GROUP_LEFT_OUT: ReadonlyMap<string | undefined, LeftOutKey> = new Map<string | undefined, LeftOutKey>([
  [undefined, 'loose'],
  ['Earlier user messages:', 'earlierUsers'],
  ['Earlier tools used:', 'earlierTools'],
  ['Earlier last events:', 'earlierLast'],
]);

/**
 * The group a folded summary's {@link LEFT_OUT} count is carried into, by the name it is counted
 * under (either form of {@link LEFT_OUT_NAMES}): its user messages and earlier user messages into
 * "Earlier user messages:", and so on; previous summary lines (and a name not listed) into the
 * loose lines (`undefined`).
 */
const LEFT_OUT_GROUPS: ReadonlyMap<string, string | undefined> = new Map(
  (Object.entries(LEFT_OUT_NAMES) as [LeftOutKey, readonly [string, string]][]).flatMap(([key, names]) => {
    const title: Record<LeftOutKey, string | undefined> = {
      previous: undefined,
      loose: undefined,
      users: 'Earlier user messages:',
      earlierUsers: 'Earlier user messages:',
      tools: 'Earlier tools used:',
      earlierTools: 'Earlier tools used:',
      last: 'Earlier last events:',
      earlierLast: 'Earlier last events:',
    };
    return names.map((name) => [name, title[key]] as const);
  }),
);

/**
 * What a cut through a "Previous summary (merged):" title leaves of it before the omission marker
 * that replaced the rest (`Previous summary [… 80 characters omitted …] (oldest first):`): merged
 * as text it gave the next summary a second "Previous summary".
 */
const CUT_PREVIOUS_TITLE = /Previous summary(?: \(m?e?r?g?e?d?\)?:?)?\s*(?=\[… \d+ characters omitted …\])/g;

/** The header line of an extractive summary (any version, any count). */
const HEADER_LINE = /^\[Extractive summary \([^)\n]*\)[^\n]*? of \d+ earlier events?\]$/;

/**
 * The previous summaries as one flat text for the "Previous summary (merged)" section, without
 * the framing of earlier extractive summaries: their header lines and "Previous summary
 * (merged):" titles are dropped (their content stays), and their other sections are gathered by
 * kind under one "Earlier …:" title each, oldest lines first, identical lines once. Text that is
 * not in a section (a model's summary, the content of a merged previous summary) comes first, as
 * it is. What they counted without keeping it (each section's `(+N more)` but the artefacts', whose
 * count stays with them, and each count of the `Left out:` line, with the group it names: `2 user
 * messages` and `2 earlier user messages` with the earlier user messages, `2 previous summary lines`
 * with the loose text, see {@link LEFT_OUT_GROUPS}) is summed per block, one `(+N more)` line at the
 * end of each block (`- (+N more)` under a title), so it is counted again, as what that block left
 * out and nothing else. So summarizing a
 * summary of a summary … keeps one header and one "Previous summary" title, and the caller bounds
 * the result. Deterministic.
 */
function mergePreviousSummaries(summaries: readonly string[]): string {
  const loose: string[] = [];
  const sections = new Map<string, string[]>(EARLIER_TITLES.map((t) => [t.title, []]));
  const counts = new Map<string[], number>();
  const titleOf = new Map<string, string>();
  for (const t of EARLIER_TITLES) for (const f of t.from) titleOf.set(f, t.title);
  // the groups whose items are each a `- ` line (the others: one line of tools, of artefacts)
  const LISTED_GROUPS = new Set<string[]>([sections.get('Earlier user messages:')!, sections.get('Earlier last events:')!]);
  for (const summary of summaries) {
    let target = loose;
    for (const raw of summary.split('\n')) {
      const line = raw.trimEnd();
      const trimmed = line.trim();
      if (HEADER_LINE.test(trimmed) || trimmed === TITLES.previous) {
        target = loose;
        continue;
      }
      const title = titleOf.get(trimmed);
      if (title !== undefined) {
        target = sections.get(title)!;
        continue;
      }
      // the sections (and previous-summary groups) it kept nothing of: counted again (carried), each with its group
      if (LEFT_OUT_LINE.test(trimmed)) {
        for (const m of trimmed.matchAll(/(?:: |, )(\d+) ([a-z ]+)/g)) {
          const title = LEFT_OUT_GROUPS.get(m[2]);
          const into = title === undefined ? loose : sections.get(title)!;
          counts.set(into, (counts.get(into) ?? 0) + Number(m[1]));
        }
        continue;
      }
      // the compact form's identifiers line is that summary's artefacts: merged with them, its count kept
      if (trimmed.startsWith(IDENTIFIERS_LINE)) {
        const listed = trimmed.slice(IDENTIFIERS_LINE.length).trim();
        if (listed !== '') sections.get('Earlier artefacts:')!.push(listed);
        continue;
      }
      const artefacts = target === sections.get('Earlier artefacts:');
      if (trimmed === '') continue;
      // a group of listed items ends at a line that is not one of them: the archived lines a compact
      // form writes after the previous summary's text (`User: …`, `Assistant: …`) are no group's
      if (LISTED_GROUPS.has(target) && !trimmed.startsWith('- ')) target = loose;
      // the count of the artefacts left out stays with them, and those of the other sections are
      // summed, one count each (carried: each generation lists or counts what it left out)
      const tools = target === sections.get('Earlier tools used:');
      const count = artefacts ? null : (MORE_LINE.exec(trimmed) ?? (tools ? MORE_SUFFIX.exec(trimmed) : null));
      if (count !== null) counts.set(target, (counts.get(target) ?? 0) + Number(/\d+/.exec(count[0])![0]));
      if (count !== null && count.index === 0) continue;
      // a previous summary cut in the middle may have lost its header line's end: drop a leftover
      const whole = count !== null ? line.replace(MORE_SUFFIX, '') : artefacts ? line.replace(/^- (?=\(\+\d+ more)/, '') : line;
      target.push(
        whole
          .replace(/^\[Extractive summary \([^)\n]*\)[^\]\n]*\]\s*/, '')
          .replace(/Previous summary \(merged\):\s*/g, '')
          .replace(CUT_PREVIOUS_TITLE, ''),
      );
    }
  }
  const dedupe = (lines: string[]) => {
    const seen = new Set<string>();
    return lines.filter((l) => l.trim() !== '' && !seen.has(l) && seen.add(l) !== undefined);
  };
  const counted = (lines: string[]) => {
    const n = counts.get(lines) ?? 0;
    return n > 0 ? [...dedupe(lines), lines === loose ? `(+${n} more)` : `- (+${n} more)`] : dedupe(lines);
  };
  const blocks = [counted(loose).join('\n')];
  for (const t of EARLIER_TITLES) {
    const body = counted(sections.get(t.title)!);
    if (body.length > 0) blocks.push(`${t.title}\n${body.join('\n')}`);
  }
  return blocks.filter((b) => b !== '').join('\n');
}

/** What an extractive summary is made of, extracted once from a request (rendering only sizes it). */
interface ExtractedParts {
  header: string;
  previous: string;
  userLines: string[];
  tools: string[];
  /** At most {@link MAX_ARTEFACTS} + 1 (see collectArtefacts). */
  artefacts: string[];
  /** Whether an artefact was middle-truncated (over {@link MAX_ARTEFACT_LENGTH}): the unbudgeted rendering then lacks part of it. */
  artefactsShortened: boolean;
  lastLines: string[];
  /** Every archived event's formatted text on one line (whitespace runs collapsed), oldest first, user messages repeated in a row folded into one `User: (×N) text` ({@link foldRepeatedUserMessages}). */
  eventLines: string[];
}

/**
 * The `- text` lines of the user messages among `events` (formatted lines, oldest first; text with
 * whitespace runs collapsed), oldest first, where N > 1 user messages in a row give the same text
 * one line `- (×N) text` (`next` sent 57 times between the answers: one line, not 57), by the rule
 * the compact form's lines follow too ({@link foldRepeatedUserMessages}).
 */
function userLinesOf(folded: readonly FoldedEvent[]): string[] {
  return folded.flatMap((e) => (e.user === undefined ? [] : [`- ${repeatedMessage(e.user.text, e.user.times)}`]));
}

function extractParts(request: SummaryRequest): ExtractedParts {
  const events = request.toSummarize;
  const artefacts = collectArtefacts(events);
  const folded = foldRepeatedUserMessages(events);
  return {
    header: `[Extractive summary (${EXTRACTIVE_SUMMARIZER_MODEL}, no model) of ${events.length} earlier event${events.length === 1 ? '' : 's'}]`,
    previous: mergePreviousSummaries(request.currentSummaries),
    userLines: userLinesOf(folded),
    tools: [...toolNames(events)].map(([name, n]) => (n > 1 ? `${name} ×${n}` : name)),
    artefacts: artefacts.slice(0, MAX_ARTEFACTS + 1),
    artefactsShortened: artefacts.shortened,
    lastLines: events.slice(-3).map((t) => `- ${t.replace(/\s+/g, ' ').trim()}`),
    eventLines: folded.map((e) => e.line),
  };
}

/** Each section's share of the room (fractions; their sum stays under 1). */
interface Shares {
  previous: number;
  users: number;
  tools: number;
  artefacts: number;
  last: number;
}

/** The shares of an unbudgeted summary. */
const DEFAULT_SHARES: Shares = { previous: 0.35, users: 0.3, tools: 0.08, artefacts: 0.12, last: 0.12 };

/**
 * The shares within a summary budget: the artefacts (identifiers, values, paths, dates: the
 * facts an agent needs verbatim, densely listed) get the most after the previous summary; the
 * last events, which the kept window continues, and the tool names get less.
 */
const BUDGET_SHARES: Shares = { previous: 0.32, users: 0.15, tools: 0.02, artefacts: 0.44, last: 0.04 };

/**
 * The summary of `parts` bounded by `maxChars` (UTF-16 code units), each section with its share
 * of `shareBase` (default `maxChars`; the budget search passes `maxChars` less the header and the
 * section titles, so that the final bound never has to cut through them).
 */
function renderParts(parts: ExtractedParts, maxChars: number, shareBase = maxChars, shares: Shares = DEFAULT_SHARES): string {
  const previousBlock = parts.previous !== '' ? truncateMiddle(parts.previous, Math.floor(shareBase * shares.previous), AT_WORDS) : '';
  const users = fitLines(parts.userLines, Math.floor(shareBase * shares.users), 60);
  const toolsLine = parts.tools.length > 0 ? truncateMiddle(parts.tools.join(', '), Math.floor(shareBase * shares.tools), AT_WORDS) : '';
  const artefactsLine =
    parts.artefacts.length > 0 ? truncateMiddle(parts.artefacts.slice(0, MAX_ARTEFACTS).join(', '), Math.floor(shareBase * shares.artefacts), AT_WORDS) : '';
  const last = fitLines(parts.lastLines, Math.floor(shareBase * shares.last), 60);
  const sections = [
    parts.header,
    previousBlock ? section(TITLES.previous, [previousBlock]) : '',
    section(TITLES.users, users),
    toolsLine ? section(TITLES.tools, [toolsLine]) : '',
    artefactsLine ? section(TITLES.artefacts, [artefactsLine]) : '',
    section(TITLES.last, last),
  ].filter((p) => p !== '');
  return truncateMiddle(sections.join('\n\n'), maxChars, AT_WORDS);
}

/** Code units of the header, the titles of the sections `parts` fills and their separators. */
function renderOverhead(parts: ExtractedParts): number {
  const titles = [
    parts.previous !== '' ? TITLES.previous : '',
    parts.userLines.length > 0 ? TITLES.users : '',
    parts.tools.length > 0 ? TITLES.tools : '',
    parts.artefacts.length > 0 ? TITLES.artefacts : '',
    parts.lastLines.length > 0 ? TITLES.last : '',
  ].filter((t) => t !== '');
  return parts.header.length + titles.reduce((sum, t) => sum + t.length + 3, 0);
}

/** Share of a budgeted summary's text the identifiers get before the newest user message and the goal. */
const ARTEFACT_SHARE = 0.6;

/** Most artefacts a budgeted summary considers (the rest are only counted in its "(+N more)"). */
const MAX_PACKED_ARTEFACTS = 400;

/**
 * How telling an artefact is on its own: 0 for identifiers (letters and digits of any script, e.g. `OI5L9G`,
 * `sofia_kim_7287`, `ЁЖИК42`, `ＡＢ－１２３４５６`), e-mail addresses, URLs, paths, numbers of 5 digits or more, and `key=value`
 * pairs holding one; 1 for dates, amounts, other numbers of 3 digits or more or with separators,
 * and other pairs; 2 for the rest (names, short numbers).
 */
function artefactRank(value: string): number {
  const eq = value.indexOf('=');
  const v = eq > 0 && /^[A-Za-z_][\w-]*=/.test(value) ? value.slice(eq + 1) : value;
  if (/^\d{4}-\d{2}-\d{2}/.test(v)) return 1;
  if (/[@/\\]/.test(v) || (/\p{N}/u.test(v) && /\p{L}/u.test(v)) || /^\p{Nd}{5,}$/u.test(v)) return 0;
  if (v !== value || /\d{4}-\d{2}-\d{2}|\d[.,:]\d|[$€£%]|\d{3}/.test(v)) return 1;
  return 2;
}

/**
 * The artefacts of a budgeted summary, most telling first: by {@link artefactRank}, then by
 * source (`sources` in order: the user messages', the previous summary's, the other events'), then
 * by first appearance; each once, none over {@link MAX_ARTEFACT_LENGTH}, no tool name, and none
 * that stands whole (between non-alphanumerics) inside an artefact ranked at least as high (`825`
 * inside `address1=825 Laurel Lane`). At most {@link MAX_PACKED_ARTEFACTS}; `dropped` counts the rest
 * (the ones over {@link MAX_ARTEFACT_LENGTH} included), `droppedIdentifiers` those of them ranked 0.
 */
function rankArtefacts(sources: ReadonlyArray<readonly string[]>, tools: ReadonlySet<string>): string[] & { dropped: number; droppedIdentifiers: number } {
  const seen = new Set<string>();
  const all: { value: string; rank: number; key: number }[] = [];
  const tooLong: number[] = [];
  sources.forEach((values) => {
    for (const value of values) {
      if (seen.has(value) || tools.has(value)) continue;
      seen.add(value);
      if (value.length > MAX_ARTEFACT_LENGTH) tooLong.push(artefactRank(value));
      else all.push({ value, rank: artefactRank(value), key: all.length });
    }
  });
  all.sort((a, b) => a.rank - b.rank || a.key - b.key);
  const considered = all.slice(0, MAX_PACKED_ARTEFACTS * 2);
  const escape = (x: string) => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const values = new Set(considered.map((a) => a.value));
  const pairValue = (x: string) => (/^[A-Za-z_][\w-]*=/.test(x) ? x.slice(x.indexOf('=') + 1) : undefined);
  const kept = considered.filter((a) => {
    const value = pairValue(a.value);
    if (value !== undefined && values.has(value)) return false; // the bare value is kept instead
    const inside = new RegExp(`(?<![A-Za-z0-9])${escape(a.value)}(?![A-Za-z0-9])`);
    return !considered.some((b) => b !== a && b.rank <= a.rank && b.value.length > a.value.length && pairValue(b.value) !== a.value && inside.test(b.value));
  });
  const out = kept.slice(0, MAX_PACKED_ARTEFACTS).map((a) => a.value) as string[] & { dropped: number; droppedIdentifiers: number };
  const left = [...all.slice(considered.length), ...kept.slice(MAX_PACKED_ARTEFACTS)].map((a) => a.rank).concat(tooLong);
  out.dropped = left.length;
  out.droppedIdentifiers = left.filter((rank) => rank === 0).length;
  return out;
}

/** One candidate of a budgeted summary: a whole line or a whole artefact, never cut. */
interface PackItem {
  section: 'previous' | 'users' | 'tools' | 'artefacts' | 'last';
  /** Position within its section (rendering order). */
  order: number;
  text: string;
  /** Previous-summary lines: the sub-heading ("Earlier …:") printed before the first kept line under it. */
  group?: string;
}

/**
 * `line` at most `cap` code units, cut only between words (then ending " …"): at a whitespace, or
 * in text written without spaces (Chinese, Japanese, Thai, …) at the word boundary of its script
 * nearest the cap ({@link spacelessWordBoundary}), whichever keeps more; a line with no such
 * boundary after `prefix` becomes a note of its length, so no word is ever split.
 */
function capAtWord(line: string, prefix: string, cap: number): string {
  if (line.length <= cap) return line;
  const room = line.slice(0, Math.max(0, cap - 2));
  const space = room.search(/\s\S*$/);
  const word = spacelessWordBoundary(line, room.length, 'before');
  const at = word !== undefined && word > space ? word : space;
  if (at > prefix.length) return `${line.slice(0, graphemeBoundary(line, at, 'before')).trimEnd()} …`;
  return `${prefix}(${line.length - prefix.length} characters, not shown)`;
}

/** The markers this summarizer writes for what it left out (`[… N characters omitted …]`, `(+N more)`, `(N characters, not shown)`): no content, their numbers no artefacts. */
const LEFT_OUT_MARKERS = /\[… \d+ (?:characters|more) omitted …\]|\(\+\d+ more(?: omitted)?\)|\(\d+ characters, not shown\)/g;

/** A merged previous summary's items (see {@link previousItems}). */
interface PreviousItems {
  /** Its loose lines and those of its "Earlier …:" groups but the artefacts, in order (`group`: the group's title). */
  lines: { text: string; group?: string }[];
  /** The artefacts its "Earlier artefacts:" lists (its compact form's `Identifiers:` line included), in order. */
  artefacts: string[];
  /** The identifiers ({@link artefactRank} 0) its other lines hold (text it kept whole, e.g. a compact form's archived lines), in order of first appearance. */
  identifiers: string[];
  /** How many artefacts its lists counted without listing them (their `(+N more)`): carried into the next summary's count. */
  counted: number;
  /**
   * How many of its other items (lines, tools) each block counted without keeping them (the
   * `(+N more)` line at the end of the block), by the block's group title (`undefined`: the loose
   * text before the first title); blocks with no count are absent. Carried into the count of the
   * same group in the next summary's previous section, never another's.
   */
  groupCounts: ReadonlyMap<string | undefined, number>;
}

/** Splits a merged previous summary (see {@link mergePreviousSummaries}) into its lines, its artefacts and the identifiers its other lines hold. */
function previousItems(previous: string): PreviousItems {
  const lines: { text: string; group?: string }[] = [];
  const artefacts: string[] = [];
  let counted = 0;
  const groupCounts = new Map<string | undefined, number>();
  let group: string | undefined;
  for (const raw of previous.split('\n')) {
    const line = raw.trimEnd();
    if (EARLIER_TITLE_LINES.has(line.trim())) {
      group = line.trim();
      continue;
    }
    if (group === 'Earlier artefacts:') {
      for (const m of line.matchAll(/\(\+(\d+) more\)/g)) counted += Number(m[1]);
      // a list cut in the middle: the words either side of the marker are no artefact
      for (const piece of line.split(LEFT_OUT_MARKERS)) for (const a of piece.split(', ')) if (a.trim() !== '') artefacts.push(a.trim());
      continue;
    }
    const count = MORE_LINE.exec(line.trim());
    if (count !== null) groupCounts.set(group, (groupCounts.get(group) ?? 0) + Number(/\d+/.exec(count[0])![0]));
    if (line.trim() === '' || count !== null) continue;
    lines.push(group === undefined ? { text: line } : { text: line, group });
  }
  const prose = collectArtefacts(
    lines.map((l) => l.text.replace(LEFT_OUT_MARKERS, ' ')),
    false,
  );
  return { lines, artefacts, identifiers: prose.filter((a) => artefactRank(a) === 0), counted, groupCounts };
}

/**
 * The artefacts a budgeted summary of `request` lists or counts, in both its forms (packed
 * sections, compact form), most telling first ({@link rankArtefacts}, no tool name), from: the
 * user messages, the previous summary's lists (`prev.artefacts`), the archived events, then the
 * identifiers only the previous summary's other lines hold (`prev.identifiers`), so an identifier
 * the previous summary carried is listed or counted as the archived events' are (newcomer
 * ncverify53: a rolling summary folded at a tiny budget dropped them without a count). `carried`:
 * the artefacts the previous summary counted without listing them (`prev.counted`), to count again.
 */
function artefactsOf(request: SummaryRequest, prev: PreviousItems): string[] & { dropped: number; droppedIdentifiers: number; carried: number } {
  const events = request.toSummarize;
  const userTexts = events.filter((t) => t.startsWith('User: ')).map((t) => t.slice('User: '.length));
  const pool = rankArtefacts(
    [collectArtefacts(userTexts, false), prev.artefacts, collectArtefacts(events, false), prev.identifiers],
    new Set([...toolNames(events).keys()]),
  );
  return Object.assign(pool, { carried: prev.counted });
}

/**
 * The last line of a packed summary: how many items each section of which none is kept holds,
 * and each group of the previous section of which none is kept while another is,
 * `Left out: 3 earlier user messages, 2 tools, 3 last events` (`counts`: {@link LeftOutKey}s and
 * counts ≥ 1, in order), so a section or group is never left out uncounted (its heading costs more
 * than its count here: `Earlier user messages:` and `- (+3 more)` 9 cl100k tokens, `, 3 earlier
 * user messages` 6, a `Left out:` line of its own 9).
 */
function leftOutLine(counts: ReadonlyArray<readonly [LeftOutKey, number]>): string {
  return `${LEFT_OUT}${counts.map(([s, n]) => `${n} ${LEFT_OUT_NAMES[s][n === 1 ? 0 : 1]}`).join(', ')}`;
}

/**
 * The sectioned summary of `request` packed into the budget whole item by whole item (DESIGN
 * §3.7): the candidates are the artefacts (those of the user messages and of the previous summary
 * first, then those of the other events), the user messages (the first and the newest first), the
 * newest event, the previous summary's lines, the other user messages (newest first), the tools
 * and the other last events, in that priority. Each is taken whole or left out (a long line is
 * first shortened at a word boundary to `lineCap` code units, ending " …"); a section with
 * nothing kept is counted on the last line instead ({@link leftOutLine}, reserved first and
 * given up item by item as sections open), but for the artefacts (their heading and
 * `(+N more)` are reserved first: an identifier is never left out uncounted); in the previous
 * section each group ("Earlier user messages:", …, and the loose lines before them) says how many
 * of its own items it left out, what the previous summary counted for that group (carried)
 * included, and one with none kept while another is kept is counted on the last line
 * (`3 earlier user messages`), so no count is read as another group's; a section with some
 * items left out says how many (`(+N more)`, see {@link listedOrCounted}). `fits` is the final check: the largest kept set whose rendering was seen to
 * fit is returned, or undefined when no item fits beside the header. The greedy pass reserves room
 * for a `(+N more)` line in each section; up to {@link MAX_FILL_TRIES} further items (in
 * priority, each no costlier than what is left of the budget) are then tried on the whole rendering,
 * then the newest event, if still left out, shortened at a word to what remains (a bisection over
 * its length), so a budget a few tokens short of the full summary still holds the newest event.
 */
function packSummary(
  request: SummaryRequest,
  parts: ExtractedParts,
  estimator: TokenEstimator,
  textBudget: number,
  maxChars: number,
  fits: (text: string) => boolean,
): string | undefined {
  const prev = previousItems(parts.previous);
  const artefactPool = artefactsOf(request, prev);
  const unitChars = estimator.name === 'chars' ? 0.25 : 1;
  const lineCap = Math.max(80, Math.min(Math.floor(maxChars / 4), Math.floor(textBudget * unitChars)));
  const item = (section: PackItem['section'], order: number, text: string, group?: string): PackItem =>
    group === undefined ? { section, order, text } : { section, order, text, group };
  const artefactItems = artefactPool.map((a, i) => item('artefacts', i, a));
  const userItems = parts.userLines.map((l, i) => item('users', i, capAtWord(l, '- ', lineCap)));
  const lastItems = parts.lastLines.map((l, i) => item('last', i, capAtWord(l, '- ', lineCap)));
  const prevItems = prev.lines.map((l, i) => item('previous', i, capAtWord(l.text, '', lineCap), l.group));
  const toolItems = parts.tools.map((t, i) => item('tools', i, t));
  const rankedLow = artefactItems.findIndex((_, i) => artefactRank(artefactPool[i]) > 0);
  const identifiers = rankedLow < 0 ? artefactItems : artefactItems.slice(0, rankedLow);
  // the user's first message (their goal) and newest one, each shortened to a quarter of the line
  // cap; then the identifiers, up to ARTEFACT_SHARE of the room; then the previous summary's first
  // user message (the goal of earlier passes); then the other identifiers and the other artefacts
  const shortCap = Math.max(80, Math.floor(lineCap / 4));
  const n = userItems.length;
  if (n > 0) userItems[0] = { ...userItems[0], text: capAtWord(parts.userLines[0], '- ', shortCap) };
  if (n > 1) userItems[n - 1] = { ...userItems[n - 1], text: capAtWord(parts.userLines[n - 1], '- ', shortCap) };
  let first = 0;
  for (let room = textBudget * ARTEFACT_SHARE; first < identifiers.length; first++) {
    room -= estimator.count(`${identifiers[first].text}, `);
    if (room < 0) break;
  }
  const priority: PackItem[] = [];
  const taken = new Set<PackItem>();
  const push = (x: PackItem | undefined) => {
    if (x !== undefined && !taken.has(x)) {
      taken.add(x);
      priority.push(x);
    }
  };
  push(userItems[0]);
  push(userItems[n - 1]);
  identifiers.slice(0, first).forEach(push);
  push(prevItems.find((p) => p.group === 'Earlier user messages:') ?? prevItems[0]);
  artefactItems.forEach(push);
  push(lastItems[lastItems.length - 1]);
  prevItems.forEach(push);
  [...userItems].reverse().forEach(push);
  toolItems.forEach(push);
  [...lastItems].reverse().forEach(push);

  // the previous section's groups in order (the loose lines first), each with all it holds: its lines and what it counted (carried)
  const groups = [undefined, ...EARLIER_TITLES.map((t) => t.title)].filter((g) => prevItems.some((p) => p.group === g) || prev.groupCounts.has(g));
  const groupTotal = (g: string | undefined) => prevItems.filter((p) => p.group === g).length + (prev.groupCounts.get(g) ?? 0);
  const totals: Record<PackItem['section'], number> = {
    previous: groups.reduce((sum, g) => sum + groupTotal(g), 0),
    users: userItems.length,
    tools: toolItems.length,
    artefacts: artefactItems.length + artefactPool.dropped + artefactPool.carried,
    last: lastItems.length,
  };
  const render = (kept: ReadonlySet<PackItem>): string => {
    const by = (s: PackItem['section']) => [...kept].filter((p) => p.section === s).sort((a, b) => a.order - b.order);
    const more = (s: PackItem['section'], n: number) => totals[s] - n;
    const blocks = [parts.header];
    const prevKept = by('previous');
    const none: [LeftOutKey, number][] = [];
    // each group says how many of its own items it left out, one of which it keeps none on the Left
    // out line, by kind (also when the whole section is left out: a count of "lines" would mix them)
    const lines: string[] = [];
    for (const g of groups) {
      const here = prevKept.filter((p) => p.group === g);
      const left = groupTotal(g) - here.length;
      if (here.length === 0) {
        if (left > 0) none.push([GROUP_LEFT_OUT.get(g)!, left]);
        continue;
      }
      if (g !== undefined) lines.push(g);
      lines.push(...here.map((p) => p.text));
      if (left > 0) lines.push(g === undefined ? `(+${left} more)` : `- (+${left} more)`);
    }
    if (prevKept.length > 0) blocks.push(section(TITLES.previous, lines));
    const list = (s: 'users' | 'last', title: string) => {
      const kept = by(s);
      if (kept.length === 0 && totals[s] > 0) none.push([s, totals[s]]);
      if (kept.length === 0) return;
      const lines = kept.map((k) => k.text);
      if (more(s, kept.length) > 0) lines.push(`- (+${more(s, kept.length)} more)`);
      blocks.push(section(title, lines));
    };
    const inline = (s: 'tools' | 'artefacts', title: string) => {
      const kept = by(s);
      // the artefacts (the identifiers first) are never left out uncounted: at worst their heading and "(+N more)"
      if (s === 'tools' && kept.length === 0 && totals[s] > 0) none.push([s, totals[s]]);
      if (totals[s] === 0 || (s === 'tools' && kept.length === 0)) return;
      const texts = kept.map((k) => k.text);
      blocks.push(section(title, [listedOrCounted(texts, more(s, kept.length))]));
    };
    list('users', TITLES.users);
    inline('tools', TITLES.tools);
    inline('artefacts', TITLES.artefacts);
    list('last', TITLES.last);
    if (none.length > 0) blocks.push(leftOutLine(none));
    return blocks.join('\n\n');
  };

  // greedy by priority on each item's own cost, then checked on the whole rendering
  const cost = new Map<PackItem, number>();
  const costOf = (p: PackItem) => {
    let c = cost.get(p);
    if (c === undefined) {
      c = estimator.count(p.section === 'tools' || p.section === 'artefacts' ? `${p.text}, ` : `${p.text}\n`);
      cost.set(p, c);
    }
    return c;
  };
  const titleCost = (s: PackItem['section']) => estimator.count(`${TITLES[s]}\n\n`) + estimator.count('(+99 more)\n');
  const kept: PackItem[] = [];
  let used = estimator.count(parts.header);
  let chars = parts.header.length;
  // no item is ever left out uncounted: the artefacts' heading and "(+N more)" are reserved, and the
  // other sections are counted on the "Left out:" line until an item of theirs is kept
  if (totals.artefacts > 0) {
    used += titleCost('artefacts');
    chars += TITLES.artefacts.length + 16;
  }
  // the previous section's groups are counted each by kind until it opens, the other sections whole
  let closed = new Set<LeftOutKey>([
    ...groups.filter((g) => groupTotal(g) > 0).map((g) => GROUP_LEFT_OUT.get(g)!),
    ...(['users', 'tools', 'last'] as const).filter((s) => totals[s] > 0),
  ]);
  let previousOpen = false;
  const leftOutCost = (keys: ReadonlySet<LeftOutKey>) =>
    keys.size === 0
      ? { units: 0, chars: 0 }
      : ((line) => ({ units: estimator.count(`\n\n${line}`), chars: line.length + 2 }))(leftOutLine([...keys].map((k) => [k, 999])));
  const reserved = leftOutCost(closed);
  used += reserved.units;
  chars += reserved.chars;
  const groupCountCost = estimator.count('- (+99 more)\n');
  for (const p of priority) {
    let extra = costOf(p);
    let extraChars = p.text.length + 2;
    // what the "Left out:" line counts once `p` is kept: its section's heading and "(+N more)" (a
    // previous-summary group's title and "- (+N more)") in its place; the previous section, opening,
    // counts its other groups there, each on its own
    const open = new Set(closed);
    if (p.section === 'previous') {
      if (!previousOpen) {
        extra += estimator.count(`${TITLES.previous}\n\n`);
        extraChars += TITLES.previous.length + 2;
      }
      if (open.delete(GROUP_LEFT_OUT.get(p.group)!)) {
        extra += (p.group !== undefined ? estimator.count(`${p.group}\n`) : 0) + groupCountCost;
        extraChars += (p.group?.length ?? 0) + 1 + 16;
      }
    } else if (p.section !== 'artefacts' && open.delete(p.section)) {
      extra += titleCost(p.section);
      extraChars += TITLES[p.section].length + 16;
    }
    if (open.size !== closed.size || [...open].some((k) => !closed.has(k))) {
      const before = leftOutCost(closed);
      const after = leftOutCost(open);
      extra += after.units - before.units;
      extraChars += after.chars - before.chars;
    }
    if (used + extra > textBudget || chars + extraChars > maxChars) continue;
    used += extra;
    chars += extraChars;
    closed = open;
    if (p.section === 'previous') previousOpen = true;
    kept.push(p);
  }
  /** Cost of the summary event holding `text` (shadow prompt and text, DESIGN §3.1), estimator units. */
  const summaryCost = (text: string) => eventCost({ id: 'budget', type: 'summary', shadowPrompt: request.shadowPrompt, text }, estimator);
  // the greedy pass reserves a `(+N more)` line in every section: what that leaves unused
  // is filled with the next items in priority, each checked on the whole rendering (a few tries)
  const fill = (text: string): string => {
    const chosen = new Set(kept);
    let best = text;
    let slack = (request.maxSummaryTokens ?? 0) - summaryCost(text);
    let tries = 0;
    for (const p of priority) {
      if (tries >= MAX_FILL_TRIES || slack <= 0) break;
      if (chosen.has(p) || costOf(p) > slack) continue;
      tries += 1;
      chosen.add(p);
      const next = render(chosen);
      if (fits(next) && next.length <= maxChars) {
        best = next;
        slack = (request.maxSummaryTokens ?? 0) - summaryCost(next);
      } else chosen.delete(p);
    }
    // the newest event, when it did not fit whole: shortened at a word to what is left (bisection)
    const newest = lastItems[lastItems.length - 1];
    if (newest === undefined || chosen.has(newest) || slack <= 0) return best;
    const line = parts.lastLines[parts.lastLines.length - 1];
    const shortened = (cap: number): PackItem => ({ ...newest, text: capAtWord(line, '- ', cap) });
    const rendered = (cap: number) => render(new Set([...chosen, shortened(cap)]));
    const fitsAt = (cap: number) => {
      const text = rendered(cap);
      return fits(text) && text.length <= maxChars;
    };
    let lo = 0;
    let hi = newest.text.length - 1;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (fitsAt(mid)) lo = mid;
      else hi = mid - 1;
    }
    return lo > 0 && shortened(lo).text.endsWith(' …') ? rendered(lo) : best;
  };
  for (;;) {
    const text = render(new Set(kept));
    // a header alone says nothing: the compact form keeps some of the archived text instead
    if (fits(text) && text.length <= maxChars) return kept.length > 0 ? fill(text) : undefined;
    if (kept.length === 0) return undefined;
    // leave out the lowest-priority items, about as many as the excess
    const excess = Math.max(1, summaryCost(text) - (request.maxSummaryTokens ?? 0));
    let freed = 0;
    while (kept.length > 0 && freed < excess) freed += costOf(kept.pop()!);
  }
}

/** Most items the packer tries to add, each rendered and costed whole, after its greedy pass (see packSummary). */
const MAX_FILL_TRIES = 8;

/**
 * Least archived content the compact form keeps, whatever the budget: 32 tokens for a tokenizer,
 * 128 UTF-16 code units (four characters a token, as a model is told, see `summaryLengthLimit`)
 * for `chars`; omission markers not counted, the identifiers line counted. So the floor means about
 * the same content for every estimator: 32 `chars` units were less than the marker
 * `[… N characters omitted …]` alone, which then was the whole summary.
 */
export const MIN_COMPACT_SUMMARY_TOKENS = 32;

/** {@link MIN_COMPACT_SUMMARY_TOKENS} in `estimator`'s unit: four times as many for `chars` (code units), else as many (tokens). */
export function minCompactSummaryUnits(estimator: Pick<TokenEstimator, 'name'>): number {
  return estimator.name === 'chars' ? 4 * MIN_COMPACT_SUMMARY_TOKENS : MIN_COMPACT_SUMMARY_TOKENS;
}

/** Share of the compact form's room its identifiers line may take (the archived lines get the rest). */
const COMPACT_IDENTIFIER_SHARE = 1 / 3;

/** Most times the compact form fits its text to the room its identifiers line leaves (see compactSummary). */
const COMPACT_ROUNDS = 3;

/** Title of the compact form's identifiers line. */
const IDENTIFIERS_LINE = 'Identifiers: ';

/**
 * The one rule of every list a budget cuts (the packed summary's inline sections, the compact
 * form's identifiers line): the items kept, in order, comma-separated, then how many were left
 * out, ` (+N more)` (`more` > 0); `(+N more)` alone when none is kept. So nothing a list leaves out
 * goes uncounted (newcomer ncverify52). '' when there is nothing to list or count.
 */
function listedOrCounted(kept: readonly string[], more: number): string {
  const list = kept.join(', ');
  if (more <= 0) return list;
  return list === '' ? `(+${more} more)` : `${list} (+${more} more)`;
}

/**
 * The compact form's `Identifiers: a, b (+N more)` line for `ids` (those its text lacks, most
 * telling first) and `uncounted` more never considered (see rankArtefacts): each id in turn is
 * listed if the line, its newline before and count included, stays within `room` (estimator units), else
 * skipped (a shorter one after it may fit); the others are counted ({@link listedOrCounted}).
 * '' when there is none. Over `room` only when `Identifiers: (+N more)` alone is: an identifier
 * is never left out uncounted.
 */
function identifiersLine(ids: readonly string[], uncounted: number, room: number, estimator: TokenEstimator): string {
  const total = ids.length + uncounted;
  if (total === 0) return '';
  const line = (listed: readonly string[]) => `${IDENTIFIERS_LINE}${listedOrCounted(listed, total - listed.length)}`;
  const listed: string[] = [];
  for (const id of ids) if (estimator.count(`\n${line([...listed, id])}`) <= room) listed.push(id);
  return line(listed);
}

/**
 * The identifiers of `request` (rank 0 of {@link artefactRank}: ids mixing letters and digits,
 * e-mails, URLs, paths, long numbers), in {@link artefactsOf}'s order, each once, no tool name;
 * `dropped` counts those never considered and those the previous summary only counted.
 */
function compactIdentifiers(request: SummaryRequest, prev: PreviousItems): string[] & { dropped: number } {
  const pool = artefactsOf(request, prev);
  const identifiers = pool.filter((a) => artefactRank(a) === 0);
  return Object.assign(identifiers, { dropped: pool.droppedIdentifiers + pool.carried });
}

/**
 * The previous summary `prev` as the compact form writes it: its lines, each group's title
 * ("Earlier …:") before its first line, each group's carried count after its last (`(+N more)`
 * for the loose lines, `- (+N more)` under a title, a title then written for a count alone), without
 * its artefacts (the identifiers line lists or counts them, see {@link compactIdentifiers}).
 */
function previousProse(prev: PreviousItems): string {
  const out: string[] = [];
  for (const g of [undefined, ...EARLIER_TITLES.map((t) => t.title)]) {
    const lines = prev.lines.filter((l) => l.group === g);
    const count = prev.groupCounts.get(g) ?? 0;
    if (lines.length === 0 && count === 0) continue;
    if (g !== undefined) out.push(g);
    out.push(...lines.map((l) => l.text));
    if (count > 0) out.push(g === undefined ? `(+${count} more)` : `- (+${count} more)`);
  }
  return out.join('\n');
}

/**
 * `body`, a middle cut of `text` (its head, one omission marker, its tail: see `fitTextToTokens`),
 * with the title of the previous summary's group its tail continues written again after the marker
 * when the cut took that title away: a tail that starts within a group (its `- ` items, its
 * `- (+N more)` count) would otherwise read as more of the group the head ends in, e.g. a count of
 * last events under `Earlier user messages:` (a property run, seed -1228711968). A tail starting
 * inside an item keeps it an item (`- ` before it). Groups as {@link previousItems} reads them: a
 * title line, then its `- ` lines. `body` as it is when it is whole, or its tail is in no group, or
 * that group's title is before the marker.
 */
function titledAfterCut(text: string, body: string): string {
  for (const m of body.matchAll(OMISSION_MARKER)) {
    const head = body.slice(0, m.index).trimEnd();
    const tail = body.slice(m.index + m[0].length).trimStart();
    if (!text.startsWith(head) || !text.endsWith(tail)) continue;
    const tailStart = text.length - tail.length;
    // the group in effect where the tail starts, and where its title is
    let group: { title: string; at: number } | undefined;
    let at = 0;
    for (const line of text.split('\n')) {
      const end = at + line.length;
      if (EARLIER_TITLE_LINES.has(line.trim())) group = { title: line.trim(), at };
      else if (!line.startsWith('- ')) group = undefined;
      if (tailStart <= end) {
        // a tail starting at a title line holds the title itself
        if (group === undefined || group.at >= tailStart || group.at < head.length) return body;
        const item = tailStart > at && !tail.startsWith('- ') ? `- ${tail}` : tail;
        return `${body.slice(0, m.index + m[0].length).trimEnd()}\n${group.title}\n${item}`;
      }
      at = end + 1;
    }
    return body;
  }
  return body;
}

/**
 * The compact form used when even the smallest sectioned summary would exceed the budget (a small
 * pass): no header or headings, the previous summary's content then the archived events as they
 * are (one line each). When they do not fit, they are middle-truncated (between words) so the
 * oldest and the newest lines stay, and the identifiers that the cut left out (see
 * {@link compactIdentifiers}) follow on an `Identifiers: …` line, as many as fit within a third
 * of the room, the others counted (`(+N more)`, see {@link identifiersLine}): none goes uncounted.
 * When only counting them leaves the text room for more identifiers, or as many and more text (a
 * text whose words cost many tokens each is cut coarsely), they are only counted.
 * The room is `textBudget` (estimator units), but never less than {@link minCompactSummaryUnits}
 * of content plus the omission marker's cost (and then, the budget exceeded anyway, plus the cost
 * of the identifiers' `(+N more)`, a marker too), so a summary always holds some of the archived
 * text beyond the markers, for every estimator. Never blank.
 */
function compactSummary(request: SummaryRequest, parts: ExtractedParts, textBudget: number, estimator: TokenEstimator): string {
  const prev = previousItems(parts.previous);
  const text = [previousProse(prev), ...parts.eventLines].filter((l) => l !== '').join('\n');
  const ids = compactIdentifiers(request, prev);
  const lacking = (kept: string) => ids.filter((id) => !kept.includes(id));
  if (text.trim() === '' && ids.length + ids.dropped === 0) return parts.header;
  // the marker's longest form: it is not content, so it never eats into the floor
  const marker = estimator.count(` [… ${text.length} characters omitted …] `);
  const floor = minCompactSummaryUnits(estimator) + marker;
  const room = Math.max(textBudget, floor);
  // whole, when it fits and holds every identifier (the previous summary's list is not in the text)
  if (fitsTokens(text, room, estimator) && lacking(text).length === 0 && ids.dropped === 0) return text.trim();
  const fitBody = (share: number) => {
    const fit = (units: number) => fitTextToTokens(text, Math.max(0, Math.floor(units)), estimator, AT_WORDS).trim();
    const cut = fit(share);
    const titled = titledAfterCut(text, cut);
    // the title written again costs room: the text is cut for what it leaves (and titled again: the tail moved)
    return titled === cut ? cut : titledAfterCut(text, fit(share - (estimator.count(titled) - estimator.count(cut))));
  };
  const draft = fitBody(room * (1 - COMPACT_IDENTIFIER_SHARE));
  // what a line takes from the room: all its cost, but under the floor (a summary over its budget
  // anyway) its count is a marker as the omission marker is, and never eats into the floor's content
  const taken = (line: string) => {
    const whole = line === '' ? 0 : estimator.count(`\n${line}`);
    const count = textBudget < floor ? /\(\+\d+ more\)$/.exec(line) : null;
    return count === null ? whole : Math.max(0, whole - estimator.count(` ${count[0]}`));
  };
  // the text gets the room `line` leaves, then the line is made again against the text kept (not
  // the draft), never costlier: as it lists or counts less, the text gets more, until neither changes
  const settle = (first: string) => {
    let line = first;
    let body: string | undefined;
    for (let round = 0; round < COMPACT_ROUNDS; round++) {
      const next = fitBody(room - taken(line));
      if (next === body) break;
      body = next;
      line = identifiersLine(lacking(body), ids.dropped, line === '' ? 0 : estimator.count(`\n${line}`), estimator);
    }
    const kept = body ?? '';
    return { body: kept, line, present: ids.filter((id) => kept.includes(id) || line.includes(id)).length };
  };
  // the identifiers the draft lacks listed in a third of the room, or only counted, the text then
  // given that room: whichever holds more identifiers (text and line), then more of the text
  const missing = lacking(draft);
  const listing = settle(identifiersLine(missing, ids.dropped, room * COMPACT_IDENTIFIER_SHARE, estimator));
  const counting = missing.length + ids.dropped > 0 ? settle(identifiersLine(missing, ids.dropped, 0, estimator)) : listing;
  const countingBetter = counting.present > listing.present || (counting.present === listing.present && counting.body.length > listing.body.length);
  const { body, line } = countingBetter ? counting : listing;
  const fitted = line === '' ? body : body === '' ? line : `${body}\n${line}`;
  return fitted !== '' ? fitted : parts.header;
}

/** Options of {@link extractiveSummary}. */
export interface ExtractiveSummaryOptions {
  /** Bound of the sections, UTF-16 code units; default {@link DEFAULT_EXTRACTIVE_MAX_CHARS}, raised to {@link MIN_EXTRACTIVE_MAX_CHARS}. */
  maxChars?: number;
  /** Hard bound of the result, characters (Unicode code points), integer ≥ 1 (see {@link extractiveSummary}); absent: none. */
  maxLength?: number;
  /** The estimator the events were costed with: keeps the summary within `request.maxSummaryTokens`. */
  estimator?: TokenEstimator;
}

/**
 * A deterministic extractive summary of `request` (DESIGN §3.7): same input, same output; no
 * model, no randomness, no clock. Never blank when `toSummarize` is non-empty.
 *
 * Contents, each section bounded (all lengths in UTF-16 code units):
 * - a header naming {@link EXTRACTIVE_SUMMARIZER_MODEL} and the number of events covered;
 * - the previous summary text(s), merged (at most ~35 % of `maxChars`, middle-truncated); an
 *   earlier extractive summary is merged without its own header and "Previous summary" title,
 *   its sections gathered under "Earlier …:" titles, so repeated summarizing never nests;
 * - every user message, oldest first (each truncated; if there are too many, the first and
 *   the newest are kept and the number left out is stated);
 * - the tools used (names and counts; call ids are not part of the formatted text, DESIGN §3.1);
 * - concrete artefacts found by pattern: URLs, paths, e-mails, JSON `key=value` pairs, dates,
 *   identifiers mixing letters and digits, snake/camel case names, numbers and amounts;
 * - the last events before the cut (the work in progress).
 *
 * The overlap is not summarized. `maxChars` (default {@link DEFAULT_EXTRACTIVE_MAX_CHARS}, at
 * least {@link MIN_EXTRACTIVE_MAX_CHARS}) bounds the whole result.
 *
 * The summary budget: with `options.estimator` (the one the events were costed with) and
 * `request.maxSummaryTokens`, the summary event (shadow prompt and text, DESIGN §3.1) is kept
 * within that budget: when the unbudgeted summary does not fit, or fits only by leaving something
 * out (more than {@link MAX_ARTEFACTS} artefacts, a section cut to its share), the sections are packed whole
 * item by whole item (see packSummary): headings are never cut, no word is cut (a long line is
 * shortened at a word boundary, ending " …"), items are left out lowest priority first, a section
 * with items left out says how many ("(+N more)"; in the previous section each "Earlier …:" group
 * its own), one with none kept is counted on a last `Left out: …` line, and the identifiers (ids, e-mails, paths,
 * large numbers; those of the user messages and the previous summary first) come before prose,
 * after the user's first and newest messages; the result also stays within `maxChars`. When even
 * {@link MIN_EXTRACTIVE_MAX_CHARS} for the sections does not fit, the compact form (the previous summary's content and the archived events as they are, no
 * headings) is middle-truncated to the budget (the identifiers the cut leaves out listed after it, those that do not fit counted, "(+N more)"), or to
 * {@link minCompactSummaryUnits} of content (32 tokens, 128 code units for `chars`) when the budget leaves less for the text
 * (the summary then costs more than its budget).
 *
 * `maxLength` (the longest text an event may hold, the service's `MAX_TEXT_LENGTH`) is a hard
 * bound, in characters (Unicode code points): `maxChars` is lowered to it, and a result still
 * longer (a bound under {@link MIN_EXTRACTIVE_MAX_CHARS}, or a compact form longer than
 * `maxChars`) is middle-truncated between words to at most `maxLength` UTF-16 code units (so at
 * most as many code points). The result never has more than `maxLength` characters.
 * Never throws.
 */
export function extractiveSummary(request: SummaryRequest, options: ExtractiveSummaryOptions = {}): string {
  const requested = options.maxChars;
  const asked = Number.isFinite(requested) ? Math.floor(requested as number) : DEFAULT_EXTRACTIVE_MAX_CHARS;
  const maxLength = options.maxLength !== undefined && Number.isFinite(options.maxLength) ? Math.max(1, Math.floor(options.maxLength)) : undefined;
  const maxChars = Math.max(MIN_EXTRACTIVE_MAX_CHARS, maxLength === undefined ? asked : Math.min(asked, maxLength));
  const summary = budgetedSummary(request, maxChars, options.estimator);
  // the hard bound: only a bound under MIN_EXTRACTIVE_MAX_CHARS or a compact form longer than maxChars reaches it
  if (maxLength === undefined || codePointLength(summary) <= maxLength) return summary;
  return truncateMiddle(summary, maxLength, AT_WORDS);
}

/** {@link extractiveSummary} within `maxChars` (already resolved) and the request's budget, before the hard bound. */
function budgetedSummary(request: SummaryRequest, maxChars: number, estimator: TokenEstimator | undefined): string {
  const parts = extractParts(request);
  const full = renderParts(parts, maxChars);
  if (!estimator || request.maxSummaryTokens === undefined || !Number.isFinite(request.maxSummaryTokens)) return full;
  const budget = Math.floor(request.maxSummaryTokens);
  const fits = (text: string) => eventCost({ id: 'budget', type: 'summary', shadowPrompt: request.shadowPrompt, text }, estimator) <= budget;
  // as it is only when nothing was left out of it: else the budgeted packing, which keeps the identifiers first and counts what it leaves out (newcomer ncsummaryfacts F1)
  // (an artefact middle-truncated is left out in part: newcomer ncverify52)
  if (fits(full) && parts.artefacts.length <= MAX_ARTEFACTS && !parts.artefactsShortened && renderParts(parts, Infinity) === full) return full;
  // sections share what the header and titles leave, so the bound never cuts through them
  const overhead = renderOverhead(parts);
  const render = (bound: number) => renderParts(parts, bound, bound - overhead, BUDGET_SHARES);
  const lowest = Math.max(MIN_EXTRACTIVE_MAX_CHARS, overhead + MIN_EXTRACTIVE_MAX_CHARS);
  const textBudget = summaryTextBudget(request, estimator) ?? 0;
  if (lowest >= maxChars || !fits(render(lowest))) return compactSummary(request, parts, textBudget, estimator);
  return packSummary(request, parts, estimator, textBudget, maxChars, fits) ?? compactSummary(request, parts, textBudget, estimator);
}
