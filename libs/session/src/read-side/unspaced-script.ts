/**
 * Characters of scripts written without spaces between words (Han, Hiragana, Katakana, Thai,
 * Lao, Khmer, Myanmar) and emoji. FTS5's unicode61 tokenizer indexes a run of such letters as one
 * token (so `テキスト` is not found in `日本語のテキスト`) and drops emoji; recall indexes documents
 * holding any of them a second time with the trigram tokenizer and searches those queries there.
 */
const UNSPACED_SCRIPT =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}\p{Extended_Pictographic}]/u;

/** True when `text` holds at least one character of a script written without spaces, or an emoji. */
export function hasUnspacedScript(text: string): boolean {
  return UNSPACED_SCRIPT.test(text);
}
