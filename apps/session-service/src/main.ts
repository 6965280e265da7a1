/**
 * Starts the service: `npm start`. Configuration from the environment (see docs/configuration.md); `--help` (`-h`)
 * prints the usage and the environment variables and exits 0, creating nothing; any other argument
 * is refused like a configuration error (one line on stderr, exit code 2). Prints the
 * URL, the API docs URL, the store in use, whether it runs in open development mode, and with
 * NATS_URL one line naming the NATS subjects and servers, preceded by one warn line per group of
 * settings the configuration leaves without effect (`ignored-settings.ts`) and, with API_KEYS and a NATS
 * connection without credentials, one saying NATS commands are not authenticated by the keys (`nats-tenant-warning.ts`), and
 * in open mode on a non-loopback HOST without ALLOWED_HOSTS, one saying requests by a DNS name will be refused (`open-mode-host-warning.ts`): as
 * plain lines with `LOG_FORMAT=pretty` (a terminal), as JSON log lines (pino's shape, level info,
 * or warn, whatever `LOG_LEVEL` says: docs/configuration.md, Logs) with `LOG_FORMAT=json`, so that stdout holds nothing but JSON.
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
 * A signal during start-up, before the service listens (its modules loading, its store opening: about 2 s),
 * is seen once the start-up step under way ends (they hold the event loop: {@link signalsSeen}) and logs one
 * line then (`SIGTERM received during start-up, before listening: …`); the service is closed as built so far
 * (its store, read models and the lock on DATA_DIR released; nothing when it was not built yet), one line says
 * so (`stopped during start-up after SIGTERM in … ms: …`), and the process ends by the signal (exit code 143
 * for SIGTERM in a shell, as after a shutdown); a step that does not end within SHUTDOWN_TIMEOUT_MS of the
 * signal is left, with one warn line.
 * The `listening on` line names the build (version, commit and Node.js: `config.build`).
 */
// First: a shutdown signal is caught from here on, also while the modules below load (shutdown-signals.ts).
import { endBySignal, handleShutdownSignals, signalsSeen, type ShutdownSignal } from './shutdown/shutdown-signals';
import pino from 'pino';
import { loadServiceConfig } from './config/service-config';
import { createSessionService, type SessionService } from './create-session-service';
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
import { modesWithheldLine, withholdModeBitsFromNewFiles } from './config/data-dir-modes';

/**
 * How long (ms) a SIGTERM/SIGINT shutdown keeps the open connections first (the port is closed: a new
 * connection is refused), answering every new request on them 503 `shutting_down` with `Retry-After` and
 * `Connection: close`: a client on an idle keep-alive connection then gets that answer (retry elsewhere,
 * nothing written) instead of a reset connection.
 */
const SHUTDOWN_DRAIN_MS = 1000;

/**
 * Prints `lines` as main's summary lines, whatever `LOG_LEVEL` says (docs/configuration.md, Logs): plain with
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

/** The warn line of a shutdown (or a stop during start-up) that ended before `unfinished` finished, when there is any. */
function sayUnfinished(config: ServiceConfig, unfinished: string[]): void {
  if (unfinished.length > 0)
    say(
      config,
      [
        `shutdown not finished within SHUTDOWN_TIMEOUT_MS=${config.shutdownTimeoutMs} ms: ending the process without waiting longer for ${unfinished.join(' and ')}`,
      ],
      'warn',
    );
}

/** Ends the process for a start-up failure: a configuration error (exit code 2) or another failure (exit code 1), one line on stderr. */
function failStart(err: unknown): never {
  const configurationError = asConfigurationError(err);
  if (configurationError) process.stderr.write(`configuration error: ${configurationError.message}\n`);
  else process.stderr.write(`failed to start: ${(err as Error).message}\n`);
  process.exit(configurationError ? 2 : 1);
}

