/**
 * Characters of scripts written without spaces between words (Han, Hiragana, Katakana, Thai,
 * Lao, Khmer, Myanmar), of Korean (Hangul: spaced, but particles and endings are written against
 * the word before them, `서울에서`, as CJK bigram analyzers treat it too) and emoji (`RECALL_EMOJI_CLASS`:
 * pictographs, flags, keycaps, skin tones). FTS5's
 * unicode61 tokenizer indexes a run of such letters as one token (so `テキスト` is not found in
 * `日本語のテキスト`, nor `서울` in `서울에서`) and drops emoji; recall indexes documents holding any
 * of them a second time with the trigram tokenizer and searches those queries there.
 */
import { HANGUL_LETTER, SPACELESS_LETTER } from '@lib/compaction';
import { documentPrefix } from './recall-document';
import { RECALL_EMOJI_CLASS } from './recall-searchable';

/** The one definition of scripts written without spaces (`SPACELESS_LETTER`, the extractive summarizer's too), Korean, and emoji. */
const UNSPACED_SCRIPT = new RegExp(`${SPACELESS_LETTER}|${HANGUL_LETTER}|[${RECALL_EMOJI_CLASS}]`, 'u');

/**
 * True when `text` holds at least one letter (or combining mark, or number other than a decimal
 * digit) of a script written without spaces (`SPACELESS_LETTER` of `@lib/compaction`: by script
 * extension, so `ー` counts; their decimal digits, punctuation and symbols do not: `๑๒๓` is a
 * number, a word of the word index), of Korean (`HANGUL_LETTER`), or an emoji.
 */
export function hasUnspacedScript(text: string): boolean {
  return UNSPACED_SCRIPT.test(text);
}

/**
 * Longest prefix of a document (characters: Unicode code points) put in the trigram index. Trigram indexing
 * took 1 s per 100,000 random ideographs (each trigram a new term) on the shared, loaded 2-core machine, on the event loop:
 * bounding the prefix bounds what one event can cost the projector (issue 17, item 1). Words
 * further into a longer document are still found by the word index where unicode61 splits them.
 */
export const MAX_TRIGRAM_DOCUMENT_LENGTH = 16_384;

/** The part of `body` the trigram index holds: its first {@link MAX_TRIGRAM_DOCUMENT_LENGTH} code points (never half a surrogate pair). */
export function trigramDocument(body: string): string {
  return documentPrefix(body, MAX_TRIGRAM_DOCUMENT_LENGTH);
}
