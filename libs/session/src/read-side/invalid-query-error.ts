import { InvalidRequestError } from '../errors';

/**
 * A read-side query was given a value it cannot use (blank `q`, malformed `cursor`, a `limit`
 * out of range, an unknown `type`, an unparseable time…). `parameter` names the offending query
 * parameter; the message says what to fix. The HTTP layer answers 400 with code `invalid_query`.
 */
export class InvalidQueryError extends InvalidRequestError {
  override readonly name = 'InvalidQueryError';
  constructor(parameter: string, message: string) {
    super(parameter, `${parameter}: ${message}`, 'invalid_query');
  }
}
