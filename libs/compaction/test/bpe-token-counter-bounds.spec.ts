/**
 * The token counter's cost does not depend on what it counted before (ncsqliteops F3): its table
 * of short pre-tokens' counts stays within its bound over many large texts, it leaves
 * gpt-tokenizer's merge cache (whose eviction cost grew with every entry evicted) untouched, it
 * keeps no counted text alive, and a bounded table gives the reference's counts. No timing: sizes
 * of caches and of the heap.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import fc from 'fast-check';
import { get_encoding, type Tiktoken as WasmTiktoken } from 'tiktoken';
import { BpeTokenCounter, MAX_REMEMBERED_PIECES, PieceCountTable } from '../src/bpe-token-counter';
import { distinctWordsFrom } from '../../../test/support/adversarial-texts';

type EncodingName = 'cl100k_base' | 'o200k_base';

/** gpt-tokenizer's module of `name` (what the estimators give the counter). */
function encodingModule(name: EncodingName): { default: unknown } {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return name === 'cl100k_base' ? require('gpt-tokenizer/encoding/cl100k_base') : require('gpt-tokenizer/encoding/o200k_base');
}

/** Entries in the merge cache of gpt-tokenizer's encoder of `name` (0 when it has none). */
function encoderMergeCacheSize(name: EncodingName): number {
  const core = (encodingModule(name).default as { bytePairEncodingCoreProcessor: { mergeCache?: Map<string, unknown> } }).bytePairEncodingCoreProcessor;
  return core.mergeCache?.size ?? 0;
}

/** Clears the merge cache of gpt-tokenizer's encoder of `name`. */
function clearEncoderMergeCache(name: EncodingName): void {
  (encodingModule(name).default as { bytePairEncodingCoreProcessor: { clearMergeCache(): void } }).bytePairEncodingCoreProcessor.clearMergeCache();
}

describe('BpeTokenCounter over many large texts', () => {
  it('given successive large texts of distinct words, then its table stays within its bound and gpt-tokenizer’s merge cache stays empty', () => {
    const table = new PieceCountTable();
    const counters = (['cl100k_base', 'o200k_base'] as const).map((name, slot) => {
      clearEncoderMergeCache(name);
      return { name, counter: new BpeTokenCounter(encodingModule(name).default, { table, slot: slot as 0 | 1 }) };
    });
    let next = 0;
    for (let k = 0; k < 6; k++) {
      // Alternately short and long words: together more distinct pre-tokens (~300,000) than any cache holds.
      const { text, next: after } = distinctWordsFrom(400_000, next, k % 2 === 1);
      next = after;
      for (const { name, counter } of counters) {
        expect(counter.count(text)).toBeGreaterThan(0);
        // Before the fix it held up to 100,000 pre-tokens, and evicting each cost more the more were evicted before.
        expect(encoderMergeCacheSize(name)).toBe(0);
        expect(table.size).toBeLessThanOrEqual(MAX_REMEMBERED_PIECES);
      }
    }
  });

  it('given successive large texts of long distinct words, when they are dropped, then the heap does not keep them', () => {
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const counter = new BpeTokenCounter(encodingModule('cl100k_base').default, { table: new PieceCountTable(), slot: 0 });
    let next = 0;
    const warm = distinctWordsFrom(100_000, next, true);
    next = warm.next;
    counter.count(warm.text);
    gc();
    const before = v8.getHeapStatistics().used_heap_size;
    for (let k = 0; k < 4; k++) {
      const { text, next: after } = distinctWordsFrom(1_000_000, next, true);
      next = after;
      counter.count(text);
    }
    gc();
    const grown = v8.getHeapStatistics().used_heap_size - before;
    // 4 MB of texts counted; a bounded table holds at most a few hundred KiB (before the fix: ~30 MiB,
    // the merge cache's entries and the texts its keys were sliced from).
    expect(grown).toBeLessThan(4 * 2 ** 20);
  }, 60_000);

  describe.each(['cl100k_base', 'o200k_base'] as const)('%s with a table of a few entries, cleared again and again', (name) => {
    let reference: WasmTiktoken;
    beforeAll(() => {
      reference = get_encoding(name);
    });
    afterAll(() => reference.free());

    it('counts as the WASM tiktoken on random texts (both encodings sharing the table)', () => {
      const table = new PieceCountTable(8);
      const counter = new BpeTokenCounter(encodingModule(name).default, { table, slot: name === 'cl100k_base' ? 0 : 1 });
      const other = new BpeTokenCounter(encodingModule(name === 'cl100k_base' ? 'o200k_base' : 'cl100k_base').default, {
        table,
        slot: name === 'cl100k_base' ? 1 : 0,
      });
      const piece = fc.oneof(
        fc.constantFrom(' the', ' a', 'Hello', ',', '.', '\n', '  ', '123', '4567', "'s", ' 漢字', ' 😀', 'é', '\t', '{"x":1}', ' internationalization'),
        fc.string({ unit: 'grapheme', maxLength: 6 }),
        fc.stringMatching(/^[a-z]{1,30}$/),
      );
      fc.assert(
        fc.property(fc.array(piece, { maxLength: 60 }), (pieces) => {
          const text = pieces.join('');
          other.count(text);
          expect(counter.count(text)).toBe(reference.encode(text, [], []).length);
          expect(table.size).toBeLessThanOrEqual(8);
        }),
        { numRuns: 300 },
      );
    });
  });
});

// `count` splits a text with one `match`, `countUpTo` with `exec` step by step and `countInSteps` with
// `matchAll`; each looks for U+FEFF in the whole text before its pre-tokens: all three must agree.
describe.each(['cl100k_base', 'o200k_base'] as const)('%s: count, countUpTo without a limit and countInSteps', (name) => {
  it('give the same count on random texts, with and without byte order marks', () => {
    const counter = new BpeTokenCounter(encodingModule(name).default);
    const piece = fc.oneof(
      fc.constantFrom(' the', 'Hello', '\ufeff', 'word\ufeff', '\ufeff ', '\u0085', ' 漢字', ' 😀', '\n\n', '  ', '123', "'s", 'a'.repeat(70)),
      fc.string({ unit: 'grapheme', maxLength: 8 }),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), (pieces) => {
        const text = pieces.join('');
        const steps = counter.countInSteps(text);
        let step = steps.next();
        while (!step.done) step = steps.next();
        const count = counter.count(text);
        expect(counter.countUpTo(text, Infinity)).toBe(count);
        expect(step.value).toBe(count);
      }),
      { numRuns: 500 },
    );
  });
});
