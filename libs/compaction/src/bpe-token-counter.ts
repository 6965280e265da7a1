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
 * This counter keeps the reference's pre-tokenizer and its merge cache for ordinary pre-tokens
 * (gpt-tokenizer's own code), and merges pre-tokens longer than {@link LONG_PIECE_LENGTH} with a
 * binary heap over a linked list of parts: the same merges in the same order (lowest rank first,
 * leftmost on ties), so the same count, in O(n log n). The work is also offered in steps
 * ({@link BpeTokenCounter.countInSteps}) so a caller can interleave other work on one thread.
 *
 * It reads three members of gpt-tokenizer's encoder that the package does not export
 * (`tokenSplitRegex`, `bytePairEncode`, `getBpeRankFromBytes`); the dependency is pinned and the
 * members are checked at construction, and the estimator tests compare counts with the WASM
 * tiktoken.
 */

/** The members of gpt-tokenizer 4.0.0's `BytePairEncodingCore` this counter uses. */
interface BpeCore {
  tokenSplitRegex: RegExp;
  getBpeRankFromString(piece: string): number | undefined;
  bytePairEncode(piece: string): number[];
  getBpeRankFromBytes(bytes: Uint8Array): number | undefined;
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
const REMEMBERED_PIECE_LENGTH = 12;

/** Most pre-token counts remembered before that table is cleared (a few hundred KiB). */
const MAX_REMEMBERED_PIECES = 8192;

/** Units of work (pre-tokens, merges) between two steps of {@link BpeTokenCounter.countInSteps}. */
const WORK_PER_STEP = 1024;

const encoder = new TextEncoder();

/** Reads gpt-tokenizer's encoder out of one of its encoding modules; throws if its shape changed. */
function coreOf(encodingApi: unknown): BpeCore {
  const core = (encodingApi as { bytePairEncodingCoreProcessor?: Partial<BpeCore> }).bytePairEncodingCoreProcessor;
  if (
    !core ||
    !(core.tokenSplitRegex instanceof RegExp) ||
    typeof core.getBpeRankFromString !== 'function' ||
    typeof core.bytePairEncode !== 'function' ||
    typeof core.getBpeRankFromBytes !== 'function'
  ) {
    throw new Error('gpt-tokenizer changed its encoder: BpeTokenCounter needs tokenSplitRegex, getBpeRankFromString, bytePairEncode and getBpeRankFromBytes');
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

/**
 * Counts tokens of one tiktoken encoding (gpt-tokenizer's `cl100k_base` or `o200k_base` module)
 * exactly as the reference does, special-token text counted as ordinary text.
 */
export class BpeTokenCounter {
  private readonly core: BpeCore;
  /** Rank of the token two adjacent tokens merge into, by `left * PAIR_KEY + right`; -1 when they do not merge. */
  private readonly mergedRanks = new Map<number, number>();

  /** `encodingApi`: the default export of `gpt-tokenizer/encoding/<name>`. Throws if it lacks the members used. */
  /** Rank of each single byte (every byte is a token). */
  private readonly byteRanks = new Int32Array(256);
  /**
   * Token counts of recently seen short pre-tokens (at most {@link MAX_REMEMBERED_PIECES}, cleared when full): a small table that stays
   * in the CPU's caches, looked up before the encoding's table of 100k–200k strings, which is not.
   */
  private readonly pieceCounts = new Map<string, number>();

  constructor(encodingApi: unknown) {
    this.core = coreOf(encodingApi);
    for (let b = 0; b < 256; b++) {
      const rank = this.core.getBpeRankFromBytes(Uint8Array.of(b));
      if (rank === undefined) throw new Error(`gpt-tokenizer's encoding has no token for byte ${b}`);
      this.byteRanks[b] = rank;
    }
  }

  /** Token count of `text` (≥ 0). O(n log n) in the text's UTF-8 length. */
  count(text: string): number {
    const steps = this.countInSteps(text);
    for (;;) {
      const next = steps.next();
      if (next.done) return next.value;
    }
  }

  /**
   * The same count as {@link count}, computed in steps: the generator yields after about
   * 1,024 units of work (pre-tokens or merges) and returns the count.
   */
  *countInSteps(text: string): Generator<void, number, void> {
    if (text.length === 0) return 0;
    const core = this.core;
    let total = 0;
    let work = 0;
    for (const [piece] of text.matchAll(core.tokenSplitRegex)) {
      if (++work >= WORK_PER_STEP) {
        work = 0;
        yield;
      }
      if (piece.length <= REMEMBERED_PIECE_LENGTH) {
        let count = this.pieceCounts.get(piece);
        if (count === undefined) {
          count = core.getBpeRankFromString(piece) !== undefined ? 1 : core.bytePairEncode(piece).length;
          if (this.pieceCounts.size >= MAX_REMEMBERED_PIECES) this.pieceCounts.clear();
          this.pieceCounts.set(piece, count);
        }
        total += count;
      } else if (core.getBpeRankFromString(piece) !== undefined) total += 1;
      else if (piece.length <= LONG_PIECE_LENGTH) total += core.bytePairEncode(piece).length;
      else total += yield* this.mergeLongPiece(encoder.encode(piece));
    }
    return total;
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
        merged = this.core.getBpeRankFromBytes(bytes.subarray(start, next[second])) ?? -1;
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
