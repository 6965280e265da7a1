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
   * @param parameter path of the parameter (see {@link InvalidParameterError.parameter})
   * @param allowed the allowed values, in words
   * @param got optional description of the received value, appended to the message
   */
  constructor(parameter: string, allowed: string, got?: string) {
    super(`invalid ${parameter}: must be ${allowed}${got === undefined ? '' : ` (got ${got})`}`);
    this.name = 'InvalidParameterError';
    this.parameter = parameter;
    this.allowed = allowed;
  }
}

/** A short, bounded description of a received value, for error messages. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'number') return Number.isNaN(value) ? 'NaN' : String(value);
  if (typeof value === 'string') return quoteInput(value);
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return typeof value;
}
