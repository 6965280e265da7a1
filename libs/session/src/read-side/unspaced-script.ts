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
import { RECALL_EMOJI_CLASS } from './recall-searchable';

/** The one definition of scripts written without spaces (`SPACELESS_LETTER`, the extractive summarizer's too), Korean, and emoji. */
const UNSPACED_SCRIPT = new RegExp(`${SPACELESS_LETTER}|${HANGUL_LETTER}|[${RECALL_EMOJI_CLASS}]`, 'u');

/**
 * A UTF-16 code unit from U+00A9 up (surrogates included). The first code point
 * {@link UNSPACED_SCRIPT} matches is U+00A9 ©, an emoji (Extended_Pictographic); every letter of
 * the scripts without spaces and of Korean comes later (a spec checks every code point below it).
 * So a text without one cannot match, and this one class tells so for a fraction of the cost of
 * that expression's alternatives, lookaheads and script classes tried at every character (the
 * projector asks for every event it indexes: about a fifth of the cost on English text).
 */
const MAY_BE_UNSPACED = /[^\u0000-\u00a8]/;

/**
 * True when `text` holds at least one letter (or combining mark, or number other than a decimal
 * digit) of a script written without spaces (`SPACELESS_LETTER` of `@lib/compaction`: by script
 * extension, so `ー` counts; their decimal digits, punctuation and symbols do not: `๑๒๓` is a
 * number, a word of the word index), of Korean (`HANGUL_LETTER`), or an emoji.
 */
export function hasUnspacedScript(text: string): boolean {
  return MAY_BE_UNSPACED.test(text) && UNSPACED_SCRIPT.test(text);
}

/**
 * Longest chunk of a document in the trigram index, in UTF-16 code units (see `recall-chunks`: a
 * longer document is indexed as several overlapping rows, so every character of it is searched).
 * Trigram indexing of random ideographs (each trigram a new term) costs about 1 s per 100,000 on
 * the shared, loaded 2-core machine: one row stays short (issue 17, item 1), and a batch holding
 * a long event is projected off the event loop (`LARGE_BATCH_TEXT`). Until read models 21 the
 * trigram index held only the first 16,384 code points of a document.
 */
export const RECALL_TRIGRAM_CHUNK_LENGTH = 16_384;
