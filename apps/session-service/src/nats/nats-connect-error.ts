/**
 * Why the NATS transport could not connect (or set up its streams), naming `NATS_URL` and the
 * address, and whether that is the server being unavailable (waited for) or a misconfiguration
 * (fatal at start).
 */
import { errors as natsErrors } from '@nats-io/transport-node';
import { configurationRefusalMessage } from '@lib/session';
import { ConfigurationError } from '../config/configuration-error';

/** Socket error codes of a server that is down, restarting or not reachable yet (nothing to fix in the configuration). */
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'EPIPE']);

interface ConnectFailure {
  code?: string;
  message?: string;
  cause?: { code?: string; message?: string; address?: string; port?: number };
}

/**
 * True when `err` (from connecting to NATS) says the server is not there now — the connection
 * was refused, reset or timed out, the host is unreachable — which the service waits out
 * (`NatsTransport`); false for everything the configuration or the server's set-up must fix (a
 * host that does not resolve, credentials refused, TLS required but not offered, a certificate
 * not trusted, …), which ends the start.
 */
export function isNatsServerUnavailable(err: unknown): boolean {
  const e = err as ConnectFailure;
  if (err instanceof natsErrors.TimeoutError) return true;
  return UNAVAILABLE_CODES.has(e?.code ?? '') || UNAVAILABLE_CODES.has(e?.cause?.code ?? '');
}

/** `code` looks like one of Node's TLS/certificate errors (`DEPTH_ZERO_SELF_SIGNED_CERT`, `ERR_TLS_CERT_ALTNAME_INVALID`, …). */
function isTlsCode(code: string | undefined): boolean {
  return code !== undefined && /CERT|TLS|SSL/.test(code);
}

/**
 * `err` (from connecting to `natsUrl`, comma-separated servers, or from setting up the streams
 * on the connection) as an error naming `NATS_URL` (its passwords masked) and what to do:
 * - a host name that does not resolve (`ENOTFOUND`) or a server list the client cannot parse: a
 *   {@link ConfigurationError} (exit code 2: fix the variable);
 * - the server refused the credentials (`Authorization Violation`): an `Error` naming
 *   `NATS_USER`/`NATS_PASSWORD`;
 * - `tls://` against a server that does not offer TLS, or a TLS handshake that failed (a
 *   certificate not trusted): an `Error` saying so;
 * - the server unavailable ({@link isNatsServerUnavailable}: refused, timed out): an `Error`
 *   naming the address and saying that the service retries (the transport logs it and waits);
 * - anything else: an `Error` naming `NATS_URL` with the client's message.
 */
export function natsConnectError(err: unknown, natsUrl: string): Error {
  const e = err as ConnectFailure;
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
  // Not configuration errors in the exit-code sense (the server's side may be what to fix), but in the same shape.
  const refusal = (problem: string, fix: string) =>
    new Error(configurationRefusalMessage({ variable: 'NATS_URL', value: natsUrl, mask: 'url-list', problem, fix }));
  if (err instanceof natsErrors.AuthorizationError || err instanceof natsErrors.UserAuthenticationExpiredError) {
    return refusal(
      `the server refused the credentials (${message})`,
      "fix NATS_USER and NATS_PASSWORD (or the user in NATS_URL) to match a user of the server's authorization or accounts block",
    );
  }
  if (/does not support 'tls'/.test(message)) {
    return refusal(
      'the server does not offer TLS, and tls:// requires it (the service never connects in plain text then)',
      'enable TLS on the NATS server, or use nats:// to connect without TLS',
    );
  }
  if (isTlsCode(e?.code) || isTlsCode(cause?.code)) {
    return refusal(
      `the TLS handshake failed (${message})`,
      "make the server's certificate trusted (e.g. NODE_EXTRA_CA_CERTS=<its CA file>) and valid for the host in NATS_URL",
    );
  }
  if (err instanceof natsErrors.TimeoutError) {
    return refusal(
      'no server answered as a NATS server in time (one that accepts the connection and then says nothing is frozen, or is another service: a wrong port)',
      'check that NATS_URL names the client port of a running NATS server (4222 by default); the service retries until one answers',
    );
  }
  if (isNatsServerUnavailable(err)) {
    const problem = cause?.code === 'ECONNREFUSED' ? `connection refused${address ? ` by ${address}` : ''}` : `cannot connect (${message})`;
    return refusal(problem, 'start the NATS server (or fix NATS_URL); the service retries until it answers');
  }
  return refusal(`cannot connect (${message})`, 'check that NATS_URL points at a NATS server and that it accepts this service');
}

/**
 * `err` (from creating the streams and the consumer on a connection to `natsUrl`) as the error
 * that ends the start: JetStream not enabled for the connection's account (no JetStream on the
 * server, or none for the user's account) as an `Error` naming `NATS_URL` and the server setting;
 * anything else (e.g. a stream name taken with other subjects) as it is.
 */
export function natsSetUpError(err: unknown, natsUrl: string): Error {
  // The client's JetStreamNotEnabled (not exported by @nats-io/jetstream): also for an account without JetStream.
  if ((err as Error)?.name !== 'JetStreamNotEnabled') return err as Error;
  return new Error(
    configurationRefusalMessage({
      variable: 'NATS_URL',
      value: natsUrl,
      mask: 'url-list',
      problem: `JetStream is not enabled for this connection (${(err as Error).message})`,
      fix: "enable JetStream on the server (nats-server -js, or a jetstream block in its configuration) and for the user's account (jetstream: enabled in its accounts block, see deploy/nats/nats-server.conf)",
    }),
  );
}
