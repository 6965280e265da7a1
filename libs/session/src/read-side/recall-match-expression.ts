import { InvalidQueryError } from './invalid-query-error';
import type { RecallIndexKind } from './recall-index-tables';
import { hasUnspacedScript } from './unspaced-script';
import { isSearchable, needsWholeClusters, searchablePieces } from './recall-searchable';
import { recallFold } from './recall-document';
import { wordIndexText } from './script-boundary';
import { overLimitMessage } from '@lib/compaction';
import { codePointLength, LENGTH_UNIT } from '../domain/client-id-rule';

/** Longest `q` accepted, in characters (Unicode code points). */
export const MAX_RECALL_QUERY_LENGTH = 1000;
/** What recall answers (after `q: `) for a `q` missing, empty or blank. */
export const RECALL_QUERY_BLANK = 'give at least one word to search for';
/** What recall answers (after `q: `) for a `q` longer than {@link MAX_RECALL_QUERY_LENGTH}. */
export const RECALL_QUERY_TOO_LONG = overLimitMessage('must be at most', {
  max: MAX_RECALL_QUERY_LENGTH,
  unit: LENGTH_UNIT,
  remedy: 'search with fewer or shorter words',
});
/** Most words `q` may have (words without a letter, digit or emoji are not counted). */
export const MAX_RECALL_QUERY_TERMS = 32;
/** What recall answers (after `q: `) for a `q` of more than {@link MAX_RECALL_QUERY_TERMS} words. */
export const RECALL_QUERY_TOO_MANY_WORDS = overLimitMessage('must have at most', {
  max: MAX_RECALL_QUERY_TERMS,
  unit: 'words (words without a letter, digit or emoji are not counted)',
  remedy: 'search with fewer words (every word must occur in a hit)',
});
/** What recall answers (after `q: `) for a `q` with nothing searchable (see `isSearchable`: emoji include flags and keycaps). */
export const RECALL_QUERY_NOTHING_SEARCHABLE = 'must contain at least one letter, digit or emoji';

/**
 * Turns user text into a safe FTS5 MATCH expression: the text is folded as documents are
 * ({@link recallFold}, NFKC), then every whitespace-separated word becomes a
 * quoted phrase (inner `"` doubled), words without any letter, digit or emoji are dropped, and the
 * phrases are ANDed. Script boundaries inside a word separate its tokens as in documents
 * ({@link wordIndexText}: `번호는KR7781` is the phrase `번호는` `KR7781`). FTS5 operators in `q` (`AND`, `OR`, `NOT`, `NEAR`, `*`, `:`, `^`, `-`,
 * parentheses, quotes) are thus searched as text, never interpreted.
 *
 * Example: `read_file "src/a.ts" -x` → `"read_file" """src/a.ts""" "-x"`.
 *
 * @throws InvalidQueryError (`q`) when `q` is blank, longer than {@link MAX_RECALL_QUERY_LENGTH},
 *   has no letter, digit or emoji at all (a lone combining mark is nothing searchable), or has more
 *   than {@link MAX_RECALL_QUERY_TERMS} words with one.
 */
export function recallMatchExpression(q: string): string {
  return recallTerms(q).map(wordPhrase).join(' ');
}

/** `term` as a quoted FTS5 phrase of the word index (inner `"` doubled, script boundaries marked as in documents). */
function wordPhrase(term: string): string {
  return `"${wordIndexText(term).replace(/"/g, '""')}"`;
}

/** The words of `q` recall searches for (see {@link recallMatchExpression} for the rules and errors). */
function recallTerms(q: string): string[] {
  if (typeof q !== 'string' || q.trim() === '') throw new InvalidQueryError('q', RECALL_QUERY_BLANK);
  if (codePointLength(q) > MAX_RECALL_QUERY_LENGTH) throw new InvalidQueryError('q', RECALL_QUERY_TOO_LONG);
  const terms = recallFold(q)
    // Control characters (a NUL ends an FTS5 string early) separate words like spaces.
    .replace(/[\u0000-\u001f\u007f]/g, ' ')
    .split(/\s+/u)
    .filter(isSearchable);
  if (terms.length === 0) throw new InvalidQueryError('q', RECALL_QUERY_NOTHING_SEARCHABLE);
  // Every word must occur in a hit: dropping some would answer hits without them.
  if (terms.length > MAX_RECALL_QUERY_TERMS) throw new InvalidQueryError('q', RECALL_QUERY_TOO_MANY_WORDS);
  return terms;
}

/** Fewest characters (code points) a trigram MATCH phrase can find. */
const TRIGRAM_LENGTH = 3;

/**
 * How recall searches `q` (issue 17, item 5):
 * - `index: 'words'` (the tenant's word index: unicode61 words, BM25) unless `q` holds a character
 *   of a script written without spaces, Korean, or an emoji ({@link hasUnspacedScript});
 * - otherwise `index: 'trigrams'` (the tenant's trigram index): every word is searched as a substring of the document.
 *   (`phrases` lists the quoted phrases of `match` one by one.)
 *   Words of 3 or more characters become quoted trigram phrases in `match` (BM25 over trigrams);
 *   shorter ones (`東京`, `😀`) cannot be trigram phrases and are returned in `substrings`, to be
 *   checked with `LIKE` (`match` is null when every word is short: such a query scans the
 *   trigram index and its hits are unranked).
 *
 * @throws InvalidQueryError (`q`) as {@link recallMatchExpression}.
 */
export function recallQueryPlan(q: string): RecallQueryPlan {
  const terms = recallTerms(q);
  const quote = (term: string) => `"${term.replace(/"/g, '""')}"`;
  if (!terms.some(hasUnspacedScript)) {
    const phrases = terms.map(wordPhrase);
    return { index: 'words', match: phrases.join(' '), phrases, substrings: [], wholeClusters: [] };
  }
  // Substrings keep punctuation, unlike unicode61 words: split words at it (`"東京"`, `東京*`,
  // `(東)` search `東京` and `東`), as the word index's tokenizer does for other scripts; an
  // emoji (a flag, a keycap, a subdivision flag) is never split.
  const pieces = terms.flatMap(searchablePieces);
  const phrases = pieces.filter((term) => [...term].length >= TRIGRAM_LENGTH).map(quote);
  return {
    index: 'trigrams',
    match: phrases.length > 0 ? phrases.join(' ') : null,
    phrases,
    substrings: pieces.filter((term) => [...term].length < TRIGRAM_LENGTH),
    wholeClusters: [...new Set(pieces.filter(needsWholeClusters))],
  };
}

/** How recall searches a query (see {@link recallQueryPlan}). */
export interface RecallQueryPlan {
  /** Which of the tenant's full-text indexes is searched (its table: `recallIndexTables`). */
  index: RecallIndexKind;
  /** The FTS5 MATCH expression (the phrases ANDed), null when every word is searched by substring. */
  match: string | null;
  /** The quoted phrases of `match`, one per word, each a MATCH expression of its own. */
  phrases: string[];
  /** Words checked with `LIKE` (shorter than a trigram). */
  substrings: string[];
  /**
   * Words (of `phrases` or `substrings`) that must also occur as whole grapheme clusters
   * (`occursAsWholeClusters`): those holding regional indicators, so the flag 🇵🇰 is not found
   * across 🇯🇵🇰🇷.
   */
  wholeClusters: string[];
}
