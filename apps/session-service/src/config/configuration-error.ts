/**
 * A configuration the service refuses to start with. `main.ts` (and the CLI tools) print its
 * message as `configuration error: <message>` on stderr and exit with code 2; messages have the
 * shape `NAME=<value>: what to fix`, naming the variable (never a secret: keys and passwords are
 * left out or masked).
 */
import { SummarizerConfigError } from '@lib/session';

/** See the module documentation. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';
}

/**
 * `err` as a {@link ConfigurationError} when it is one or a refused summarizer setting
 * (`SummarizerConfigError`, whose message names the variable); `undefined` for any other error.
 */
export function asConfigurationError(err: unknown): ConfigurationError | undefined {
  if (err instanceof ConfigurationError) return err;
  if (err instanceof SummarizerConfigError) return new ConfigurationError(err.message);
  return undefined;
}

/**
 * `raw` (a URL or connection string) with the secret of its user part masked, for messages that
 * name a server address: `user:password@` becomes `user:***@`, a lone `token@` becomes `***@`.
 * Anything without `scheme://` is returned unchanged.
 */
export function withoutPassword(raw: string): string {
  return raw.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/@]*)@/i, (_all, scheme: string, user: string) => {
    const colon = user.indexOf(':');
    return `${scheme}${colon >= 0 ? `${user.slice(0, colon)}:***` : '***'}@`;
  });
}
