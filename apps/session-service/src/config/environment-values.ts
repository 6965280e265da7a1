/**
 * The one rule every environment variable of the service follows before its own parsing
 * (docs/configuration.md): white space around a value is not part of it (trimmed), and a variable set to an
 * empty or white-space-only value stops the start-up (`NAME="  ": set but blank: unset it for the default …`),
 * because a blank value is most often a secret or setting a deployment template failed to render
 * (an empty `DATABASE_URL` gave each replica its own embedded log). The exceptions are the
 * variables whose empty value docs/configuration.md documents as meaning unset ({@link EMPTY_MEANS_UNSET}).
 */
import { ConfigurationError } from './configuration-error';
import { ENVIRONMENT_VARIABLES, type EnvironmentVariable } from './command-line';

/**
 * Variables whose empty (or blank) value counts as unset, as docs/configuration.md documents (`emptyMeansUnset`
 * rows of {@link ENVIRONMENT_VARIABLES}): the summarizer's endpoint and key, which a template passes
 * through empty to keep the extractive summarizer, and `BUILD_COMMIT`, which an image built without
 * its `--build-arg` holds empty.
 */
export const EMPTY_MEANS_UNSET: ReadonlySet<string> = new Set(ENVIRONMENT_VARIABLES.filter((v) => v.emptyMeansUnset).map((v) => v.name));

/**
 * `env` with every documented variable ({@link ENVIRONMENT_VARIABLES}, the `--help` list) trimmed of
 * surrounding white space; a blank one of {@link EMPTY_MEANS_UNSET} removed (unset); other
 * variables passed as they are. `names` overrides the list of variables (e.g. a command's own).
 * @throws ConfigurationError `NAME="<value>": set but blank: unset it for the default (…), or give it a value`
 *   for the first documented variable set to an empty or white-space-only value.
 */
export function trimmedEnvironment(env: NodeJS.ProcessEnv, names: readonly EnvironmentVariable[] = ENVIRONMENT_VARIABLES): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = { ...env };
  for (const { name, fallback, unset, emptyMeansUnset } of names) {
    const raw = env[name];
    if (raw === undefined) continue;
    const value = raw.trim();
    if (value !== '') out[name] = value;
    else if (emptyMeansUnset) delete out[name];
    else
      throw new ConfigurationError({
        variable: name,
        value: raw,
        problem: 'set but blank',
        fix: `unset it for the default (${unset ?? fallback}), or give it a value`,
      });
  }
  return out;
}
