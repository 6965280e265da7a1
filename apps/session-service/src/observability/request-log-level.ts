/**
 * The level of a request's log line, by its answer: a server fault is an error; a 503 (the read
 * models have not reached `minPosition` yet, or the store is unreachable: the client retries
 * later, and /health reports the store) is a warning; every other answer, the client's own 4xx
 * included, logs at `requestLogLevel` (REQUEST_LOG_LEVEL, debug unless asked).
 */
export function requestLogLevel<Level extends string>(status: number, failed: boolean, requestLevel: Level): Level | 'error' | 'warn' {
  if (status === 503) return 'warn';
  if (failed || status >= 500) return 'error';
  return requestLevel;
}
