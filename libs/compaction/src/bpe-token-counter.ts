/**
 * Token counting for the tiktoken encodings whose cost grows near-linearly with the text,
 * whatever the text (issue 17, item 1), with counts identical to the reference tokenizer.
 *
 * The reference algorithm (tiktoken, js-tiktoken, gpt-tokenizer) splits a text into pre-tokens
 * with the encoding's regular expression, then merges the bytes of each pre-token pair by pair,
 * always the lowest-ranked adjacent pair first (leftmost on ties). Each merge scans and splices
 * the whole pre-token, so a pre-token of n bytes costs O(n²): a run of 100,000 identical letters,
 * emoji, spaces or CJK characters is one pre-token and took seconds to minutes.
 *
 * This counter keeps the reference's pre-tokenizer (its white space made Unicode's, see
 * {@link withUnicodeWhiteSpace}) and its merge for ordinary pre-tokens (gpt-tokenizer's own code,
 * without its merge cache: a bounded table of short pre-tokens' counts, {@link PieceCountTable},
 * stands in front of it), and merges pre-tokens longer than {@link LONG_PIECE_LENGTH} with a
 * binary heap over a linked list of parts: the same merges in the same order (lowest rank first,
 * leftmost on ties), so the same count, in O(n log n). The work is also offered in steps
 * ({@link BpeTokenCounter.countInSteps}) so a caller can interleave other work on one thread.
 *
 * It reads members of gpt-tokenizer's encoder that the package does not export
 * (`tokenSplitRegex`, `bytePairMerge`, `getBpeRankFromBytes`, `bytePairRankDecoder`); the dependency is pinned and the
 * members are checked at construction, and the estimator tests compare counts with the WASM
 * tiktoken.
 */

/** The members of gpt-tokenizer 4.0.0's `BytePairEncodingCore` this counter uses. */
interface BpeCore {
  tokenSplitRegex: RegExp;
  getBpeRankFromString(piece: string): number | undefined;
  /** The reference merge of one pre-token's UTF-8 bytes into ranks, without gpt-tokenizer's merge cache (see {@link BpeTokenCounter}). */
  bytePairMerge(piece: Uint8Array): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
  /** Each rank's token: its text, or its bytes when they are not UTF-8 text (gpt-tokenizer stores `EF BB BF…` tokens as bytes). */
  bytePairRankDecoder: ReadonlyArray<string | ArrayLike<number>>;
}

/** Pre-tokens at most this long (UTF-16 code units) go through gpt-tokenizer's own merge. */
export const LONG_PIECE_LENGTH = 64;

/** Multiplier of the left rank in {@link BpeTokenCounter}'s pair memo keys (above every rank of both encodings). */
const PAIR_KEY = 1 << 20;

/** Most pairs remembered before the memo is cleared (bounds its memory at a few tens of MiB). */
const MAX_REMEMBERED_PAIRS = 500_000;

/**
 * Pre-tokens at most this long (UTF-16 code units) have their counts remembered ({@link BpeTokenCounter}'s piece table).
 * Below V8's shortest sliced string (13), so a remembered key is its own copy and never keeps the text it was cut from alive.
 */
export const REMEMBERED_PIECE_LENGTH = 12;

/** Most pre-token counts remembered before that table is cleared (a few hundred KiB: keys of at most {@link REMEMBERED_PIECE_LENGTH} code units). */
export const MAX_REMEMBERED_PIECES = 8192;

/** Units of work (pre-tokens, merges) between two steps of {@link BpeTokenCounter.countInSteps}. */
const WORK_PER_STEP = 1024;

const encoder = new TextEncoder();

/**
 * U+FEFF. gpt-tokenizer keys its string table by each token's bytes decoded with a `TextDecoder`,
 * which drops a leading byte order mark: the token `EF BB BF` (and every token starting with
 * those bytes) is missed by its string lookup and its merge, so `"\uFEFF"` counted 2 tokens
 * instead of 1. Pre-tokens holding it are merged by {@link BpeTokenCounter}'s own byte merge,
 * which reads ranks by bytes.
 */
