/**
 * Where the service may cut text: on a grapheme cluster boundary (Unicode UAX #29, extended
 * grapheme clusters, as `Intl.Segmenter` with granularity `grapheme` finds them), so a cut never
 * leaves half a surrogate pair (a lone surrogate, which the API refuses on input), never re-pairs
 * the regional indicators of flags (🇯🇵🇩🇪 cut after one indicator reads 🇵🇩), never splits a ZWJ
 * sequence (👩‍👩‍👧‍👦), an emoji from its skin tone (👍🏽), a tag sequence (🏴 England) or a letter from
 * its combining marks (é as e + U+0301, Devanagari conjuncts).
 *
 * Cost: only a window around the cut is segmented, never the whole text (cuts run on texts of
 * megabytes, many times per pass): the window runs from the nearest certain boundary before the
 * cut to the nearest one after it (found by looking at two code points: between two ASCII
 * characters, two CJK ideographs, two emoji, a skin tone or a mark and a letter, a control
 * character and anything, …), so a cut in
 * ordinary text costs a few code-point tests and one small segmentation; a run of regional
 * indicators is resolved by counting them back to the start of the run (their pairing depends on
 * it), without segmenting the run. `Intl.Segmenter` iteration is slow on long strings (super-linear
 * in V8: 40,000 code units take ~1 s), which is one more reason never to hand it a whole text.
 */

const SEGMENTER = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** Farthest (in UTF-16 code units) a certain boundary is looked for on each side of a cut. */
const MAX_LOOK = 512;

/**
 * Code points known to have Grapheme_Cluster_Break `Other` (neither Prepend, Extend, SpacingMark,
 * ZWJ, Regional_Indicator nor a Hangul jamo) and no Indic conjunct role: between two of them
 * (or one and a regional indicator) there is always a boundary, whatever comes before. Not every
 * such code point, only common ranges: printable ASCII, Latin-1 to Latin Extended-B, Greek,
 * Cyrillic, Hebrew and Arabic letters, general punctuation and symbols, CJK punctuation, kana,
 * CJK ideographs, Hangul syllables, full-width forms, emoji (skin tones excluded).
 */
const PLAIN =
  /[\u0020-\u007e\u00a0-\u00ac\u00ae-\u02ff\u0370-\u0482\u048a-\u052f\u05d0-\u05ea\u0620-\u064a\u2010-\u2027\u2030-\u205e\u2100-\u2bff\u3000-\u3029\u3030-\u303f\u3041-\u3096\u309b-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3\uff01-\uff9d\u{1f000}-\u{1f1e5}\u{1f200}-\u{1f3fa}\u{1f400}-\u{1faff}\u{20000}-\u{3134f}]/u;

/**
 * Code points that are never Prepend nor ZWJ: combining marks (Extend or SpacingMark), skin tones,
 * tag characters. After one of them, a {@link PLAIN} code point always starts a new cluster
 * (`👍🏽|👍🏽`, `🏴…󠁿|🏴`, `é|x`).
 */
const EXTENDING = /[\p{M}\u{1f3fb}-\u{1f3ff}\u{e0020}-\u{e007f}]/u;

/** Control characters (Grapheme_Cluster_Break Control, CR, LF): a boundary on both sides, except CR × LF. */
const CONTROL = /[\p{Cc}\u2028\u2029]/u;

function isRegionalIndicator(cp: number): boolean {
  return cp >= 0x1f1e6 && cp <= 0x1f1ff;
}

