/**
 * Starts the service: `npm start`. Configuration from the environment (see README); `--help` (`-h`)
 * prints the usage and the environment variables and exits 0, creating nothing; any other argument
 * is refused like a configuration error (one line on stderr, exit code 2). Prints the
 * URL, the API docs URL, the store in use, whether it runs in open development mode, and with
 * NATS_URL one line naming the NATS subjects and servers, preceded by one warn line per group of
 * settings the configuration leaves without effect (`ignored-settings.ts`) and, with API_KEYS and a NATS
 * connection without credentials, one saying NATS commands are not authenticated by the keys (`nats-tenant-warning.ts`), and
 * in open mode on a non-loopback HOST without ALLOWED_HOSTS, one saying requests by a DNS name will be refused (`open-mode-host-warning.ts`): as
 * plain lines with `LOG_FORMAT=pretty` (a terminal), as JSON log lines (pino's shape, level info,
 * or warn, whatever `LOG_LEVEL` says: README, Logs) with `LOG_FORMAT=json`, so that stdout holds nothing but JSON.
 * The URLs are `startupUrl`'s (an IPv6 HOST in brackets; all interfaces as localhost).
 * A configuration error (an invalid variable, a near miss of a security setting left unset such as
 * API_KEY without API_KEYS, a DATA_DIR another service process holds, a HOST or
 * NATS_URL host that does not resolve, a PORT in use) is printed on stderr as one line
 * `configuration error: NAME=…: what to fix` and ends the process with exit code 2 (nothing else:
 * Nest's own start-up lines, "Nest application successfully started" among them, are printed only
 * once the server listens); any other
 * start-up failure (e.g. a NATS server that refuses the credentials, or `tls://` against one without
 * TLS, named by NATS_URL; a NATS server that is down does not stop the start: the transport waits for it)
 * as `failed to start: …` with exit code 1. SIGTERM, SIGINT or SIGHUP (a closed terminal, or an
 * operator expecting a reload: the configuration is read only at start) closes the service (new
 * requests get 503 `shutting_down`, each logged at debug; in-flight ones finish), with one line
 * when the shutdown starts and one when it is done, saying how many requests got that 503; then
 * the process ends by that signal. The port closes when the shutdown starts (a new connection is
 * refused); the drain answers requests on open connections (see {@link SHUTDOWN_DRAIN_MS}). The whole
 * shutdown takes at most SHUTDOWN_TIMEOUT_MS (shutdown/shutdown-bound.ts): what still waits for a store that
 * does not answer then is named in one warn line, and the process ends by the signal all the same.
 */
import pino from 'pino';
import { loadServiceConfig } from './config/service-config';
import { createSessionService } from './create-session-service';
import { eventStoreKind } from './config/event-store-config';
import { startupNatsLine, startupStoreLine, startupSummarizerLine, startupUrl } from './config/startup-summary';
import { asConfigurationError } from './config/configuration-error';
import { listenError } from './config/listen-error';
import type { ServiceConfig } from './config/service-config';
import { parseCommandLine, usage } from './config/command-line';
import { ignoredSettingLines } from './config/ignored-settings';
import { misspelledSettingLines, refuseMisspelledSecuritySettings } from './config/misspelled-settings';
import { natsTenantWarningLines } from './config/nats-tenant-warning';
import { openModeHostWarningLines } from './config/open-mode-host-warning';
import { routeProcessWarnings } from './observability/process-warnings';

/**
 * How long (ms) a SIGTERM/SIGINT shutdown keeps the open connections first (the port is closed: a new
 * connection is refused), answering every new request on them 503 `shutting_down` with `Retry-After` and
 * `Connection: close`: a client on an idle keep-alive connection then gets that answer (retry elsewhere,
 * nothing written) instead of a reset connection.
 */
const SHUTDOWN_DRAIN_MS = 1000;

/** Signals that close the service gracefully (SIGHUP too: without a handler Node ends at once, without the drain or a line). */
const SHUTDOWN_SIGNALS = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/**
 * Prints `lines` as main's summary lines, whatever `LOG_LEVEL` says (README, Logs): plain with
 * LOG_FORMAT=pretty (`warning: ` before a `warn` one), JSON log lines at `level` otherwise.
 */
function say(config: ServiceConfig, lines: string[], level: 'info' | 'warn' = 'info'): void {
  if (lines.length === 0) return;
  if (config.logFormat === 'pretty') process.stdout.write(lines.map((line) => (level === 'warn' ? `warning: ${line}` : line)).join('\n') + '\n');
  else {
    const banner = pino({ level: 'info' }, pino.destination({ dest: 1, sync: true }));
    for (const line of lines) banner[level](line);
  }
}

/** The store mode line: whether the SQLite writer thread and the worker projector are on. */
function storeModeLine(config: ServiceConfig): string {
  const writer =
    eventStoreKind(config) === 'sqlite' ? `SQLITE_WRITER_THREAD ${config.sqliteWriterThread ? 'on' : 'off'}` : 'SQLITE_WRITER_THREAD n/a (not SQLite)';
  return `store mode: ${writer}, PROJECTOR_WORKER ${config.projectorWorker ? 'on' : 'off'}`;
}

