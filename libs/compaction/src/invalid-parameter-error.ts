import { quoteInput } from './quoted-input';

/**
 * The error raised for an invalid strategy or trigger parameter (DESIGN §3.4: invalid
 * parameters are rejected before anything is read; the service maps it to HTTP 400).
 */
export class InvalidParameterError extends Error {
  /** Path of the offending parameter, e.g. `strategy.maxEvents` or `trigger.triggers[1].threshold`. */
  readonly parameter: string;
  /** What is allowed, in words, e.g. `an integer from 1 to 1000000000`. */
  readonly allowed: string;
  /**
   * For an unknown key refused (`must be absent`), the key as sent (`parameter` ends with it, quoted
   * as errors quote client input); undefined for any other error. Lets a caller find the key's
   * object without quoting every key of it.
   */
  readonly unknownKey?: string;

  /**
   * @param parameter path of the parameter (see {@link InvalidParameterError.parameter})
   * @param allowed the allowed values, in words
   * @param got optional description of the received value, appended to the message
   * @param unknownKey the unknown key refused, as sent (see {@link InvalidParameterError.unknownKey})
   */
  constructor(parameter: string, allowed: string, got?: string, unknownKey?: string) {
    super(`invalid ${parameter}: must be ${allowed}${got === undefined ? '' : ` (got ${got})`}`);
    this.name = 'InvalidParameterError';
    this.parameter = parameter;
    this.allowed = allowed;
    if (unknownKey !== undefined) this.unknownKey = unknownKey;
  }

  /**
   * The error for a required parameter that was left out: `<parameter>: is required: <allowed>`
   * (e.g. `strategy.type: is required: one of sliding-window, …`), the wording of every other
   * missing request field (`strategy: is required`), never a JavaScript `undefined`.
   * @param parameter path of the missing parameter
   * @param allowed what to send, in words
   * @param hint what the message ends with: the unknown keys sent beside it (`unknownFieldHint`), or nothing
   */
  static missing(parameter: string, allowed: string, hint = ''): InvalidParameterError {
    const err = new InvalidParameterError(parameter, allowed);
    err.message = `${parameter}: is required: ${allowed}${hint}`;
    return err;
  }
}

/**
 * A number as an error message may quote it: itself when it is what the client sent, or in words
 * when JSON could not carry it exactly (past 2^53 − 1, where `String(value)` would print the
 * nearest double, e.g. 1152921504606847000 for a sent 1152921504606846976; or too large for a
 * double at all, e.g. `1e400`, read as Infinity), so the message never echoes a value never sent.
 */
export function describeNumber(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (!Number.isFinite(value)) return `a number too large to read (beyond the largest double, about 1.8e308)`;
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) return `a number beyond 2^53 − 1 (${Number.MAX_SAFE_INTEGER}), which JSON cannot carry exactly here`;
  return String(value);
}

/**
 * A short, bounded description of a received value, for error messages (numbers: {@link describeNumber}).
 * A left-out value has no description: report it with {@link InvalidParameterError.missing}.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (typeof value === 'number') return describeNumber(value);
  if (typeof value === 'string') return quoteInput(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value;
}
