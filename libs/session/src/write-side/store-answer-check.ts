import { StoreAnswerContradictionError, WrongIncarnationError, type ExpectedRevision, type WrongExpectedRevisionError } from '@lib/event-store';

/** Refusals in a row that the store's reads contradict before {@link StoreAnswerCheck} gives up (a few: an erasure racing a re-creation can fake one). */
export const MAX_CONTRADICTED_REFUSALS = 3;

/**
 * Tells a true revision conflict from a store contradicting itself, for a write loop that reloads
 * the session after each `WrongExpectedRevisionError` and decides again. A retry loop may blame
 * other writers only when the stream moved: if the state loaded after a refusal is at exactly the
 * revision the refused append expected, nobody moved it, and the refusal contradicts the store's
 * own reads (as when a replica of an older build replaced PostgreSQL's append function with one
 * that ignores erasures). {@link MAX_CONTRADICTED_REFUSALS} such refusals in a row end the loop
 * with StoreAnswerContradictionError (500 `internal`, logged with that message) instead of
 * a 409 saying other writers changed the session. A refusal for the stream's life
 * (WrongIncarnationError: erased since the load) is never contradicted: the life moved, whatever
 * the revision reloaded (a session erased again reloads as no stream, as before).
 */
export class StoreAnswerCheck {
  private last: { expected: ExpectedRevision; error: WrongExpectedRevisionError } | null = null;
  private contradicted = 0;

  /** Records that an append at `expected` was refused with `error`. */
  refused(expected: ExpectedRevision, error: WrongExpectedRevisionError): void {
    this.last = { expected, error };
  }

  /**
   * Checks the revision (null: no stream) of the state loaded after the last refusal (no-op when
   * nothing was refused since the previous call).
   * @throws StoreAnswerContradictionError after {@link MAX_CONTRADICTED_REFUSALS} contradicted refusals in a row.
   */
  loaded(revision: bigint | null): void {
    const last = this.last;
    if (!last) return;
    this.last = null;
    const sameAsExpected =
      !(last.error instanceof WrongIncarnationError) &&
      (last.expected === 'no_stream' ? revision === null : typeof last.expected === 'bigint' && revision === last.expected);
    this.contradicted = sameAsExpected ? this.contradicted + 1 : 0;
    if (this.contradicted >= MAX_CONTRADICTED_REFUSALS)
      throw new StoreAnswerContradictionError(last.error.stream, last.expected, last.error.actual, this.contradicted);
  }
}
