/**
 * Figure 10: cost of token counting on the worst texts we could build (issue 17, item 1), at
 * 10 KB, 100 KB and MAX_TEXT_LENGTH (1,000,000 UTF-16 code units): runs of one character, of one
 * emoji, of spaces, long digit strings, base64 blobs, a word repeated without spaces and with
 * them, and pseudo-random ideographs (one pre-token whose merges never repeat). Each text is
 * counted as an append counts it (cl100k_base and o200k_base, with the estimators' counter, a fresh
 * one per measurement so no pair is remembered from an earlier text); the figure
 * is the time per 1,000 code units, and growth = that cost at the largest size over the cost at
 * 10 KB (1.0 = linear; the reference tokenizers are quadratic here: ×100 from 10 KB to 1 MB).
 * Baseline: gpt-tokenizer's own `countTokens` (the reference algorithm) at 10 KB, where it still
 * finishes.
 */
import { BpeTokenCounter } from '../../libs/compaction/src/bpe-token-counter';
import { nowMs, round } from '../lib/stats';
import { progress, type FigureResult, type FigureRow } from '../lib/report';

/** Options of {@link runAdversarialTokens}. */
export interface AdversarialTokenOptions {
  /** Text lengths in UTF-16 code units, smallest first. */
  sizes: number[];
}

/** A deterministic pseudo-random sequence (LCG), so every run measures the same texts. */
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

/** The adversarial texts, by name: each returns exactly `n` UTF-16 code units. */
export const ADVERSARIAL_TEXTS: Record<string, (n: number) => string> = {
  'one letter': (n) => 'a'.repeat(n),
  'one emoji': (n) => '😀'.repeat(n / 2),
  spaces: (n) => ' '.repeat(n - 1) + 'x',
  digits: (n) => pseudoRandom(n, (x) => String(x % 10)),
  base64: (n) => pseudoRandom(n, (x) => BASE64[x % 64]),
  'word, no spaces': (n) => 'token'.repeat(n / 5),
  'word with spaces': (n) => 'token '.repeat(n / 6).padEnd(n, 'x'),
  'random ideographs': (n) => pseudoRandom(n, (x) => String.fromCharCode(0x4e00 + (x % 20000))),
};

function timeCount(count: (text: string) => number, text: string): number {
  const t0 = nowMs();
  count(text);
  return nowMs() - t0;
}

/** Runs figure 10. */
export async function runAdversarialTokens(options: AdversarialTokenOptions): Promise<FigureResult> {
  const reference = ['cl100k_base', 'o200k_base'].map(
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (e) => require(`gpt-tokenizer/cjs/encoding/${e}`) as { default: unknown; countTokens: (t: string, o: object) => number; clearMergeCache: () => void },
  );
  const freshCounters = () => {
    for (const r of reference) r.clearMergeCache();
    return reference.map((r) => new BpeTokenCounter(r.default));
  };
  // JIT warm-up on an unrelated text, untimed.
  for (const c of freshCounters()) c.count(pseudoRandom(20_000, (x) => String.fromCharCode(0x3041 + (x % 80))) + 'warm-up '.repeat(2000));
  const plain = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  const rows: FigureRow[] = [];
  const details: Record<string, unknown> = {};
  const smallest = options.sizes[0];
  const largest = options.sizes[options.sizes.length - 1];
  let worstGrowth = 0;
  for (const [name, make] of Object.entries(ADVERSARIAL_TEXTS)) {
    const perKilo: Record<number, number> = {};
    for (const size of options.sizes) {
      const text = make(size);
      const ms = freshCounters().reduce((sum, c) => sum + timeCount((t) => c.count(t), text), 0);
      perKilo[size] = (ms / size) * 1000;
      progress(`${name} at ${size}: ${ms.toFixed(0)} ms (both encodings)`);
    }
    const small = make(smallest);
    for (const r of reference) r.clearMergeCache();
    const referenceMs = reference.reduce((sum, r) => sum + timeCount((t) => r.countTokens(t, plain), small), 0);
    const growth = perKilo[largest] / perKilo[smallest];
    worstGrowth = Math.max(worstGrowth, growth);
    details[name] = { msPer1000Units: perKilo, referenceMsAtSmallest: referenceMs };
    rows.push({
      figure: 10,
      metric: `${name}: ms per 1,000 chars at ${options.sizes.map((s) => s.toLocaleString('en-US')).join(' / ')}`,
      value: options.sizes.map((s) => round(perKilo[s], 2)).join(' / '),
      baseline: round((referenceMs / smallest) * 1000, 2),
      baselineName: `gpt-tokenizer countTokens at ${smallest.toLocaleString('en-US')}`,
      ratio: round(growth, 2),
      target: 'growth ≤ 3× (near-linear)',
      met: growth <= 3,
    });
  }
  const notes = [
    'both encodings counted per text, as an append does; ratio = cost per char at the largest size / at the smallest (1.0 = linear)',
    `worst growth ${round(worstGrowth, 2)}× from ${smallest.toLocaleString('en-US')} to ${largest.toLocaleString('en-US')} chars; counts equal the reference tokenizer's (see the estimator tests)`,
  ];
  return { figure: 10, title: 'adversarial token counting', rows, details, notes };
}
