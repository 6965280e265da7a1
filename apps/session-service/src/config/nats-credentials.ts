/**
 * The credentials the service sends to NATS, and the servers it connects to: `NATS_URL`'s
 * servers without their user part, and the credentials written in `NATS_URL`
 * (`nats://user:password@host:4222`, or a lone token, `nats://token@host:4222`) or given as
 * `NATS_USER` / `NATS_PASSWORD`. The NATS client ignores a user part in a server URL (it sends
 * only its `user`, `pass` and `token` options), so credentials written in `NATS_URL` were never
 * sent and the server refused the connection. The user part is percent-decoded
 * (`p%40ss` is `p@ss`), as in any URL.
 *
 * Refused at start, by name ({@link ConfigurationError}), rather than guessed:
 * - credentials both in `NATS_URL` and in `NATS_USER` / `NATS_PASSWORD` (which would win is not
 *   obvious from either place);
 * - servers of a list with different credentials: the connection sends one set to every server
 *   (servers without a user part get the same set);
 * - a user part that is not valid percent-encoding, or a password with no user (`:pw@host`).
 */
import { urlParts } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';

/** The client's credential options: a user and password, a token, or none. */
export type NatsCredentials = { user: string; pass?: string } | { token: string } | Record<string, never>;

/** What the NATS client connects with: the servers (`NATS_URL`'s, trimmed, without user parts) and the credentials ({@link natsConnectionTarget}). */
export interface NatsConnectionTarget {
  servers: string[];
  credentials: NatsCredentials;
}

/** `NATS_USER` and `NATS_PASSWORD` (unset or empty: undefined). */
export interface NatsUserVariables {
  natsUser?: string;
  natsPassword?: string;
}

/** A refusal of `natsUrl`, its credentials masked. */
function refused(natsUrl: string, problem: string, fix: string): ConfigurationError {
  return new ConfigurationError({ variable: 'NATS_URL', value: natsUrl, mask: 'url-list', problem, fix });
}

/** The credentials of one server's user part (`user:password` or a lone token), percent-decoded; `server`: its 1-based place in the list, for messages. */
function credentialsOf(userInfo: string, natsUrl: string, server: string): NatsCredentials {
  let decoded: string[];
  const colon = userInfo.indexOf(':');
  const parts = colon < 0 ? [userInfo] : [userInfo.slice(0, colon), userInfo.slice(colon + 1)];
  try {
    decoded = parts.map((part) => decodeURIComponent(part));
  } catch {
    throw refused(natsUrl, `the credentials of ${server} are not valid percent-encoding`, 'write a % in a user, password or token as %25');
  }
  if (decoded[0] === '')
    throw refused(natsUrl, `${server} has credentials without a user or token before the @`, 'use nats://user:password@host:4222 or nats://token@host:4222');
  return decoded.length === 1 ? { token: decoded[0] } : { user: decoded[0], pass: decoded[1] };
}

/** True when two credential sets are the same. */
function sameCredentials(a: NatsCredentials, b: NatsCredentials): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The servers and credentials to connect to `natsUrl` (comma-separated servers, as
 * `parseNatsUrl` accepted it) with: each server trimmed and without its user part, and the
 * credentials of the user parts (`user:password` → `{ user, pass }`, a lone `token` →
 * `{ token }`, percent-decoded), else `NATS_USER` / `NATS_PASSWORD` (`{ user, pass }`, no
 * password when it is unset), else none. Pure: the same answer for the configuration check at
 * start and for the connection.
 * @throws ConfigurationError naming `NATS_URL` (credentials masked) when it carries credentials and
 *   `NATS_USER` or `NATS_PASSWORD` is set too, when its servers carry different credentials, or when
 *   a user part is not valid percent-encoding or has no user.
 */
export function natsConnectionTarget(natsUrl: string, variables: NatsUserVariables = {}): NatsConnectionTarget {
  const entries = natsUrl.split(',').map((entry, i, all) => ({ parts: urlParts(entry.trim()), name: all.length > 1 ? `server ${i + 1}` : 'the server' }));
  const servers = entries.map(({ parts }) => `${parts.scheme}${parts.rest}`);
  let fromUrl: { credentials: NatsCredentials; name: string } | undefined;
  for (const { parts, name } of entries) {
    if (parts.userInfo === undefined) continue;
    const credentials = credentialsOf(parts.userInfo, natsUrl, name);
    if (fromUrl && !sameCredentials(fromUrl.credentials, credentials))
      throw refused(
        natsUrl,
        `${fromUrl.name} and ${name} carry different credentials, but the connection sends one set to every server`,
        'write the same credentials on every server (or on one only), or give them once as NATS_USER and NATS_PASSWORD',
      );
    fromUrl ??= { credentials, name };
  }
  if (fromUrl && (variables.natsUser !== undefined || variables.natsPassword !== undefined))
    throw refused(
      natsUrl,
      `carries credentials and NATS_USER or NATS_PASSWORD is set too`,
      'give the credentials in one place: remove them from NATS_URL, or unset NATS_USER and NATS_PASSWORD',
    );
  if (fromUrl) return { servers, credentials: fromUrl.credentials };
  if (variables.natsUser !== undefined) return { servers, credentials: { user: variables.natsUser, pass: variables.natsPassword } };
  return { servers, credentials: {} };
}
