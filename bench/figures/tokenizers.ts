/**
 * Figure 5: tokenizer throughput (MB/s of UTF-8 text) of the estimator the service uses at append
 * time (`gpt-tokenizer`, pure JS, through `getEstimator`) against `js-tiktoken` (pure JS, what the
 * service used before) and `tiktoken` (Rust/WASM), on
 * the formatted lines of every shared conversation, for `cl100k_base` and `o200k_base`. The
 * token counts of the three libraries are compared line by line and must be equal.
 */
import { formatEventLines, getEstimator } from '@lib/compaction';
import { corpus } from '../lib/corpus';
import { nowMs, round } from '../lib/stats';
import { progress, type FigureResult, type FigureRow } from '../lib/report';

/** Options of {@link runTokenizers}. */
export interface TokenizerOptions {
  /** Timed passes over the corpus per library (the median is reported). */
  passes: number;
  /** Use every n-th conversation (1 = all; quick runs use a subset). */
  every?: number;
}

type Counter = { name: string; count: (text: string) => number; reset?: () => void };

function counters(encoding: 'cl100k_base' | 'o200k_base'): { counters: Counter[]; free: () => void } {
  const ours = getEstimator(encoding);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const gpt = require(`gpt-tokenizer/cjs/encoding/${encoding}`) as { clearMergeCache: () => void };
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Tiktoken } = require('js-tiktoken/lite') as typeof import('js-tiktoken/lite');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ranks = require(`js-tiktoken/ranks/${encoding}`);
  const js = new Tiktoken(ranks.default ?? ranks);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { get_encoding } = require('tiktoken') as typeof import('tiktoken');
  const wasm = get_encoding(encoding);
  return {
    counters: [
      // gpt-tokenizer keeps a merge cache: cleared before each timed pass so ours is not measured warm.
      { name: 'gpt-tokenizer (ours)', count: (t) => ours.count(t), reset: () => gpt.clearMergeCache() },
      { name: 'js-tiktoken', count: (t) => (t.length === 0 ? 0 : js.encode(t, [], []).length) },
      { name: 'tiktoken (WASM)', count: (t) => (t.length === 0 ? 0 : wasm.encode(t, [], []).length) },
    ],
    free: () => wasm.free(),
  };
}

/** Runs figure 5. */
export async function runTokenizers(options: TokenizerOptions): Promise<FigureResult> {
  const { source, conversations } = corpus();
  const lines = conversations.filter((_, i) => i % (options.every ?? 1) === 0).flatMap((c) => c.events.flatMap((e) => formatEventLines(e)));
  const bytes = lines.reduce((s, l) => s + Buffer.byteLength(l, 'utf8'), 0);
  const mb = bytes / 1e6;
  const rows: FigureRow[] = [];
  const details: Record<string, unknown> = { source, lines: lines.length, bytes };
  let allEqual = true;
  for (const encoding of ['cl100k_base', 'o200k_base'] as const) {
    const { counters: list, free } = counters(encoding);
    const reference: number[] = lines.map((l) => list[0].count(l)); // warm-up of ours + reference counts
    const mbps: Record<string, number> = {};
    const mismatches: Record<string, number> = {};
    for (const c of list) {
      let mismatch = 0;
      if (c !== list[0])
        lines.forEach((l, i) => {
          if (c.count(l) !== reference[i]) mismatch++;
        }); // warm-up pass + equality check
      mismatches[c.name] = mismatch;
      if (mismatch > 0) allEqual = false;
      const times: number[] = [];
      for (let p = 0; p < options.passes; p++) {
        c.reset?.();
        const t0 = nowMs();
        let total = 0;
        for (const l of lines) total += c.count(l);
        times.push(nowMs() - t0);
        if (total < 0) throw new Error('unreachable');
      }
      times.sort((a, b) => a - b);
      mbps[c.name] = mb / (times[Math.floor(times.length / 2)] / 1000);
      progress(`${encoding} ${c.name}: ${mbps[c.name].toFixed(2)} MB/s, ${mismatch} lines with another count`);
    }
    free();
    const ours = mbps[list[0].name];
    for (const c of list) {
      rows.push({
        figure: 5,
        metric: `${encoding} ${c.name} (MB/s)`,
        value: round(mbps[c.name], 2),
        ...(c === list[0] ? {} : { baseline: round(ours, 2), baselineName: 'gpt-tokenizer (ours)', ratio: round(mbps[c.name] / ours, 2) }),
        target: c === list[0] ? 'report' : `counts equal (${mismatches[c.name]} differ)`,
        met: c === list[0] ? undefined : mismatches[c.name] === 0,
      });
    }
    details[encoding] = { mbPerSecond: mbps, linesWithOtherCount: mismatches, totalTokens: reference.reduce((s, x) => s + x, 0) };
  }
  const fastest = rows.filter((r) => r.ratio !== undefined && r.met).sort((a, b) => (b.ratio ?? 0) - (a.ratio ?? 0))[0];
  const notes = [
    `${lines.length} formatted lines, ${mb.toFixed(2)} MB (${source}); gpt-tokenizer's merge cache is cleared before each timed pass; ratio = library / ours`,
  ];
  if (fastest && (fastest.ratio ?? 0) > 1) notes.push(`faster with identical counts: ${fastest.metric.replace(' (MB/s)', '')} at ${fastest.ratio}× ours`);
  if (!allEqual) notes.push('some counts differ: see details');
  return { figure: 5, title: 'tokenizer throughput', rows, details, notes };
}
