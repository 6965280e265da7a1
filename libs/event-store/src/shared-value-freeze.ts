/**
 * Values the append path hands on without copying: a request's validated metadata, whose JSON text
 * is remembered ({@link rememberJsonText}: a change would leave the text stale), and the payload an
 * appender gives the SQLite store, which the store gives as it is to the first reader of the event
 * it just committed (usually the projector: a change by either would be seen by the other). Nothing
 * may change them. In production that promise is not checked (a deep freeze is a walk of a value the
 * append path now walks once); with `SESSION_FREEZE_SHARED_VALUES=1` in the environment when this
 * module loads (every test run sets it: `test/support/freeze-shared-values.js`) they are deep-frozen,
 * so a change throws a TypeError where it is made.
 */
let freeze = process.env.SESSION_FREEZE_SHARED_VALUES === '1';

/** Whether values shared along the append path are frozen in this process now (see the module's docstring). */
export function sharedValuesFrozen(): boolean {
  return freeze;
}

/**
 * Runs `body` with the freeze off and turns it back as it was once `body`'s promise settles: for
 * specs that count how often the append path reads a value (the freeze is a walk production does
 * not make). Not for production code.
 */
export async function withoutSharedValueFreeze<T>(body: () => T | Promise<T>): Promise<T> {
  const was = freeze;
  freeze = false;
  try {
    return await body();
  } finally {
    freeze = was;
  }
}

/**
 * `value` itself, deep-frozen (every object and array it holds, at any depth) when
 * `SESSION_FREEZE_SHARED_VALUES=1` was set as this module loaded (and no
 * {@link withoutSharedValueFreeze} runs), else untouched. Iterative: a value nested deeper than the
 * call stack allows is frozen too.
 */
export function freezeShared<T>(value: T): T {
  if (!freeze) return value;
  const seen = new Set<object>();
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const next = pending.pop();
    if (next === null || typeof next !== 'object' || seen.has(next)) continue;
    seen.add(next);
    Object.freeze(next);
    for (const member of Object.values(next)) pending.push(member);
  }
  return value;
}
