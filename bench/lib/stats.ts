/**
 * Small statistics and timing helpers for the benchmarks: percentiles over latency samples,
 * a high-resolution clock, and number formatting.
 */

/** Milliseconds since an arbitrary origin, with sub-microsecond resolution. */
export function nowMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** The `p`-th percentile (0–100) of `samples` by nearest rank; NaN for an empty list. Does not mutate the input. */
export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank];
}

/** Summary of latency samples in milliseconds. */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** p50/p90/p99/max/mean of `samples` (ms). */
export function summarize(samples: readonly number[]): LatencySummary {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (p: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]);
  const mean = sorted.length === 0 ? NaN : sorted.reduce((s, x) => s + x, 0) / sorted.length;
  return { count: sorted.length, p50: at(50), p90: at(90), p99: at(99), max: sorted.length ? sorted[sorted.length - 1] : NaN, mean };
}

/** The median of `samples`. */
export function median(samples: readonly number[]): number {
  return percentile(samples, 50);
}

/** Rounds to `digits` significant-ish decimals for display and JSON (keeps integers intact). */
export function round(x: number, digits = 3): number {
  if (!Number.isFinite(x)) return x;
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Formats a number for the results table: thousands separators for big values, 3 significant digits for small ones. */
export function fmt(x: number | string | undefined | null): string {
  if (x === undefined || x === null) return '';
  if (typeof x === 'string') return x;
  if (!Number.isFinite(x)) return String(x);
  const abs = Math.abs(x);
  if (abs >= 1000) return Math.round(x).toLocaleString('en-US');
  if (abs >= 100) return x.toFixed(0);
  if (abs >= 10) return x.toFixed(1);
  if (abs >= 1) return x.toFixed(2);
  if (abs === 0) return '0';
  return x.toPrecision(3);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Runs `fn` and returns its result and the elapsed milliseconds. */
export async function timed<T>(fn: () => Promise<T> | T): Promise<{ value: T; ms: number }> {
  const start = nowMs();
  const value = await fn();
  return { value, ms: nowMs() - start };
}