/** The code point ending at `p` (`text[p - 1]`, or the pair ending there). */
function codePointBefore(text: string, p: number): number {
  const low = text.charCodeAt(p - 1);
  if (low >= 0xdc00 && low <= 0xdfff && p >= 2) {
    const high = text.charCodeAt(p - 2);
    if (high >= 0xd800 && high <= 0xdbff) return (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
  }
  return low;
}

/** UTF-16 length of the code point ending at `p`. */
function widthBefore(text: string, p: number): number {
  return codePointBefore(text, p) > 0xffff ? 2 : 1;
}

/** Regional indicators right before `p`, counted back to the start of their run. */
function regionalIndicatorsBefore(text: string, p: number): number {
  let n = 0;
  while (p >= 2 && isRegionalIndicator(codePointBefore(text, p))) {
    n++;
    p -= 2;
  }
  return n;
}

/**
 * Whether `p` (0 < p < text.length, not inside a surrogate pair) is a grapheme boundary, when two
 * code points tell: true or false for certain, undefined when only segmenting can tell.
 */
function knownBoundary(text: string, p: number): boolean | undefined {
  const before = codePointBefore(text, p);
  const after = text.codePointAt(p) ?? 0;
  if (before === 0x0d && after === 0x0a) return false;
  const a = String.fromCodePoint(before);
  const b = String.fromCodePoint(after);
  if (CONTROL.test(a) || CONTROL.test(b)) return true;
  const riBefore = isRegionalIndicator(before);
  const riAfter = isRegionalIndicator(after);
  // within a run of regional indicators they pair from the start of the run (UAX #29 GB12, GB13)
  if (riBefore && riAfter) return regionalIndicatorsBefore(text, p) % 2 === 0;
  if (PLAIN.test(b) && (riBefore || PLAIN.test(a) || EXTENDING.test(a))) return true;
  if (riAfter && PLAIN.test(a)) return true;
  return undefined;
}

/** `p` moved out of a surrogate pair (to its start for `'before'`, its end for `'after'`). */
function outsidePair(text: string, p: number, direction: 'before' | 'after'): number {
  const high = text.charCodeAt(p - 1);
  const low = text.charCodeAt(p);
  const inside = high >= 0xd800 && high <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
  return inside ? (direction === 'before' ? p - 1 : p + 1) : p;
}

/**
 * The grapheme cluster boundary of `text` at `index` or nearest it on the side `direction` says:
 * `'before'` gives the largest boundary ≤ `index` (where a kept head may end), `'after'` the
 * smallest boundary ≥ `index` (where a kept tail may start). Both ends of `text` are boundaries.
 * The one rule of where the service cuts text (summaries' middle-truncation, the model
 * summarizer's parts of one event, the compaction diff's previews, snippets, quoted inputs).
 *
 * @param text any string (lone surrogates included: each is a cluster of its own).
 * @param index a position in UTF-16 code units; clamped to 0…`text.length`, a fraction floored.
 * @param direction which side of `index` to look on when `index` is not a boundary.
 * @returns a position in UTF-16 code units. Never inside a surrogate pair; inside a cluster only
 *   for a cluster longer than about 512 code units (a base with hundreds of combining marks,
 *   which no script needs), where the cut is made at a code point boundary. Pure, deterministic.
 */
export function graphemeBoundary(text: string, index: number, direction: 'before' | 'after'): number {
  let i = Math.min(text.length, Math.max(0, Math.floor(index)));
  if (i === 0 || i === text.length) return i;
  i = outsidePair(text, i, direction);
  if (i === 0 || i === text.length) return i;
  if (knownBoundary(text, i) === true) return i;
  // the window: from the nearest certain boundary on each side; where none is near (a long run
  // of a script without one, e.g. Devanagari without spaces), MAX_LOOK code units away: a cluster
  // that does not reach that far is segmented there as in the whole text (what decides a boundary
  // lies within its cluster, but for regional indicators, whose long runs have certain boundaries)
  const certainStart = certainBoundary(text, i, -1);
  const certainEnd = certainBoundary(text, i, 1);
  const start = certainStart ?? outsidePair(text, Math.max(0, i - MAX_LOOK), 'before');
  const end = certainEnd ?? outsidePair(text, Math.min(text.length, i + MAX_LOOK), 'after');
  const hit = SEGMENTER.segment(text.slice(start, end)).containing(i - start);
  if (hit === undefined) return i;
  const from = start + hit.index;
  const to = from + hit.segment.length;
  if (from === i) return i;
  // a cluster reaching an uncertain window edge is longer than this looks at: cut at the code point
  if (direction === 'before') return from > start || certainStart !== undefined ? from : i;
  return to < end || certainEnd !== undefined ? to : i;
}

/**
 * The nearest position before `i` (`step` -1; 0 counts) or after it (`step` 1; `text.length`
 * counts) that is certainly a boundary; undefined when none within {@link MAX_LOOK} code units.
 */
function certainBoundary(text: string, i: number, step: -1 | 1): number | undefined {
  let p = i;
  for (let looked = 0; looked <= MAX_LOOK;) {
    const width = step < 0 ? widthBefore(text, p) : (text.codePointAt(p) ?? 0) > 0xffff ? 2 : 1;
    p += step * width;
    looked += width;
    if (p <= 0) return 0;
    if (p >= text.length) return text.length;
    if (knownBoundary(text, p) === true) return p;
  }
  return undefined;
}
