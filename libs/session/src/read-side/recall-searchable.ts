/**
 * What recall can search: the one rule deciding what a query word is made of (docs/http-api.md, "Recall
 * `q`": a word without a letter, digit or emoji is not searched). Every layer asks it: the query
 * plan (`recallQueryPlan`, whose `invalid_query` answers HTTP and the typed client relay), the
 * routing of documents and queries to the trigram index (`hasUnspacedScript`) and the fold of
 * both (`recallFold`, which leaves emoji as they are).
 *
 * Text is read in grapheme clusters (`Intl.Segmenter`, Unicode's extended grapheme clusters): an
 * emoji is one whole cluster, so a flag (two regional indicators), a keycap (`#`, U+FE0F, U+20E3),
 * a subdivision flag (🏴 and its tag characters), a ZWJ sequence or a skin tone is searched as
 * what it is, never as one of its parts.
 */

/**
 * The code points that make a grapheme cluster an emoji (the body of a regular-expression
 * character class, `u` flag): Extended_Pictographic (😀, ‼, ©, 🏴, …),
 * regional indicators (the halves of a flag), emoji modifiers (skin tones) and the keycap
 * U+20E3 (`1️⃣`, `#️⃣`).
 */
export const RECALL_EMOJI_CLASS = String.raw`\p{Extended_Pictographic}\p{Regional_Indicator}\p{Emoji_Modifier}\u20e3`;

/** A code point that makes a cluster searchable: a letter, a digit or one of {@link RECALL_EMOJI_CLASS}. */
const SEARCHABLE = new RegExp(String.raw`[\p{L}\p{N}${RECALL_EMOJI_CLASS}]`, 'u');

const graphemes = new Intl.Segmenter('und', { granularity: 'grapheme' });

/** True when `text` holds a letter, a digit or an emoji (a combining mark, `#` or `!` alone is nothing searchable). */
export function isSearchable(text: string): boolean {
  return SEARCHABLE.test(text);
}

/**
 * The searchable pieces of one query word, in order: its runs of grapheme clusters holding a
 * letter, digit or emoji ({@link isSearchable}), split at every other cluster (punctuation,
 * symbols, a lone mark), as the word index's tokenizer splits words at punctuation. A cluster is
 * never cut: `東京-🇯🇵!` → `東京`, `🇯🇵`; `#️⃣` stays whole (its U+20E3 makes it an emoji).
 */
export function searchablePieces(word: string): string[] {
  const pieces: string[] = [];
  let run = '';
  for (const { segment } of graphemes.segment(word)) {
    if (isSearchable(segment)) {
      run += segment;
    } else if (run !== '') {
      pieces.push(run);
      run = '';
    }
  }
  if (run !== '') pieces.push(run);
  return pieces;
}

/**
 * Whether `term` occurs in `text` as whole grapheme clusters somewhere: an occurrence that starts
 * or ends inside a cluster (`🇵🇰` across the flags `🇯🇵🇰🇷`, `🏴` inside a subdivision flag)
 * does not count. Used on the rows a substring or trigram match found, for query pieces holding
 * regional indicators (see {@link needsWholeClusters}). Cost: one segmentation of a few clusters
 * around each occurrence.
 */
export function occursAsWholeClusters(text: string, term: string): boolean {
  if (term === '') return true;
  for (let at = text.indexOf(term); at >= 0; at = text.indexOf(term, at + 1)) {
    if (isClusterBoundary(text, at) && isClusterBoundary(text, at + term.length)) return true;
  }
  return false;
}

/**
 * True when a piece must be checked with {@link occursAsWholeClusters}: it holds a regional
 * indicator, whose pairing depends on the whole run of them before it, which neither a
 * substring nor a trigram match sees (🇵🇰 is a substring of 🇯🇵🇰🇷).
 */
export function needsWholeClusters(piece: string): boolean {
  return /\p{Regional_Indicator}/u.test(piece);
}

/** Whether UTF-16 index `at` of `text` is between two grapheme clusters (or at an end). */
function isClusterBoundary(text: string, at: number): boolean {
  if (at <= 0 || at >= text.length) return true;
  // Regional indicators pair from the start of their run: count the run before `at`.
  const before = text.codePointAt(at - 2);
  const after = text.codePointAt(at);
  if (isRegionalIndicator(after) && before !== undefined && isRegionalIndicator(before)) {
    let run = 0;
    for (let i = at - 2; i >= 0 && isRegionalIndicator(text.codePointAt(i)); i -= 2) run++;
    return run % 2 === 0;
  }
  const segment = graphemes.segment(text.slice(Math.max(0, at - 64), Math.min(text.length, at + 64))).containing(Math.min(at, 64));
  return segment !== undefined && segment.index === Math.min(at, 64);
}

function isRegionalIndicator(point: number | undefined): boolean {
  return point !== undefined && point >= 0x1f1e6 && point <= 0x1f1ff;
}
