/**
 * The one wording of a refusal over a size or count limit (events or messages per request, a
 * text's length, `metadata`'s size and depth, recall's `q`, tool calls and responses per event):
 * the limit with its unit, what sets it (the environment variable, or that it is fixed) and how to
 * stay under it, as the 413 over `MAX_BODY_BYTES` says (`…; split the events into several
 * requests`). Example: `at most 1000 events per request, the limit set by MAX_EVENTS_PER_REQUEST:
 * split the events into several requests, in order`.
 */

/** A size or count limit, as a refusal names it. */
export interface SizeLimit {
  /** The most accepted (or the largest allowed figure), e.g. 1000. */
  max: number;
  /** What is counted, after the figure, e.g. `events per request` or `LENGTH_UNIT`. */
  unit: string;
  /** The environment variable that sets the limit, e.g. `MAX_TEXT_LENGTH`; absent: the limit is fixed. */
  setting?: string;
  /** How to stay under it, e.g. `split the events into several requests, in order`. */
  remedy: string;
}

/**
 * The refusal's text (after the field's name): `<verb> <max> <unit>, <the limit set by SETTING | a
 * fixed limit>: <remedy>`, e.g. `is longer than 1000000 characters (Unicode code points), the limit
 * set by MAX_TEXT_LENGTH: shorten it …`. `verb` the comparison, e.g. `at most`, `is longer than`.
 */
export function overLimitMessage(verb: string, limit: SizeLimit): string {
  const source = limit.setting === undefined ? 'a fixed limit' : `the limit set by ${limit.setting}`;
  return `${verb} ${limit.max} ${limit.unit}, ${source}: ${limit.remedy}`;
}