const BYTE_ORDER_MARK = '\uFEFF';

/** Whether `bytes` start with U+FEFF in UTF-8 (`EF BB BF`). */
function startsWithByteOrderMark(bytes: ArrayLike<number>): boolean {
  return bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf;
}

/** One character per byte (code units 0–255): a map key for a byte sequence. */
function byteKey(bytes: ArrayLike<number>): string {
  let key = '';
  for (let i = 0; i < bytes.length; i++) key += String.fromCharCode(bytes[i]);
  return key;
}

/** The index after `index` in `text` for a unicode expression: past a whole surrogate pair (as `matchAll` advances past an empty match). */
function advancedIndex(text: string, index: number): number {
  if (index + 1 >= text.length) return index + 1;
  const first = text.charCodeAt(index);
  if (first < 0xd800 || first > 0xdbff) return index + 1;
  const second = text.charCodeAt(index + 1);
  return second >= 0xdc00 && second <= 0xdfff ? index + 2 : index + 1;
}

/**
 * Unicode's `White_Space` characters (Unicode 15), as ranges for a character class: what `\s` means
 * in tiktoken's expressions, which run in Rust's regex engine. JavaScript's `\s` differs in two
 * characters: it also holds U+FEFF (a format character, not white space) and lacks U+0085 (NEL).
 * Written out rather than as `\p{White_Space}`, which V8 matches about a third slower.
 */
const WHITE_SPACE_RANGES = '\\t-\\r \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';

/**
 * `source` (a pre-token expression of gpt-tokenizer) with every `\s` and `\S` made Unicode's
 * white space ({@link WHITE_SPACE_RANGES}), as in the reference: gpt-tokenizer splits texts holding
 * U+0085 or U+FEFF elsewhere than tiktoken (`"x \u0085y"` × 50: 153 tokens against 203). Escapes
 * other than these are kept as they are. Throws on `\S` inside a character class (no encoding has one).
 */
export function withUnicodeWhiteSpace(source: string): string {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const escaped = source[i + 1];
      i++;
      if (escaped === 's') out += inClass ? WHITE_SPACE_RANGES : `[${WHITE_SPACE_RANGES}]`;
      else if (escaped === 'S') {
        if (inClass) throw new Error('gpt-tokenizer changed its encoder: \\S inside a character class');
        out += `[^${WHITE_SPACE_RANGES}]`;
      } else out += c + escaped;
      continue;
    }
    if (c === '[' && !inClass) inClass = true;
    else if (c === ']' && inClass) inClass = false;
    out += c;
  }
  return out;
}

/** Reads gpt-tokenizer's encoder out of one of its encoding modules; throws if its shape changed. */
function coreOf(encodingApi: unknown): BpeCore {
  const core = (encodingApi as { bytePairEncodingCoreProcessor?: Partial<BpeCore> }).bytePairEncodingCoreProcessor;
  if (
    !core ||
    !(core.tokenSplitRegex instanceof RegExp) ||
    typeof core.getBpeRankFromString !== 'function' ||
    typeof core.bytePairMerge !== 'function' ||
    typeof core.getBpeRankFromBytes !== 'function' ||
    !Array.isArray(core.bytePairRankDecoder)
  ) {
    throw new Error(
      'gpt-tokenizer changed its encoder: BpeTokenCounter needs tokenSplitRegex, getBpeRankFromString, bytePairMerge, getBpeRankFromBytes and bytePairRankDecoder',
    );
  }
  return core as BpeCore;
}

/**
 * A binary min-heap of numbers in a growable Float64Array. Keys encode (rank, byte offset) as
 * `rank * stride + offset`, which orders by rank, then leftmost.
 */
class MinHeap {
  private keys: Float64Array;
  size = 0;

  /** `capacity`: expected most entries (grows past it by doubling; sized up front, no copy on the way). */
  constructor(capacity: number) {
    this.keys = new Float64Array(Math.max(64, capacity));
  }

