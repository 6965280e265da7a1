/**
 * The advice for a field of another request sent at the top level of a body that does not take it
 * (a policy's `dryRun`, which only a compaction has): instead of the generic `unknown field "dryRun":
 * remove it`, the body's validation ({@link validate}, option `foreign`) says why it is not there and
 * where it belongs, with the same text a strategy or trigger holding it gets (`misplaced-field.ts`).
 */
import { nearMissOf, quoteInput, scannedUnknownKeys } from '@lib/compaction';

/** A key found to be a field of another request: the key as sent, and the advice (`did you mean "dryRun"? a policy has no dry run: …`). */
export interface ForeignFieldAdvice {
  key: string;
  advice: string;
}

/**
 * The first of `keys` (unknown keys of a body, in the order named) that is a field of `foreign`
 * (field → advice) exactly, else the first that is a near miss of one ({@link nearMissOf}), with
 * that field's advice, preceded by `did you mean "<field>"? ` for a near miss. A key that is a near
 * miss of one of `candidates` (the body's own fields it does not hold) is left to that question.
 * Undefined when no key is such a field, or `foreign` is undefined. An exact name is looked for
 * among all keys (a lookup each); near misses only among the {@link scannedUnknownKeys}, as every
 * hint looks for them, so the work is bounded whatever the number of keys.
 */
export function foreignFieldAdvice(
  keys: readonly string[],
  candidates: readonly string[],
  foreign: Readonly<Record<string, string>> | undefined,
): ForeignFieldAdvice | undefined {
  if (foreign === undefined) return undefined;
  const names = Object.keys(foreign);
  const free = (key: string) => nearMissOf(key, candidates) === undefined;
  // keys are the names of one object: each foreign name is among them once at most
  const exact = names.filter((name) => keys.includes(name) && free(name)).sort((a, b) => keys.indexOf(a) - keys.indexOf(b))[0];
  if (exact !== undefined) return { key: exact, advice: foreign[exact] };
  for (const key of scannedUnknownKeys(keys)) {
    if (!free(key)) continue;
    const field = nearMissOf(key, names);
    if (field !== undefined) return { key, advice: `did you mean ${quoteInput(field)}? ${foreign[field]}` };
  }
  return undefined;
}
