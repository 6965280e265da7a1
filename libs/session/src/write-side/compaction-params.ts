/**
 * Canonical key of a compaction's parameters: two commands with the same key on an unchanged
 * session are the same decision (DESIGN §4; issue 7 "never a second decision").
 */
import type { Strategy, Trigger } from '@lib/compaction';
import type { EstimatorName } from '../events/session-stream-events';

/** JSON with object keys sorted, so that key order never changes the result. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** `canonicalJson({ strategy, trigger, estimator })`. */
export function compactionParamsKey(strategy: Strategy, trigger: Trigger | null, estimator: EstimatorName): string {
  return canonicalJson({ strategy, trigger, estimator });
}