  push(key: number): void {
    if (this.size === this.keys.length) {
      const grown = new Float64Array(this.keys.length * 2);
      grown.set(this.keys);
      this.keys = grown;
    }
    const keys = this.keys;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (keys[parent] <= key) break;
      keys[i] = keys[parent];
      i = parent;
    }
    keys[i] = key;
  }

  pop(): number {
    const keys = this.keys;
    const top = keys[0];
    const last = keys[--this.size];
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= this.size) break;
      const right = left + 1;
      const child = right < this.size && keys[right] < keys[left] ? right : left;
      if (keys[child] >= last) break;
      keys[i] = keys[child];
      i = child;
    }
    keys[i] = last;
    return top;
  }
}

/** Bits of one encoding's count in a {@link PieceCountTable} entry; all ones means "not counted yet". */
const SLOT_BITS = 16;
const SLOT_MASK = (1 << SLOT_BITS) - 1;

/**
 * Token counts of recently seen short pre-tokens (at most {@link REMEMBERED_PIECE_LENGTH} code
 * units) under up to two encodings, in one table: at most {@link MAX_REMEMBERED_PIECES} pre-tokens,
 * cleared when full. A small table that stays in the CPU's caches, looked up before an encoding's
 * table of 100k–200k strings, which does not. Two counters of the same texts (an event's cost
 * under `cl100k_base`, then under `o200k_base`) share it: their pre-tokens are mostly the same
 * strings, so the second finds the entries the first just touched, and one table holds them
 * once. In the append path, where other work evicts the table from the caches between events,
 * this and {@link BpeTokenCounter.count}'s plain loop made an event's costs about a third cheaper
 * (median 42–48 µs → 24–32 under figure 1's load on a busy 2-core machine).
 * Each entry packs one count per slot (slot 0 in the low {@link SLOT_BITS} bits): a count of a
 * pre-token this short is at most 36 (its UTF-8 bytes).
 *
 * Bounded in entries (its capacity) and so in bytes (each key at most {@link REMEMBERED_PIECE_LENGTH}
 * code units, its own copy), whatever was counted before. Eviction is O(1): the table is cleared
 * when full (V8 drops the whole backing store), never one entry at a time. gpt-tokenizer's own merge
 * cache, which the counter no longer fills, evicted its oldest of 100,000 entries per new pre-token
 * with `keys().next()` after `delete`s: V8's Map leaves a hole per deleted entry and that iterator
 * walks over every hole, so each eviction cost more until the next rehash and a text's cost grew with
 * the distinct pre-tokens counted before it (ncsqliteops F3: 6,000,000 characters of distinct words
 * 5× the CPU per character of 1,000,000; four successive 1,000,000-character texts 0.25 → 4.3 s), and
 * its keys of 13 or more code units, slices of the counted text, kept those texts alive.
 */
export class PieceCountTable {
  private readonly entries = new Map<string, number>();

  /** `capacity`: most entries (≥ 1) before the table is cleared; default {@link MAX_REMEMBERED_PIECES}. */
  constructor(private readonly capacity = MAX_REMEMBERED_PIECES) {}

  /** Pre-tokens remembered now (at most the capacity). */
  get size(): number {
    return this.entries.size;
  }

  /** The count of `piece` in `slot` (0 or 1), or -1 when it is not remembered. */
  get(piece: string, slot: 0 | 1): number {
    const entry = this.entries.get(piece);
    if (entry === undefined) return -1;
    const count = slot === 0 ? entry & SLOT_MASK : entry >>> SLOT_BITS;
    return count === SLOT_MASK ? -1 : count;
  }

  /** Remembers `count` (0 ≤ count < 65,535) as the count of `piece` in `slot`, keeping the other slot's. */
  set(piece: string, slot: 0 | 1, count: number): void {
    const entry = this.entries.get(piece);
    if (entry === undefined && this.entries.size >= this.capacity) this.entries.clear();
    const other = entry ?? 0xffffffff;
    this.entries.set(piece, slot === 0 ? ((other & ~SLOT_MASK) | count) >>> 0 : ((count << SLOT_BITS) | (other & SLOT_MASK)) >>> 0);
  }
}

