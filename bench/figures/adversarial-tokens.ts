/**
 * Figure 10: cost of token counting on the worst texts we could build (issue 17, item 1), at
 * 10 KB, 100 KB and MAX_TEXT_LENGTH (1,000,000 UTF-16 code units): runs of one character, of one
 * emoji, of spaces, long digit strings, base64 blobs, a word repeated without spaces and with
 * them, distinct words, and pseudo-random ideographs (one pre-token whose merges never repeat).
 * Each text is counted as an append counts it (cl100k_base and o200k_base, with the estimators'
 * counter, a fresh one per measurement so no pair is remembered from an earlier text); the figure
 * is the CPU time per 1,000 code units, and growth = that cost at the largest size over the cost at
 * 10 KB (1.0 = linear; the reference tokenizers are quadratic here: ×100 from 10 KB to 1 MB).
 * Baseline: gpt-tokenizer's own `countTokens` (the reference algorithm) at 10 KB, where it still
 * finishes.
 *
 * Then the same counters over successive large texts (ncsqliteops F3): texts of distinct words at
 * the largest size, one after another, counted by one pair of counters sharing one table as the
 * service's estimators do (nothing cleared between texts), and one text of {@link SUCCESSIVE_TEXTS}
 * times the largest size: the cost per character of the last text over the first's, and of the
 * long text over 10 KB of the same words. Before the fix the fourth 1,000,000-character text cost
 * 17× the first (gpt-tokenizer's merge cache, full after ~100,000 pre-tokens, evicted at a cost
 * that grew with the entries evicted before).
 *
 * Then what a client of the service sees: the longest event-loop stall while the costliest text at
 * the largest size is costed as an append costs it (`TokenCountingPool`: in the worker thread,
 * above `INLINE_COUNT_LIMIT`), against counting the same text inline on the event loop, both in
 * this process; and the worst inline stall a request can still cause (the costliest text at the
 * inline limit).
 */
import { BpeTokenCounter, PieceCountTable } from '../../libs/compaction/src/bpe-token-counter';
import { computeEventCosts } from '../../libs/session/src/domain/event-costs';
import { INLINE_COUNT_LIMIT, TokenCountingPool } from '../../libs/session/src/token-counting/token-counting-pool';
import { ADVERSARIAL_TEXTS, distinctWordsFrom } from '../../test/support/adversarial-texts';
import { nowMs, round } from '../lib/stats';
import { progress, type FigureResult, type FigureRow } from '../lib/report';

/** Texts of distinct words counted one after another by the same counters; the long text is this many times the largest size. */
const SUCCESSIVE_TEXTS = 8;

/** Options of {@link runAdversarialTokens}. */
export interface AdversarialTokenOptions {
  /** Text lengths in UTF-16 code units, smallest first. */
  sizes: number[];
}

/**
 * CPU time (ms, user + system, of this process) of `count(text)`: on a machine shared with other
 * work, wall time measures the scheduler as much as the counting. Nothing else runs in this
 * process meanwhile (the count is synchronous and no worker is busy).
 */
