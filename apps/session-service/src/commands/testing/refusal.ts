import { InvalidRequestError } from '@lib/session';

/**
 * The `InvalidRequestError` that `run` throws (a request refused before any command runs); any other
 * error is thrown again, and a `run` that returns fails the test with "accepted".
 */
export function refusal(run: () => unknown): InvalidRequestError {
  try {
    run();
  } catch (err) {
    if (err instanceof InvalidRequestError) return err;
    throw err;
  }
  throw new Error('accepted');
}
