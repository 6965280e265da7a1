/**
 * The level of a request's log line, by its answer: a server fault is an error; a 503 (the read
 * models have not reached `minPosition` yet, or the store is unreachable: the client retries
 * later, and /health reports the store) is a warning; an expected answer (503 `shutting_down`,
 * marked with {@link markExpectedAnswer}: main.ts logs the shutdown itself) is info; every other
 * answer, the client's own 4xx included, logs at `requestLogLevel` (REQUEST_LOG_LEVEL, debug unless asked).
 */
export function requestLogLevel<Level extends string>(
  status: number,
  failed: boolean,
  requestLevel: Level,
  expected = false,
): Level | 'error' | 'warn' | 'info' {
  if (expected && !failed) return 'info';
  if (status === 503) return 'warn';
  if (failed || status >= 500) return 'error';
  return requestLevel;
}

const EXPECTED_ANSWER = Symbol('expected answer');

/**
 * Marks `res` (the raw Node response) as an expected answer the client retries, such as 503
 * `shutting_down`: its log line is info and carries no error (pino-http would add a made-up
 * "failed with status code 503" with a stack trace to every 5xx).
 */
export function markExpectedAnswer(res: object): void {
  (res as Record<symbol, unknown>)[EXPECTED_ANSWER] = true;
}

/** Whether {@link markExpectedAnswer} marked `res`. */
export function isExpectedAnswer(res: object): boolean {
  return (res as Record<symbol, unknown>)[EXPECTED_ANSWER] === true;
}

/**
 * pino-http options choosing each request line's level ({@link requestLogLevel}) and, for an
 * expected answer, leaving out pino-http's made-up error and its "request errored" message.
 */
export function requestLogLevelOptions<Level extends string>(requestLevel: Level) {
  return {
    customLogLevel: (_req: unknown, res: { statusCode: number }, err?: Error) =>
      requestLogLevel(res.statusCode, Boolean(err), requestLevel, isExpectedAnswer(res)),
    customErrorObject: (_req: unknown, res: object, error: Error, object: Record<string, unknown>) => {
      if (!isExpectedAnswer(res) || (res as { err?: unknown }).err === error) return object;
      const { err: _synthetic, ...rest } = object;
      return rest;
    },
    customErrorMessage: (_req: unknown, res: object) => (isExpectedAnswer(res) ? 'request completed' : 'request errored'),
  };
}
