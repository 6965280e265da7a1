/**
 * The parts of the start-up summary `main.ts` prints that describe the configuration: where events
 * are stored and which summarizer (and, for a model, which endpoint) compactions use.
 */
import { OpenAiSummarizer, type Summarizer } from '@lib/session';
import { eventStoreKind } from './event-store-config';
import type { ServiceConfig } from './service-config';
import * as path from 'node:path';
import { isIPv6 } from 'node:net';
import { natsServersShown } from '../nats/nats-servers-shown';

/**
 * `store: …`: KurrentDB, PostgreSQL (its `host:port/database`, with the read models' `DATA_DIR`), or embedded SQLite: `in
 * <DATA_DIR>` when the events file is the default `<DATA_DIR>/events.sqlite`, else the events file
 * (`SQLITE_EVENTS_FILE`) and the read models' `DATA_DIR`. Paths are absolute.
 */
export function startupStoreLine(config: ServiceConfig): string {
  switch (eventStoreKind(config)) {
    case 'kurrentdb':
      return `store: KurrentDB (KURRENTDB_CONNECTION_STRING); read models in ${config.dataDir}`;
    case 'postgres':
      return `store: PostgreSQL ${postgresServerShown(config.databaseUrl!)} (DATABASE_URL); read models in ${config.dataDir}`;
    case 'sqlite':
      return config.sqliteEventsFile === path.join(config.dataDir, 'events.sqlite')
        ? `store: embedded SQLite in ${config.dataDir}`
        : `store: embedded SQLite ${config.sqliteEventsFile} (SQLITE_EVENTS_FILE); read models in ${config.dataDir}`;
  }
}

/**
 * Where a `DATABASE_URL` (a postgres:// URL, validated at start) points, as `host:port/database`,
 * never its user, password or options: `db.internal:5432/events`; the host is the URL's, else its
 * `host` parameter (a socket directory, shown without a port), else `localhost` (the driver's default); the port
 * always, 5432 when the URL gives none (`postgres://db:/e` too: newcomer ncrecheck65 F4); `/database` only
 * when the URL names one.
 */
function postgresServerShown(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  const socket = url.hostname ? null : url.searchParams.get('host');
  // the port the driver uses: the URL's, else its `port` parameter, else 5432 (none for a socket directory)
  const host = socket ?? `${url.hostname || 'localhost'}:${url.port || url.searchParams.get('port') || '5432'}`;
  const database = url.pathname.length > 1 ? decodeURIComponent(url.pathname.slice(1)) : '';
  return database === '' ? host : `${host}/${database}`;
}

/**
 * `summarizer: <kind> (<model>)`, and for an OpenAI-compatible one ` at <host[:port]>` of its
 * endpoint (`OPENAI_BASE_URL`, or api.openai.com by default): where conversations are sent, and
 * `, at most <n> calls per pass` (`SUMMARIZER_MAX_CALLS_PER_PASS`: what a pass may spend). Never
 * the path, credentials in the URL or the API key.
 */
export function startupSummarizerLine(summarizer: Summarizer): string {
  const { kind, model } = summarizer.identity;
  if (!(summarizer instanceof OpenAiSummarizer)) return `summarizer: ${kind} (${model})`;
  return `summarizer: ${kind} (${model} at ${new URL(summarizer.settings.baseURL).host}, at most ${summarizer.settings.maxCallsPerPass} calls per pass)`;
}

/**
 * The NATS line (with `NATS_URL`): the subjects of commands, results and decisions, and the servers
 * with their credentials masked (`withoutCredentials`, as in every message naming a server).
 */
export function startupNatsLine(config: Pick<ServiceConfig, 'natsUrl' | 'natsPrefix'>): string {
  const p = config.natsPrefix;
  return `NATS: commands on ${p}.commands.>, results on ${p}.results.>, decisions on ${p}.decisions.> (${natsServersShown(config.natsUrl ?? '')})`;
}

/** Host names of every interface (IPv4's and IPv6's, as the WHATWG URL parser writes them): shown as `localhost`. */
const ALL_INTERFACES = new Set(['0.0.0.0', '[::]']);

/**
 * The service's base URL for the start-up lines (`listening on …`, `API docs: …/docs`): `HOST`
 * with `port` (the one bound), formatted by the WHATWG URL parser, an IPv6 address in brackets
 * (`http://[::1]:3000`); all interfaces (`0.0.0.0`, `::`) shown as `localhost`. No trailing slash.
 * An address with a zone is shown `http://[fe80::1%25eth0]:3000`.
 */
export function startupUrl(host: string, port: number): string {
  // A zone (`fe80::1%eth0`) is written `%25eth0` in a URL (RFC 6874), which the WHATWG parser does not take: shown as is.
  const written = `http://${isIPv6(host) ? `[${host.replace('%', '%25')}]` : host}:${port}`;
  if (!URL.canParse(written)) return written;
  const url = new URL(written);
  if (ALL_INTERFACES.has(url.hostname)) url.hostname = 'localhost';
  return url.origin;
}
