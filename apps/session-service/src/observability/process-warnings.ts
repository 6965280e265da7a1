/**
 * Node's process warnings (`process.emitWarning`: e.g. the pg driver's multi-line `SECURITY WARNING` about
 * `sslmode=require`) as the service's log lines: with `LOG_FORMAT=json`, Node's own printer (several plain-text
 * lines on stderr, which a log shipper reading JSON lines rejects or splits) is replaced by one JSON line at
 * `warn` on stdout, the warning's lines joined; `LOG_FORMAT=pretty` keeps Node's printer.
 */
import pino from 'pino';

/** One line of `warning`: `<name>: <message>`, its line breaks and the spaces around them made one space. */
export function processWarningLine(warning: Error): string {
  return `${warning.name}: ${warning.message.replace(/\s*\n\s*/g, ' ').trim()}`;
}

/**
 * With `logFormat` `json`, every later process warning is written as one JSON log line at `warn` (none at
 * `LOG_LEVEL` `error`, `fatal` or `silent`) instead of Node's plain-text lines; with `pretty`, nothing changes.
 */
export function routeProcessWarnings(logFormat: 'json' | 'pretty', logLevel: string): void {
  if (logFormat !== 'json') return;
  process.removeAllListeners('warning');
  const logger = pino({ level: logLevel }, pino.destination({ dest: 1, sync: true }));
  process.on('warning', (warning) => logger.warn(processWarningLine(warning)));
}