/** Ends the process for a start-up failure: a configuration error (exit code 2) or another failure (exit code 1), one line on stderr. */
function failStart(err: unknown): never {
  const configurationError = asConfigurationError(err);
  if (configurationError) process.stderr.write(`configuration error: ${configurationError.message}\n`);
  else process.stderr.write(`failed to start: ${(err as Error).message}\n`);
  process.exit(configurationError ? 2 : 1);
}

async function main(): Promise<void> {
  // The command line first: --help prints the usage and touches nothing (no DATA_DIR, no store).
  let help;
  try {
    ({ help } = parseCommandLine(process.argv.slice(2)));
  } catch (err) {
    process.stderr.write(`configuration error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  if (help) {
    process.stdout.write(usage());
    return;
  }
  let config;
  try {
    config = loadServiceConfig();
    // API_KEY=… without API_KEYS (a near miss of a security setting left unset): refused, not a warn line (misspelled-settings.ts).
    refuseMisspelledSecuritySettings({ ...config, env: process.env });
  } catch (err) {
    process.stderr.write(`configuration error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  // Node's warnings (the pg driver's multi-line SSL one) as one JSON log line each, not plain text amid the JSON lines.
  routeProcessWarnings(config.logFormat, config.logLevel);
  const service = await createSessionService(config);
  const running = service;
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) return; // a second signal while closing changes nothing
    stopping = true;
    const started = Date.now();
    say(config, [
      `${signal} received: shutting down${signal === 'SIGHUP' ? ' (the configuration is read only at start: start the service again to apply a change)' : ''} (port closed; for ${SHUTDOWN_DRAIN_MS} ms requests on open connections get 503 shutting_down; in-flight requests finish; at most SHUTDOWN_TIMEOUT_MS=${config.shutdownTimeoutMs} ms)`,
    ]);
    running.close({ drainMs: SHUTDOWN_DRAIN_MS, timeoutMs: config.shutdownTimeoutMs }).then(
      ({ refusedWhileShuttingDown: refused, unfinished }) => {
        // Something still waits for a store that does not answer: the process ends anyway (bounded shutdown).
        if (unfinished.length > 0)
          say(
            config,
            [
              `shutdown not finished within SHUTDOWN_TIMEOUT_MS=${config.shutdownTimeoutMs} ms: ending the process without waiting longer for ${unfinished.join(' and ')}`,
            ],
            'warn',
          );
        // The refused requests' own lines are at debug (a load balancer may send hundreds): one count here.
        const answered = `${refused} new request${refused === 1 ? '' : 's'} answered 503 shutting_down`;
        say(config, [`shut down after ${signal} in ${Date.now() - started} ms (${answered})`]);
        for (const s of SHUTDOWN_SIGNALS) process.removeAllListeners(s);
        process.kill(process.pid, signal);
      },
      (err: Error) => {
        process.stderr.write(`shutdown failed: ${err.stack ?? err.message}\n`);
        process.exit(1);
      },
    );
  };
  for (const s of SHUTDOWN_SIGNALS) process.on(s, onSignal);
  try {
    // Fastify's own listen, not app.listen: Nest's logs a listen error as an error line of its own,
    // a second line next to the one configuration error printed for it (the app is initialised already).
    await service.app.getHttpAdapter().getInstance().listen({ port: config.port, host: config.host });
  } catch (err) {
    // Nest's buffered start-up lines (ending with "Nest application successfully started") are
    // dropped: the start failed, and its one configuration error line is all there is to read.
    throw listenError(err, config.host, config.port);
  }
  // Listening: now Nest's buffered start-up lines are true, and printed.
  service.app.flushLogs();
  const address = service.app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = startupUrl(config.host, port);
  // The "listening on" line last: whoever waits for it (tests, scripts) has seen the others.
  const lines = [
    `${startupStoreLine(config)}; ${startupSummarizerLine(service.summarizer)}`,
    storeModeLine(config),
    config.apiKeys.size === 0
      ? 'open development mode: no API_KEYS configured, every request is tenant "default"'
      : `API keys required for /v1 (${config.apiKeys.size} configured)`,
    // The one NATS line (the transport logs none of its own, but a warn line when no server answered: it waits for one):
    // written once the consumer and the feed run, or the transport waits.
    ...(config.natsUrl ? [startupNatsLine(config)] : []),
    `API docs: ${url}/docs`,
    `session memory compaction service listening on ${url}`,
  ];
  // Variables whose name is a near miss of a setting (DATA_DIRR): one warn line each, did you mean … (misspelled-settings.ts).
  say(config, misspelledSettingLines(process.env), 'warn');
  // Settings the configuration leaves without effect: one warn line per group, before the summary.
  say(config, ignoredSettingLines(process.env, config), 'warn');
  // API_KEYS with a NATS connection without credentials: NATS commands are every tenant's (nats-tenant-warning.ts).
  say(config, natsTenantWarningLines(config), 'warn');
  // Open mode on a non-loopback address without ALLOWED_HOSTS: requests by a DNS name will be refused 403 host_not_allowed (open-mode-host-warning.ts).
  say(config, openModeHostWarningLines(config), 'warn');
  say(config, lines);
}

main().catch(failStart);