async function main(): Promise<void> {
  // Nothing the service writes is readable by other local users (data-dir-modes.ts).
  withholdModeBitsFromNewFiles();
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
  /** Set once the service listens: a signal then shuts it down (`shutDown`); before, it stops the start-up. */
  let running: SessionService | null = null;
  /** A signal received during start-up, and when (ms): the start-up stops at its next step (`stopDuringStartUp`). */
  let startUpStop: { signal: ShutdownSignal; at: number } | null = null;
  let stopping = false;
  const shutDown = (service: SessionService, signal: ShutdownSignal): void => {
    if (stopping) return; // a second signal while closing changes nothing
    stopping = true;
    const started = Date.now();
    say(config, [
      `${signal} received: shutting down${signal === 'SIGHUP' ? ' (the configuration is read only at start: start the service again to apply a change)' : ''} (port closed; for ${SHUTDOWN_DRAIN_MS} ms requests on open connections get 503 shutting_down; in-flight requests finish; at most SHUTDOWN_TIMEOUT_MS=${config.shutdownTimeoutMs} ms)`,
    ]);
    service.close({ drainMs: SHUTDOWN_DRAIN_MS, timeoutMs: config.shutdownTimeoutMs }).then(
      ({ refusedWhileShuttingDown: refused, unfinished }) => {
        // Something still waits for a store that does not answer: the process ends anyway (bounded shutdown).
        sayUnfinished(config, unfinished);
        // The refused requests' own lines are at debug (a load balancer may send hundreds): one count here.
        const answered = `${refused} new request${refused === 1 ? '' : 's'} answered 503 shutting_down`;
        say(config, [`shut down after ${signal} in ${Date.now() - started} ms (${answered})`]);
        endBySignal(signal);
      },
      (err: Error) => {
        process.stderr.write(`shutdown failed: ${err.stack ?? err.message}\n`);
        process.exit(1);
      },
    );
  };
  handleShutdownSignals((signal) => {
    if (running) return shutDown(running, signal);
    if (startUpStop) return; // a second signal during start-up changes nothing
    const stop = (startUpStop = { signal, at: Date.now() });
    say(config, [
      `${signal} received during start-up, before listening: stopping without serving (at most SHUTDOWN_TIMEOUT_MS=${config.shutdownTimeoutMs} ms)`,
    ]);
    // A start-up step that does not end (a store that does not answer) does not hold the process past the bound.
    setTimeout(() => {
      say(
        config,
        [
          `start-up not stopped within SHUTDOWN_TIMEOUT_MS=${config.shutdownTimeoutMs} ms of ${stop.signal}: ending the process without waiting longer for the start-up step under way`,
        ],
        'warn',
      );
      endBySignal(stop.signal);
    }, config.shutdownTimeoutMs);
  });
  /**
   * Closes the service a signal stopped during its start-up (null: stopped before it was built, nothing opened),
   * says so, and ends the process by that signal.
   */
  const stopDuringStartUp = async (service: SessionService | null, { signal, at }: { signal: ShutdownSignal; at: number }): Promise<void> => {
    const { unfinished } = service ? await service.close({ timeoutMs: Math.max(0, at + config.shutdownTimeoutMs - Date.now()) }) : { unfinished: [] };
    sayUnfinished(config, unfinished);
    const closed = service ? 'store and read models closed, DATA_DIR released' : 'nothing was opened';
    say(config, [`stopped during start-up after ${signal} in ${Date.now() - at} ms: the service did not serve (${closed})`]);
    endBySignal(signal);
  };
  // A signal sent while the modules loaded is handed over now: the start-up stops before it opens anything.
  await signalsSeen();
  if (startUpStop) return stopDuringStartUp(null, startUpStop);
  const service = await createSessionService(config);
  // One sent while the service was built (its store opened, the application set up): it stops before listening.
  await signalsSeen();
  if (startUpStop) return stopDuringStartUp(service, startUpStop);
  try {
    // Fastify's own listen, not app.listen: Nest's logs a listen error as an error line of its own,
    // a second line next to the one configuration error printed for it (the app is initialised already).
    await service.app.getHttpAdapter().getInstance().listen({ port: config.port, host: config.host });
  } catch (err) {
    // Nest's buffered start-up lines (ending with "Nest application successfully started") are
    // dropped: the start failed, and its one configuration error line is all there is to read.
    throw listenError(err, config.host, config.port);
  }
  // A signal while the port opened: no "listening on" line written yet, so no client told of it; stop as during start-up.
  if (startUpStop) return stopDuringStartUp(service, startUpStop);
  running = service;
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
    // Files of an earlier release that were readable by other users: said once, at the start that changed them.
    ...(service.modesWithheld.length > 0 ? [modesWithheldLine(service.modesWithheld)] : []),
    `API docs: ${url}/docs`,
    `session memory compaction service ${config.build.version} (commit ${config.build.commit}, Node ${config.build.nodeVersion}) listening on ${url}`,
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
