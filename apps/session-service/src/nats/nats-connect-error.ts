/**
 * Why the NATS transport could not connect at start-up, naming `NATS_URL` and the address.
 */
import { withoutCredentials } from '@lib/event-store';
import { configurationRefusalMessage } from '@lib/session';
import { ConfigurationError } from '../config/configuration-error';

/** `natsUrl` (comma-separated servers) as log lines and messages show it: each server trimmed, credentials masked ({@link withoutCredentials}). */
export function natsServersShown(natsUrl: string): string {
  return withoutCredentials(
    natsUrl
      .split(',')
      .map((s) => s.trim())
      .join(','),
    { list: true },
  );
}

/**
 * `err` (from connecting to `natsUrl`, comma-separated servers) as an error naming `NATS_URL` (its
 * passwords masked) and what to do:
 * - a host name that does not resolve (`ENOTFOUND`) or a server list the client cannot parse: a
 *   {@link ConfigurationError} (exit code 2: fix the variable);
 * - a server that refused or did not answer (connection refused, timeout): an `Error` naming the
 *   address (exit code 1: the server is unavailable; start it, then the service);
 * - anything else: an `Error` naming `NATS_URL` with the client's message.
 */
export function natsConnectError(err: unknown, natsUrl: string): Error {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string; address?: string; port?: number } };
  const message = String(e?.message ?? err);
  if (e?.code === 'ENOTFOUND' || e?.code === 'EAI_AGAIN') {
    const host = /(?:ENOTFOUND|EAI_AGAIN) (\S+)/.exec(message)?.[1] ?? '?';
    return new ConfigurationError({
      variable: 'NATS_URL',
      value: natsUrl,
      mask: 'url-list',
      problem: `host ${host} not found (${e.code})`,
      fix: 'use nats://host:4222 with a host name or address that resolves',
    });
  }
  if (e?.code === 'ERR_INVALID_URL' || err instanceof TypeError) {
    return new ConfigurationError({
      variable: 'NATS_URL',
      value: natsUrl,
      mask: 'url-list',
      problem: `not a server list (${message})`,
      fix: 'use comma-separated nats://host:4222 URLs',
    });
  }
  const cause = e?.cause;
  const address = cause?.address !== undefined ? `${cause.address}:${cause.port}` : /(\d[\d.:]*:\d+|\[[^\]]+\]:\d+)\s*$/.exec(cause?.message ?? '')?.[1];
  // Not configuration errors (the server is unavailable), but in the same shape.
  const unavailable = (problem: string, fix: string) =>
    new Error(configurationRefusalMessage({ variable: 'NATS_URL', value: natsUrl, mask: 'url-list', problem, fix }));
  if (cause?.code === 'ECONNREFUSED' || /connection refused/i.test(message)) {
    return unavailable(`connection refused${address ? ` by ${address}` : ''}`, 'start the NATS server (or fix NATS_URL), then the service');
  }
  return unavailable(`cannot connect (${message})`, 'check that the NATS server is up and NATS_URL points at it');
}