/**
 * Counts tokens of one tiktoken encoding (gpt-tokenizer's `cl100k_base` or `o200k_base` module)
 * exactly as the reference does, special-token text counted as ordinary text.
 */
export class BpeTokenCounter {
  private readonly core: BpeCore;
  /** Rank of the token two adjacent tokens merge into, by `left * PAIR_KEY + right`; -1 when they do not merge. */
  private readonly mergedRanks = new Map<number, number>();

  /** Rank of each single byte (every byte is a token). */
  private readonly byteRanks = new Int32Array(256);
  /** Counts of recently seen short pre-tokens, in this counter's slot of the table (see {@link PieceCountTable}). */
  private readonly pieceCounts: PieceCountTable;
  private readonly pieceSlot: 0 | 1;
  /**
   * This counter's own copy of the encoding's pre-token expression (flags `gu`), for {@link count}
   * and {@link countUpTo} alone: each runs to its end without yielding (and `match` and the first
   * `exec` start at index 0), so one `lastIndex` serves every call, and a
   * suspended {@link countInSteps} (which splits with `matchAll`, on a copy of its own) never
   * shares it. Not the encoder's object: `matchAll` starts at that one's `lastIndex`.
   */
  private readonly splitter: RegExp;
  /** Ranks of the tokens whose bytes start with a UTF-8 byte order mark, by {@link byteKey} (8 in cl100k_base, 9 in o200k_base). */
  private readonly byteOrderMarkRanks = new Map<string, number>();
  /** The same expression for {@link countInSteps}'s `matchAll` (which copies it at its `lastIndex`, always 0 here: it is never run itself). */
  private readonly stepSplitter: RegExp;
  /**
   * At least the UTF-8 bytes of the encoding's longest token (a text token's UTF-16 length times 3,
   * a byte token's length; 384 for both encodings, whose longest token has 128 bytes): every token
   * of a pre-token covers at most this many of its bytes, and it has at least as many bytes as
   * UTF-16 code units, so a pre-token of n code units has at least ⌈n / this⌉ tokens ({@link countUpTo}).
   */
  private readonly longestTokenBytes: number;

  /**
   * `encodingApi`: the default export of `gpt-tokenizer/encoding/<name>`. Throws if it lacks the members used.
   * `pieces`: the table of short pre-tokens' counts and this counter's slot in it, when it shares
   * one with a counter of another encoding (each slot belongs to one encoding); default a table of its own.
   */
  constructor(encodingApi: unknown, pieces: { table: PieceCountTable; slot: 0 | 1 } = { table: new PieceCountTable(), slot: 0 }) {
    this.core = coreOf(encodingApi);
    this.pieceCounts = pieces.table;
    this.pieceSlot = pieces.slot;
    const split = this.core.tokenSplitRegex;
    if (!split.flags.includes('u')) throw new Error('gpt-tokenizer changed its encoder: its pre-token expression is not a unicode expression');
    this.splitter = new RegExp(withUnicodeWhiteSpace(split.source), split.flags.includes('g') ? split.flags : `${split.flags}g`);
    this.stepSplitter = new RegExp(this.splitter);
    let longest = 1;
    this.core.bytePairRankDecoder.forEach((token, rank) => {
      longest = Math.max(longest, typeof token === 'string' ? 3 * token.length : token.length);
      if (typeof token === 'string' ? token.charCodeAt(0) === 0xfeff : startsWithByteOrderMark(token)) {
        this.byteOrderMarkRanks.set(byteKey(typeof token === 'string' ? encoder.encode(token) : token), rank);
      }
    });
    this.longestTokenBytes = longest;
    for (let b = 0; b < 256; b++) {
      const rank = this.core.getBpeRankFromBytes(Uint8Array.of(b));
      if (rank === undefined) throw new Error(`gpt-tokenizer's encoding has no token for byte ${b}`);
      this.byteRanks[b] = rank;
    }
  }

