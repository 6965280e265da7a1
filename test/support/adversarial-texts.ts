/**
 * The costliest texts we could build for the per-request work an adversary controls (issue 17,
 * item 1): token counting (long pre-tokens, merges that never repeat) and the recall index
 * (distinct words). Deterministic, so every run measures the same texts. Used by the reliability
 * test and benchmark figure 10.
 */

/** A deterministic pseudo-random sequence (LCG) of `length` picks, joined. */
function pseudoRandom(length: number, pick: (x: number) => string): string {
  let x = 1;
  const parts: string[] = [];
  for (let i = 0; i < length; i++) {
    x = (Math.imul(x, 1103515245) + 12345) & 0x7fffffff;
    parts.push(pick(x >> 8));
  }
  return parts.join('');
}

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** The adversarial texts, by name: each returns exactly `n` UTF-16 code units (`n` even). */
export const ADVERSARIAL_TEXTS: Record<string, (n: number) => string> = {
  'one letter': (n) => 'a'.repeat(n),
  'one emoji': (n) => '😀'.repeat(n / 2),
  spaces: (n) => ' '.repeat(n - 1) + 'x',
  digits: (n) => pseudoRandom(n, (x) => String(x % 10)),
  base64: (n) => pseudoRandom(n, (x) => BASE64[x % 64]),
  'word, no spaces': (n) => 'token'.repeat(Math.ceil(n / 5)).slice(0, n),
  'word with spaces': (n) => 'token '.repeat(Math.floor(n / 6)).padEnd(n, 'x'),
  'distinct words': (n) => pseudoRandom(Math.ceil(n / 7), (x) => `w${x.toString(36).padStart(5, '0')} `).slice(0, n),
  'random ideographs': (n) => pseudoRandom(n, (x) => String.fromCharCode(0x4e00 + (x % 20000))),
};

/**
 * `length` UTF-16 code units of words never repeated, from word number `from` on (`w<base 36>x`, as in
 * ncsqliteops F3; with `long`, padded to 14 code units, longer than the counter's remembered
 * pre-tokens), each a pre-token of its own. Returns the text and the number of the next word, so
 * successive texts share no word: together they hold more distinct pre-tokens than any cache keeps.
 */
export function distinctWordsFrom(length: number, from: number, long = false): { text: string; next: number } {
  const words: string[] = [];
  let total = 0;
  let i = from;
  while (total < length) {
    const base = (i++).toString(36);
    const word = long ? `w${base.padStart(12, 'q')}x` : `w${base}x`;
    words.push(word);
    total += word.length + 1;
  }
  return { text: words.join(' ').slice(0, length), next: i };
}
