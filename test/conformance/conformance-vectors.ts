/**
 * Reads conformance vectors (format: shared `conformance/README.md`): one reader for both runners,
 * the library one (`libs/compaction/test/conformance.spec.ts`) and the HTTP one
 * (`conformance-runner.ts`). Pure file reading: no service, no Nest.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** One vector file, as in the shared README. */
export interface ConformanceVector {
  id: string;
  about?: string;
  /** Estimator of the costs (default `cl100k_base`, the service's default). */
  estimator?: 'chars' | 'cl100k_base' | 'o200k_base';
  events: Array<Record<string, unknown> & { id: string; type: string }>;
  strategy?: Record<string, unknown>;
  trigger?: Record<string, unknown>;
  /**
   * What the summarizer answers if one is called. `failure` (or `error`): the summarizer fails with
   * that reason instead; only the library runner, which calls no model, uses it.
   */
  summarizer?: { reply?: string; failure?: string; error?: string };
  expect: {
    kept?: string[];
    archived?: string[];
    tokensEstimatedSaved?: number;
    summarizerCalls?: number;
    summarizerInputIncludes?: string[];
    summarizerInputExcludes?: string[];
    triggerFired?: boolean;
    error?: string;
  };
}

/** The `expect` keys of the format; any other key fails the vector (a misspelt key must not pass silently). */
export const EXPECT_KEYS: ReadonlySet<string> = new Set([
  'kept',
  'archived',
  'tokensEstimatedSaved',
  'summarizerCalls',
  'summarizerInputIncludes',
  'summarizerInputExcludes',
  'triggerFired',
  'error',
]);

/** A vector file as loaded: the vector, or why it cannot be run (runners report it as failed). */
export interface LoadedVector {
  file: string;
  vector?: ConformanceVector;
  invalid?: string;
}

/** Why `v` cannot be run as a vector, or null when its shape is right. */
export function shapeProblem(v: unknown): string | null {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'not a JSON object';
  const vector = v as Partial<ConformanceVector>;
  if (!Array.isArray(vector.events)) return 'no "events" array';
  if (!vector.expect || typeof vector.expect !== 'object') return 'no "expect" object';
  const keys = Object.keys(vector.expect);
  if (keys.length === 0) return '"expect" is empty: it must state at least one expectation';
  const unknown = keys.filter((k) => !EXPECT_KEYS.has(k));
  if (unknown.length > 0) return `unknown "expect" key(s) ${unknown.map((k) => JSON.stringify(k)).join(', ')}`;
  if (!vector.strategy && !vector.trigger) return 'neither "strategy" nor "trigger"';
  if (!vector.strategy && vector.expect.triggerFired === undefined) return 'a trigger-only vector must expect "triggerFired"';
  return null;
}

/** Loads every `*.json` of `dir`, sorted by file name; unreadable or malformed files come back with `invalid`. @throws Error when the folder cannot be read. */
export function loadVectors(dir: string): LoadedVector[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((file): LoadedVector => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
      } catch (err) {
        return { file, invalid: `not valid JSON (${(err as Error).message})` };
      }
      const problem = shapeProblem(parsed);
      return problem ? { file, invalid: problem } : { file, vector: parsed as ConformanceVector };
    });
}
