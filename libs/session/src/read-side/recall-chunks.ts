/**
 * How one event's recall document is held by a recall index: as one or more rows ("chunks"),
 * each a slice of the document, so every character of a long event is indexed while one
 * FTS5 insert stays bounded (FTS5 flushes its pending terms between rows, not within one: a
 * single insert of 1,000,000 distinct words took 190 ms, issue 17 item 1).
 *
 * Row ids: chunk `k` (0-based) of the event at global position `p` is row
 * `p * RECALL_CHUNKS_PER_EVENT + k` ({@link recallRowid}), so a position's rows are adjacent and in
 * log order, a range of positions is a range of row ids ({@link firstRecallRowid},
 * {@link lastRecallRowid}), and a row's position is `rowid >> RECALL_CHUNK_BITS`
 * ({@link recallPositionSql}). Positions must be below 2^49 (SQLite and PostgreSQL number events
 * 1, 2, …; KurrentDB's are byte offsets of its log: 512 TiB).
 *
 * Chunks overlap by {@link RECALL_CHUNK_OVERLAP} code units, more than the longest query
 * (1,000 characters), so every phrase a query can hold lies whole in at least one chunk; a chunk
 * ends after an ASCII space or punctuation mark when one is near (a word is not cut), otherwise
 * between two grapheme clusters (an emoji, a flag or a letter with its marks is not cut).
 */

/**
 * Bits of `session_log.recall_rows`: set on an event held in more than one row of the word index
 * ({@link RECALL_SEVERAL_WORD_ROWS}) or of the trigram index ({@link RECALL_SEVERAL_TRIGRAM_ROWS});
 * NULL on the others (nearly every event). Recall finds the words of a query spread over several
 * rows of such an event by looking at these events only (`recall-cross-chunk`).
 */
export const RECALL_SEVERAL_WORD_ROWS = 1;
/** See {@link RECALL_SEVERAL_WORD_ROWS}. */
export const RECALL_SEVERAL_TRIGRAM_ROWS = 2;

/** Bits of a row id holding the chunk number (see {@link recallRowid}). */
export const RECALL_CHUNK_BITS = 14n;

/** Most chunks one event has in one index: the last holds the rest of a longer document (268 M code units in the trigram index, 4 G in the word index). */
export const RECALL_CHUNKS_PER_EVENT = 1 << Number(RECALL_CHUNK_BITS);

/** Code units two consecutive chunks share (at least; at most half as much again): more than a query's 1,000 characters. */
export const RECALL_CHUNK_OVERLAP = 1024;

/** Largest global position a recall row id can encode (2^49 - 1). */
export const MAX_RECALL_POSITION = (1n << (63n - RECALL_CHUNK_BITS)) - 1n;

/**
 * Row id of chunk `chunk` (0-based) of the event at `position`.
 * @throws RangeError when `position` is not 1..{@link MAX_RECALL_POSITION} or `chunk` not 0..{@link RECALL_CHUNKS_PER_EVENT}-1.
 */
export function recallRowid(position: bigint, chunk: number): bigint {
  if (position < 1n || position > MAX_RECALL_POSITION) throw new RangeError(`recall can index positions 1 to ${MAX_RECALL_POSITION}, got ${position}`);
  if (!Number.isInteger(chunk) || chunk < 0 || chunk >= RECALL_CHUNKS_PER_EVENT)
    throw new RangeError(`chunk must be 0 to ${RECALL_CHUNKS_PER_EVENT - 1}, got ${chunk}`);
  return (position << RECALL_CHUNK_BITS) + BigInt(chunk);
}

/** The first row id of `position` (its chunk 0); for a position bound, not checked (0 gives 0). */
export function firstRecallRowid(position: bigint): bigint {
  return position << RECALL_CHUNK_BITS;
}

