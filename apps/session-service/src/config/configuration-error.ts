/**
 * A configuration the service refuses to start with. `main.ts` (and the CLI tools) print its
 * message as `configuration error: <message>` on stderr and exit with code 2; messages have the
 * shape `NAME=<value>: what to fix`, naming the variable (never a secret: keys and passwords are
 * left out or masked; URLs go through `withoutCredentials` of `@lib/event-store`).
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
