import { setImmediate as nextMacrotask } from 'node:timers/promises';

/**
 * Items handled between two turns given back to the event loop by {@link mapInTurns}: on the
 * 2-core machine a window entry costs ~10–30 µs to decode or splice, so 2,000 of them hold the
 * loop ~20–60 ms, well inside docs/http-api.md's 200 ms for `/health` (newcomer ncnoisy F1).
 */
export const ITEMS_PER_TURN = 2000;

/**
 * Resolves on a later turn of the event loop (after the I/O and timers already due), so that a
 * long piece of work split around it lets other requests (`/health`, other tenants) run between.
 */
export function nextTurn(): Promise<void> {
  return nextMacrotask();
}

/**
 * `items.map(fn)`, giving the event loop a turn ({@link nextTurn}) after every `perTurn` items
 * (default {@link ITEMS_PER_TURN}; none for fewer items). Same result, in the same order; `fn`
 * sees the same (item, index) pairs. The items must not change meanwhile (take a copy, e.g. the
 * rows of one SQL statement, which are one consistent snapshot).
 */
export async function mapInTurns<T, R>(items: readonly T[], fn: (item: T, index: number) => R, perTurn = ITEMS_PER_TURN): Promise<R[]> {
  const out: R[] = new Array<R>(items.length);
  for (let i = 0; i < items.length; i++) {
    if (i > 0 && i % perTurn === 0) await nextTurn();
    out[i] = fn(items[i], i);
  }
  return out;
}