/** The last row id `position` may have (its chunk {@link RECALL_CHUNKS_PER_EVENT} - 1); for a position bound, not checked. */
export function lastRecallRowid(position: bigint): bigint {
  return ((position + 1n) << RECALL_CHUNK_BITS) - 1n;
}

/** SQL of the global position of a recall row (`rowid` an expression of its row id, e.g. `recall_fts_1.rowid`). */
export function recallPositionSql(rowid: string): string {
  return `(${rowid} >> ${RECALL_CHUNK_BITS})`;
}

/** An ASCII space or punctuation mark (a separator of the word index's tokenizer): a chunk may end after one. */
const SEPARATOR = /[\s!-/:-@[-`{-~]/;
/** Combining marks and skin tones (see `continuesCluster`). */
const MARK_OR_SKIN_TONE = /^[\p{M}\p{Emoji_Modifier}]/u;
const REGIONAL_INDICATOR = /^\p{Regional_Indicator}/u;

/**
 * The chunks of `body` (a recall document), each at most `size` UTF-16 code units (plus at most
 * one code unit, so a surrogate pair is not cut), consecutive ones overlapping by at least
 * `overlap` code units: `[body]` when it fits in one. Linear in `body`'s length.
 * @throws RangeError when `size` is less than four times `overlap` (too little progress from one chunk to the next).
 */
export function recallChunks(body: string, size: number, overlap = RECALL_CHUNK_OVERLAP): string[] {
  if (!(size >= 4 * overlap)) throw new RangeError(`chunk size ${size} must be at least four times the overlap ${overlap}`);
  const chunks: string[] = [];
  let start = 0;
  while (body.length - start > size && chunks.length < RECALL_CHUNKS_PER_EVENT - 1) {
    const end = cutAt(body, start + size, start + size - overlap / 2);
    chunks.push(body.slice(start, end));
    start = cutAt(body, end - overlap, end - overlap - overlap / 2);
  }
  chunks.push(body.slice(start));
  return chunks;
}

/**
 * Where to cut `text` at or before `at` (a UTF-16 index), not before `floor`: after the last
 * separator in (`floor`, `at`] when there is one, else at `at` moved back (at most 32 code units)
 * off a point inside a grapheme cluster.
 */
function cutAt(text: string, at: number, floor: number): number {
  for (let i = at; i > floor; i--) if (SEPARATOR.test(text[i - 1])) return i;
  let cut = at;
  for (let steps = 0; steps < 32 && cut > floor && insideCluster(text, cut); steps++) cut--;
  if (!insideCluster(text, cut)) return cut;
  // A cluster longer than that (a long run of flags, a letter with many marks): cut it, not a surrogate pair.
  return isLowSurrogate(text.charCodeAt(at)) ? at + 1 : at;
}

/** Whether cutting `text` before index `i` would split a grapheme cluster (or a surrogate pair). */
function insideCluster(text: string, i: number): boolean {
  if (i <= 0 || i >= text.length) return false;
  if (isLowSurrogate(text.charCodeAt(i))) return true;
  const next = text.slice(i, i + 2);
  if (continuesCluster(next) || text[i - 1] === '\u200d') return true;
  // Regional indicators pair from the start of their run: never cut inside a run.
  return REGIONAL_INDICATOR.test(next) && REGIONAL_INDICATOR.test(text.slice(Math.max(0, i - 2), i));
}

/** Whether the code point `text` starts with continues the cluster before it: a mark, a skin tone, ZWNJ/ZWJ, a variation selector, a tag character or the keycap. */
function continuesCluster(text: string): boolean {
  const point = text.codePointAt(0) ?? 0;
  return (
    MARK_OR_SKIN_TONE.test(text) ||
    point === 0x200c ||
    point === 0x200d ||
    (point >= 0xfe00 && point <= 0xfe0f) ||
    point === 0x20e3 ||
    (point >= 0xe0020 && point <= 0xe007f)
  );
}

function isLowSurrogate(unit: number): boolean {
  return unit >= 0xdc00 && unit <= 0xdfff;
}
