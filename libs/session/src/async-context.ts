import { AsyncResource } from 'node:async_hooks';

/** Runs `fn` in the async context an {@link inThisContext} call was made in, returning what `fn` returns. */
export type InContext = <T>(fn: () => T) => T;

/**
 * A function that runs another in the current async context, i.e. with the AsyncLocalStorage
 * stores in force here (e.g. the request-scoped logger's `req`), wherever it is called later.
 * Made at start-up (outside every request), it runs work such as a timer's set-up with no
 * request's context, so lines logged from that timer name no request; made in a request, it runs
 * work for that request in its context.
 */
export function inThisContext(): InContext {
  const run: InContext = (fn) => fn();
  return AsyncResource.bind(run);
}
