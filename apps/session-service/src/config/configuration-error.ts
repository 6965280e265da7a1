/**
 * A configuration the service refuses to start with. `main.ts` (and the CLI tools) print its
 * message as `configuration error: <message>` on stderr and exit with code 2. Its message is
 * `configurationRefusalMessage` of its refusal, the one shape of every refusal:
 * `NAME=<value as given, credentials masked>: <what is wrong>: <what to fix>`.
 */
import { configurationRefusalMessage, SummarizerConfigError, type ConfigurationRefusal } from '@lib/session';

/** See the module documentation. */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';

  /** `refusal`: the variable, its value (with `mask` for secrets), what is wrong and what to fix. */
  constructor(readonly refusal: ConfigurationRefusal) {
    super(configurationRefusalMessage(refusal));
  }
}

/**
 * `err` as a {@link ConfigurationError} when it is one or a refused summarizer setting
 * (`SummarizerConfigError`, the same refusal); `undefined` for any other error.
 */
export function asConfigurationError(err: unknown): ConfigurationError | undefined {
  if (err instanceof ConfigurationError) return err;
  if (err instanceof SummarizerConfigError) return new ConfigurationError(err.refusal);
  return undefined;
}