function timeCount(count: (text: string) => number, text: string): number {
  const before = process.cpuUsage();
  count(text);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

/** Longest gap (ms) between the ticks of a 1 ms interval while `work` runs: how long the event loop was held at once. */
async function longestStall(work: () => Promise<unknown>): Promise<{ stallMs: number; ms: number }> {
  let last = nowMs();
  let stallMs = 0;
  const ticker = setInterval(() => {
    const now = nowMs();
    stallMs = Math.max(stallMs, now - last);
    last = now;
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, 5));
  const t0 = nowMs();
  await work();
  const ms = nowMs() - t0;
  // One more turn, so a stall that ends with `work` is recorded.
  await new Promise((resolve) => setTimeout(resolve, 5));
  clearInterval(ticker);
  return { stallMs, ms };
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
  for (const c of freshCounters()) c.count('ぁあぃいぅうぇえぉお'.repeat(2000) + 'warm-up '.repeat(2000));
  const plain = { allowedSpecial: new Set<string>(), disallowedSpecial: new Set<string>() };
  const rows: FigureRow[] = [];
  const details: Record<string, unknown> = {};
  const smallest = options.sizes[0];
  const largest = options.sizes[options.sizes.length - 1];
  let worstGrowth = 0;
  let costliest = { name: '', msAtLargest: 0 };
  for (const [name, make] of Object.entries(ADVERSARIAL_TEXTS)) {
    const perKilo: Record<number, number> = {};
    const ms: Record<number, number> = {};
    for (const size of options.sizes) {
      const text = make(size);
      // Smaller sizes take milliseconds: the least of a few runs, so timer and scheduler noise do not pass for growth.
      const runs = size < largest ? 3 : 1;
      ms[size] = Infinity;
      for (let run = 0; run < runs; run++)
        ms[size] = Math.min(
          ms[size],
          freshCounters().reduce((sum, c) => sum + timeCount((t) => c.count(t), text), 0),
        );
      perKilo[size] = (ms[size] / size) * 1000;
      progress(`${name} at ${size}: ${ms[size].toFixed(0)} ms (both encodings)`);
    }
    if (ms[largest] > costliest.msAtLargest) costliest = { name, msAtLargest: ms[largest] };
    const small = make(smallest);
    for (const r of reference) r.clearMergeCache();
    const referenceMs = reference.reduce((sum, r) => sum + timeCount((t) => r.countTokens(t, plain), small), 0);
    const growth = perKilo[largest] / perKilo[smallest];
    worstGrowth = Math.max(worstGrowth, growth);
    details[name] = { ms, msPer1000Units: perKilo, referenceMsAtSmallest: referenceMs };
    rows.push({
      figure: 10,
      metric: `${name}: ms per 1,000 chars at ${options.sizes.map((s) => s.toLocaleString('en-US')).join(' / ')} (total ms at the largest: ${round(ms[largest], 0)})`,
      value: options.sizes.map((s) => round(perKilo[s], 2)).join(' / '),
      baseline: round((referenceMs / smallest) * 1000, 2),
      baselineName: `gpt-tokenizer countTokens at ${smallest.toLocaleString('en-US')}`,
      ratio: round(growth, 2),
      target: 'growth ≤ 3× (near-linear)',
      met: growth <= 3,
    });
  }

  // Successive large texts, one pair of counters sharing one table (as the estimators), nothing cleared between texts.
  for (const r of reference) r.clearMergeCache();
  const table = new PieceCountTable();
  const shared = reference.map((r, slot) => new BpeTokenCounter(r.default, { table, slot: slot as 0 | 1 }));
  const countBoth = (text: string) => shared.reduce((sum, c) => sum + timeCount((t) => c.count(t), text), 0);
  let next = 0;
  const successiveMs: number[] = [];
  for (let k = 0; k < SUCCESSIVE_TEXTS; k++) {
    const words = distinctWordsFrom(largest, next);
    next = words.next;
    successiveMs.push(countBoth(words.text));
  }
  progress(`${SUCCESSIVE_TEXTS} successive texts of distinct words at ${largest}: ${successiveMs.map((m) => m.toFixed(0)).join(', ')} ms`);
  const longSize = SUCCESSIVE_TEXTS * largest;
  const small10k = distinctWordsFrom(smallest, next);
  // Its words unseen, as each large text's: new counters and table for each of 3 runs (the least kept).
  let smallMs = Infinity;
  for (let run = 0; run < 3; run++) {
    const freshTable = new PieceCountTable();
    const fresh = reference.map((r, slot) => new BpeTokenCounter(r.default, { table: freshTable, slot: slot as 0 | 1 }));
    smallMs = Math.min(
      smallMs,
      fresh.reduce((sum, c) => sum + timeCount((t) => c.count(t), small10k.text), 0),
    );
  }
  const longMs = countBoth(distinctWordsFrom(longSize, small10k.next).text);
  progress(`one text of distinct words at ${longSize}: ${longMs.toFixed(0)} ms`);
  const successiveGrowth = successiveMs[successiveMs.length - 1] / successiveMs[0];
  const longGrowth = longMs / longSize / (smallMs / smallest);
  details.successive = { size: largest, ms: successiveMs, longText: { size: longSize, ms: longMs }, smallest: { size: smallest, ms: smallMs } };
  rows.push({
    figure: 10,
    metric: `distinct words, ${SUCCESSIVE_TEXTS} successive texts of ${largest.toLocaleString('en-US')} chars, same counters: ms per 1,000 chars of each (first … last)`,
    value: successiveMs.map((m) => round((m / largest) * 1000, 2)).join(' / '),
    baseline: round((successiveMs[0] / largest) * 1000, 2),
    baselineName: 'the first text',
    ratio: round(successiveGrowth, 2),
    target: 'last / first ≤ 3×',
    met: successiveGrowth <= 3,
  });
  rows.push({
    figure: 10,
    metric: `distinct words, one text of ${longSize.toLocaleString('en-US')} chars, same counters: ms per 1,000 chars (total ms: ${round(longMs, 0)})`,
    value: round((longMs / longSize) * 1000, 2),
    baseline: round((smallMs / smallest) * 1000, 2),
    baselineName: `${smallest.toLocaleString('en-US')} chars of such words, new counters`,
    ratio: round(longGrowth, 2),
    target: 'growth ≤ 3× (near-linear)',
    met: longGrowth <= 3,
  });

  // What the event loop sees while an append of the costliest text is costed.
  const event = { id: 'adversary', type: 'user' as const, text: ADVERSARIAL_TEXTS[costliest.name](largest) };
  const pool = new TokenCountingPool();
  try {
    await pool.eventCosts([event]); // starts the worker and loads its vocabularies, untimed
    const offThread = await longestStall(() => pool.eventCosts([event]));
    const inline = await longestStall(async () => computeEventCosts(event));
    progress(`${costliest.name} at ${largest}: stall ${offThread.stallMs.toFixed(0)} ms in the worker, ${inline.stallMs.toFixed(0)} ms inline`);
    details.eventLoop = { text: costliest.name, size: largest, offThread, inline };
    rows.push({
      figure: 10,
      metric: `longest event-loop stall while costing ${largest.toLocaleString('en-US')} chars of ${costliest.name} as an append does (ms; took ${round(offThread.ms, 0)} ms)`,
      value: round(offThread.stallMs, 1),
      baseline: round(inline.stallMs, 1),
      baselineName: 'the same count inline on the event loop',
      ratio: round(offThread.stallMs / inline.stallMs, 3),
      target: '< 200 ms (the /health bound of issue 17)',
      met: offThread.stallMs < 200,
    });
    const atLimit = { ...event, text: ADVERSARIAL_TEXTS[costliest.name](INLINE_COUNT_LIMIT - 6) }; // "User: " takes 6
    const limitStall = await longestStall(async () => pool.eventCosts([atLimit]));
    details.inlineLimit = { size: INLINE_COUNT_LIMIT, ...limitStall };
    rows.push({
      figure: 10,
      metric: `longest stall of a request counted inline: ${costliest.name} at INLINE_COUNT_LIMIT (${INLINE_COUNT_LIMIT.toLocaleString('en-US')} chars, ms)`,
      value: round(limitStall.stallMs, 1),
      target: '< 200 ms',
      met: limitStall.stallMs < 200,
    });
  } finally {
    await pool.close();
  }
  const notes = [
    'both encodings counted per text, as an append does, timed in CPU ms of this process (robust to other load); ratio = cost per char at the largest size / at the smallest (1.0 = linear)',
    `worst growth ${round(worstGrowth, 2)}× from ${smallest.toLocaleString('en-US')} to ${largest.toLocaleString('en-US')} chars; counts equal the reference tokenizer's (see the estimator tests)`,
    'event-loop stall = longest gap (wall ms) between ticks of a 1 ms interval in this process, so it grows with the load of the machine; the worker runs at nice +10',
  ];
  return { figure: 10, title: 'adversarial token counting', rows, details, notes };
}
