/**
 * The level of a request's log line, by its answer: a server fault is an error; a 503 (the read
 * models have not reached `minPosition` yet, or the store is unreachable: the client retries
 * later, and /health reports the store) is a warning; an expected answer (marked with
 * {@link markExpectedAnswer}: 503 `shutting_down` at debug, since main.ts logs the shutdown and
 * how many requests got that answer;
 * the 503s the error filter answers at warn; every `/health` answer at debug, since the health
 * controller logs its changes itself) logs at the level it was marked with; every other
 * answer, the client's own 4xx included, logs at `requestLogLevel` (REQUEST_LOG_LEVEL, debug unless asked).
 */
export function requestLogLevel<Level extends string>(
  status: number,
  failed: boolean,
  requestLevel: Level,
  expected?: ExpectedAnswerLevel,
): Level | ExpectedAnswerLevel | 'error' {
  if (expected && !failed) return expected;
  if (status === 503) return 'warn';
  if (failed || status >= 500) return 'error';
  return requestLevel;
}

/** The level of an expected answer's log line (`debug`: a `/health` probe, see `health-transitions.ts`). */
export type ExpectedAnswerLevel = 'debug' | 'info' | 'warn';

const EXPECTED_ANSWER = Symbol('expected answer');

/**
 * Marks `res` (the raw Node response) as an expected answer the client retries, such as 503
 * `shutting_down` (debug), `projection_behind` (warn) or a `/health` probe (debug): its log line is at `level` (default info) and
 * carries no error (pino-http would add a made-up "failed with status code 503" with a stack
 * trace to every 5xx).
 */
export function markExpectedAnswer(res: object, level: ExpectedAnswerLevel = 'info'): void {
  (res as Record<symbol, unknown>)[EXPECTED_ANSWER] = level;
}

/** The level {@link markExpectedAnswer} marked `res` with, or undefined. */
export function expectedAnswerLevel(res: object): ExpectedAnswerLevel | undefined {
  return (res as Record<symbol, ExpectedAnswerLevel | undefined>)[EXPECTED_ANSWER];
}

/**
 * pino-http options choosing each request line's level ({@link requestLogLevel}) and, for an
 * expected answer, leaving out pino-http's made-up error and its "request errored" message.
 */
export function requestLogLevelOptions<Level extends string>(requestLevel: Level) {
  return {
    customLogLevel: (_req: unknown, res: { statusCode: number }, err?: Error) =>
      requestLogLevel(res.statusCode, Boolean(err), requestLevel, expectedAnswerLevel(res)),
    customErrorObject: (_req: unknown, res: object, error: Error, object: Record<string, unknown>) => {
      if (!expectedAnswerLevel(res) || (res as { err?: unknown }).err === error) return object;
      const { err: _synthetic, ...rest } = object;
      return rest;
    },
    customErrorMessage: (_req: unknown, res: object) => (expectedAnswerLevel(res) ? 'request completed' : 'request errored'),
  };
}