  /**
   * Token count of `text` (≥ 0). O(n log n) in the text's UTF-8 length. The same count as
   * {@link countInSteps}, without its steps: a plain loop over the pre-tokens (a generator's
   * resumptions and `matchAll`'s copy of the expression cost about as much as the counting of a
   * short text itself), split by one `String.prototype.match` (the pre-tokens' strings only, where
   * `exec` makes a match object per pre-token: in the append path a sixth fewer instructions per
   * event with the byte order mark looked for once per text, and less garbage). An empty match,
   * which the encodings' expressions never make, is skipped as `matchAll` skips it.
   */
  count(text: string): number {
    if (text.length === 0) return 0;
    const pieces = text.match(this.splitter);
    if (pieces === null) return 0;
    const mayHoldMark = text.includes(BYTE_ORDER_MARK);
    let total = 0;
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i];
      if (piece.length === 0) continue;
      const count = this.shortPieceCount(piece, mayHoldMark);
      total += count >= 0 ? count : this.longPieceCount(piece);
    }
    return total;
  }

  /**
   * {@link count} of `text` when that is at most `limit` (tokens), else a number over `limit` (at
   * most the count): the count stops at the first pre-token that takes the total over `limit`, and a
   * long pre-token is not merged when the fewest tokens it can have (⌈its code units / the
   * longest token's bytes⌉) already take it over. So asking whether a large text fits a small budget
   * costs the pre-tokens up to the budget, not the whole text (a 200,000-letter run: one comparison,
   * not ~100 ms of merges). `limit` Infinity: the count itself.
   */
  countUpTo(text: string, limit: number): number {
    if (text.length === 0) return 0;
    const mayHoldMark = text.includes(BYTE_ORDER_MARK);
    const splitter = this.splitter;
    splitter.lastIndex = 0;
    let total = 0;
    for (let match = splitter.exec(text); match !== null; match = splitter.exec(text)) {
      const piece = match[0];
      if (piece.length === 0) {
        // As matchAll does past an empty match (the encodings' expressions have none).
        splitter.lastIndex = advancedIndex(text, splitter.lastIndex);
        continue;
      }
      let count = this.shortPieceCount(piece, mayHoldMark);
      if (count < 0) {
        const fewest = Math.ceil(piece.length / this.longestTokenBytes);
        if (total + fewest > limit) return total + fewest;
        count = this.longPieceCount(piece);
      }
      total += count;
      if (total > limit) return total;
    }
    return total;
  }

  /**
   * The same count as {@link count}, computed in steps: the generator yields after about
   * 1,024 units of work (pre-tokens or merges) and returns the count.
   */
  *countInSteps(text: string): Generator<void, number, void> {
    if (text.length === 0) return 0;
    let total = 0;
    let work = 0;
    for (const [piece] of text.matchAll(this.stepSplitter)) {
      if (++work >= WORK_PER_STEP) {
        work = 0;
        yield;
      }
      const count = this.shortPieceCount(piece);
      total += count >= 0 ? count : yield* this.mergeLongPiece(encoder.encode(piece));
    }
    return total;
  }

  /**
   * Token count of one pre-token (non-empty) when it is a token of the encoding or at most
   * {@link LONG_PIECE_LENGTH} code units long (gpt-tokenizer's uncached merge; counts of pre-tokens up to
   * {@link REMEMBERED_PIECE_LENGTH} remembered); -1 for a longer one or one holding U+FEFF
   * (see {@link BYTE_ORDER_MARK}), which {@link mergeLongPiece} counts. `mayHoldMark`: false when
   * the text the pre-token was cut from holds no U+FEFF (then the pre-token is not searched for it).
   */
  private shortPieceCount(piece: string, mayHoldMark = true): number {
    const core = this.core;
    if (mayHoldMark && piece.includes(BYTE_ORDER_MARK)) return -1;
    if (piece.length <= REMEMBERED_PIECE_LENGTH) {
      let count = this.pieceCounts.get(piece, this.pieceSlot);
      if (count < 0) {
        count = core.getBpeRankFromString(piece) !== undefined ? 1 : core.bytePairMerge(encoder.encode(piece)).length;
        this.pieceCounts.set(piece, this.pieceSlot, count);
      }
      return count;
    }
    if (core.getBpeRankFromString(piece) !== undefined) return 1;
    if (piece.length <= LONG_PIECE_LENGTH) return core.bytePairMerge(encoder.encode(piece)).length;
    return -1;
  }

  /** {@link mergeLongPiece} of `piece` run to its end: its token count. */
  private longPieceCount(piece: string): number {
    const steps = this.mergeLongPiece(encoder.encode(piece));
    let step = steps.next();
    while (!step.done) step = steps.next();
    return step.value;
  }

  /**
   * The rank of the token made of `bytes`, or -1 when there is none. gpt-tokenizer's own lookup,
   * except for bytes starting with a UTF-8 byte order mark, which it decodes without the mark
   * (see {@link BYTE_ORDER_MARK}): those are looked up in {@link byteOrderMarkRanks}.
   */
  private rankOfBytes(bytes: Uint8Array): number {
    if (startsWithByteOrderMark(bytes)) return this.byteOrderMarkRanks.get(byteKey(bytes)) ?? -1;
    return this.core.getBpeRankFromBytes(bytes) ?? -1;
  }

  /**
   * Byte-pair merge of one pre-token with a heap: parts are a doubly linked list over byte
   * offsets; the heap holds (rank of the pair starting at a part, offset); stale entries are
   * skipped when popped. Returns the number of parts left, which is the token count.
   */
  private *mergeLongPiece(bytes: Uint8Array): Generator<void, number, void> {
    const n = bytes.length;
    const stride = n + 1;
    const next = new Int32Array(n + 1);
    const prev = new Int32Array(n + 1);
    const rankAt = new Float64Array(n + 1);
    const alive = new Uint8Array(n + 1);
    for (let i = 0; i <= n; i++) {
      next[i] = i + 1;
      prev[i] = i - 1;
      alive[i] = 1;
    }
    // Every part is a token; its rank is kept at its start offset.
    const partRank = new Int32Array(n + 1);
    for (let i = 0; i < n; i++) partRank[i] = this.byteRanks[bytes[i]];
    // n initial pairs plus at most two per merge (n - 1 merges at most).
    const heap = new MinHeap(3 * n);
    const rankOfPairAt = (start: number): number => {
      const second = next[start];
      if (second >= n) return Infinity;
      const key = partRank[start] * PAIR_KEY + partRank[second];
      let merged = this.mergedRanks.get(key);
      if (merged === undefined) {
        merged = this.rankOfBytes(bytes.subarray(start, next[second]));
        if (this.mergedRanks.size >= MAX_REMEMBERED_PAIRS) this.mergedRanks.clear();
        this.mergedRanks.set(key, merged);
      }
      return merged < 0 ? Infinity : merged;
    };
    const schedule = (start: number): void => {
      const rank = rankOfPairAt(start);
      rankAt[start] = rank;
      if (rank !== Infinity) heap.push(rank * stride + start);
    };
    let work = 0;
    for (let i = 0; i < n; i++) {
      schedule(i);
      if (++work >= WORK_PER_STEP) {
        work = 0;
        yield;
      }
    }
    let parts = n;
    while (heap.size > 0) {
      if (++work >= WORK_PER_STEP) {
        work = 0;
        yield;
      }
      const key = heap.pop();
      const start = key % stride;
      const rank = (key - start) / stride;
      if (!alive[start] || rankAt[start] !== rank) continue;
      // Merge the part at `start` with the next one.
      const second = next[start];
      alive[second] = 0;
      next[start] = next[second];
      prev[next[second]] = start;
      parts--;
      partRank[start] = rank;
      schedule(start);
      if (start > 0) schedule(prev[start]);
    }
    return parts;
  }
}
