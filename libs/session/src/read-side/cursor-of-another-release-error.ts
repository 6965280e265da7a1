import { InvalidRequestError } from '../errors';

/**
 * A paging cursor (recall, session list, compaction history) carries a format version, and this
 * one's is not the version this release reads: another release of the service made it (an
 * earlier one during or after an upgrade, a later one after a rollback or behind a balancer with
 * replicas of two versions). Its pages cannot be continued; the client searches (or lists) again
 * without `cursor`. The HTTP layer answers 400 with code `cursor_expired`, naming `cursor`.
 */
export class CursorOfAnotherReleaseError extends InvalidRequestError {
  override readonly name = 'CursorOfAnotherReleaseError';
  /** `version`: the cursor's format version; `current`: the one this release makes and reads; `restart`: what to do, e.g. "search again without cursor". */
  constructor(version: number, current: number, restart: string) {
    super(
      'cursor',
      `cursor: was made by ${version < current ? 'an earlier' : 'a later'} release of the service (cursor version ${version}; this release reads version ${current}); ${restart}`,
      'cursor_expired',
    );
  }
}

/**
 * The format version of a decoded cursor's `v` when it names one (a positive safe integer), else
 * undefined (the text is then no cursor at all).
 */
export function cursorVersion(v: unknown): number | undefined {
  return Number.isSafeInteger(v) && (v as number) > 0 ? (v as number) : undefined;
}
