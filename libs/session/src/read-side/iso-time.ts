import { isoTimeMillis } from '../domain/utc-time-text';

/**
 * Normalizes a time to ISO-8601 UTC with milliseconds (`2024-01-02T03:04:05.000Z`) so that
 * times compare as strings. A string that is not a parseable time is returned unchanged; an
 * invalid `Date` gives `''`.
 */
export function toIsoTime(value: string | Date): string {
  const date = value instanceof Date ? value : new Date(isoTimeMillis(value));
  if (Number.isNaN(date.getTime())) return value instanceof Date ? '' : value;
  return date.toISOString();
}
