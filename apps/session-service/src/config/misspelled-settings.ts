/**
 * Environment variables that look like a setting of the service but are not one
 * (docs/configuration.md): a name that is a near miss of a documented variable (`DATA_DIRR`,
 * `SUMARIZER_MODEL`, `data_dir`) is told in one `warn` line at start, `DATA_DIRR is not a setting of
 * the service: did you mean DATA_DIR?`, instead of being dropped without a word (the service ran on
 * `./data` with `DATA_DIRR=/srv/data` set, newcomer ncoperator F9). Only near misses: the rest of an
 * environment (`PATH`, `HOME`, `NODE_ENV`, `npm_*`, another program's settings) is none of the
 * service's business and gets no line. Not refused, as ignored settings are not (`ignored-settings.ts`),
 * except a near miss of a security setting the configuration leaves unset ({@link SECURITY_SETTINGS}):
 * `API_KEY=secret` without `API_KEYS` started the service without authentication, its operator
 * believing it on (newcomer confighints F2); that start is refused ({@link refuseMisspelledSecuritySettings}).
 */
import { nearMissOf } from '@lib/compaction';
import type { RefusedValueMask } from '@lib/session';
import { ENVIRONMENT_VARIABLES } from './command-line';
import { ConfigurationError } from './configuration-error';
import { natsConnectionTarget } from './nats-credentials';
import { REBUILD_NUMBER_VARIABLES } from './rebuild-number-variables';
import type { ServiceConfig } from './service-config';

/** The documented variables (`--help`, the table of docs/configuration.md): the names a near miss is compared with. */
const SETTINGS: readonly string[] = ENVIRONMENT_VARIABLES.map((v) => v.name);

/** Names that are settings of the service's tools (`npm run rebuild-read-models`'s own), which an environment shared with them may hold: never a near miss. */
const TOOL_SETTINGS: ReadonlySet<string> = new Set(Object.keys(REBUILD_NUMBER_VARIABLES));

/** A name another well-known tool reads for one of the service's settings: the setting, and who reads it so. */
export interface OtherToolsName {
  readonly setting: string;
  readonly usedBy: string;
}

/**
 * Names other tools read for a setting of the service, too far from its name to be a near miss
 * (`nearMissOf`: one or two letters off), compared in any letter case: the model endpoint's,
 * `OPENAI_BASE_URL` (what openai-python 1.x and openai-node read). `OPENAI_API_BASE=http://local/v1`
 * with `OPENAI_API_KEY` set started without a word and sent conversations to api.openai.com
 * (newcomer ncops73 F2). Endpoint names only: a key read under another name (`AZURE_OPENAI_API_KEY`)
 * weakens nothing (without `OPENAI_API_KEY` nothing leaves the service), and a proxy (`OPENAI_PROXY`) is not an endpoint.
 */
export const OTHER_TOOLS_NAMES: Readonly<Record<string, OtherToolsName>> = {
  OPENAI_API_BASE: { setting: 'OPENAI_BASE_URL', usedBy: 'openai-python before 1.0, LangChain and LiteLLM' },
  OPENAI_API_BASE_URL: { setting: 'OPENAI_BASE_URL', usedBy: 'Open WebUI' },
  OPENAI_API_HOST: { setting: 'OPENAI_BASE_URL', usedBy: 'Chatbot UI and other chat front ends' },
  OPENAI_API_URL: { setting: 'OPENAI_BASE_URL', usedBy: 'some OpenAI clients' },
  OPENAI_API_ENDPOINT: { setting: 'OPENAI_BASE_URL', usedBy: 'some OpenAI clients' },
  OPENAI_ENDPOINT: { setting: 'OPENAI_BASE_URL', usedBy: 'some OpenAI clients' },
  OPENAI_BASE: { setting: 'OPENAI_BASE_URL', usedBy: 'some OpenAI clients' },
  OPENAI_URL: { setting: 'OPENAI_BASE_URL', usedBy: 'some OpenAI clients' },
  AZURE_OPENAI_ENDPOINT: { setting: 'OPENAI_BASE_URL', usedBy: "openai-python's AzureOpenAI client and LangChain's AzureChatOpenAI" },
};

/** The setting `name` is another tool's name for ({@link OTHER_TOOLS_NAMES}, any letter case), or undefined. */
export function otherToolsNameOf(name: string): OtherToolsName | undefined {
  return Object.hasOwn(OTHER_TOOLS_NAMES, name.toUpperCase()) ? OTHER_TOOLS_NAMES[name.toUpperCase()] : undefined;
}

/**
 * The lines, one per variable set in `env` (in `env`'s order) whose name is not a setting of the
 * service but a near miss of one (`nearMissOf`: letter case, or one or two edits; or the setting with its unit left out
 * or another, {@link unitSuffixMissOf}), e.g. `DATA_DIRR is not a setting of the service: did you mean DATA_DIR?`, or
 * another tool's name for one ({@link OTHER_TOOLS_NAMES}: `OPENAI_API_BASE is not a setting of the service: did you mean
 * OPENAI_BASE_URL (OPENAI_API_BASE is what openai-python before 1.0, … read)?`); empty when there is none.
 * Names only: a value (perhaps a secret) is never quoted. `settings` defaults to the documented variables.
 */
export function misspelledSettingLines(env: NodeJS.ProcessEnv, settings: readonly string[] = SETTINGS): string[] {
  const known = new Set(settings);
  return Object.keys(env).flatMap((name) => {
    if (env[name] === undefined || known.has(name) || TOOL_SETTINGS.has(name)) return [];
    const other = otherToolsNameOf(name);
    if (other !== undefined && known.has(other.setting))
      return [`${name} is not a setting of the service: did you mean ${other.setting} (${name} is what ${other.usedBy} read)?`];
    const meant = nearMissOf(name, settings);
    if (meant !== undefined) return [`${name} is not a setting of the service: did you mean ${meant}?`];
    const withUnit = unitSuffixMissOf(name, settings);
    return withUnit === undefined ? [] : [`${name} is not a setting of the service: did you mean ${withUnit} (its unit is in its name)?`];
  });
}

/** A unit at the end of a variable's name: milliseconds, seconds, bytes, megabytes. */
const UNIT_SUFFIX = /_(MS|MILLIS|MILLISECONDS|S|SEC|SECS|SECONDS|B|BYTES|KB|KIB|MB|MIB)$/i;

/**
 * The setting of `settings` whose name carries a unit (`SHUTDOWN_TIMEOUT_MS`, `MAX_BODY_BYTES`, `SESSION_CACHE_MAX_MB`) that
 * `name` is with that unit left out or another one (`SHUTDOWN_TIMEOUT`, `MAX_WAIT_SECONDS`, `max_body`), any letter case;
 * undefined when none. Three letters or more off, so no near miss of {@link misspelledSettingLines}'s first rule (newcomer
 * ncops67 F5: `SHUTDOWN_TIMEOUT=5000` started on the default without a word).
 */
function unitSuffixMissOf(name: string, settings: readonly string[]): string | undefined {
  const base = name.toUpperCase().replace(UNIT_SUFFIX, '');
  return settings.find((setting) => setting !== name && UNIT_SUFFIX.test(setting) && setting.replace(UNIT_SUFFIX, '') === base);
}

/** What {@link SECURITY_SETTINGS} look at: the configuration as loaded, and the environment (the summarizer's variables are read from it). */
export type SecurityContext = Pick<ServiceConfig, 'apiKeys' | 'natsUrl' | 'natsUser' | 'natsPassword'> & { env: NodeJS.ProcessEnv };

/** A setting whose absence weakens the service's security without a word, and when it does. */
export interface SecuritySetting {
  readonly name: string;
  /** Whether the setting is unset in `context` and the service then runs less safely. */
  readonly weakenedWithout: (context: SecurityContext) => boolean;
  /** What the service does without it, e.g. `starts without authentication (open development mode: …)`. */
  readonly without: string;
  /** How a refusal shows a near miss's value: a secret's is masked. */
  readonly mask: RefusedValueMask;
}

/** A variable set to something other than blank. */
const isSet = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name]?.trim() ?? '') !== '';

/** A NATS connection without credentials in `NATS_URL` (the variables then are the only ones). */
const natsUrlWithoutCredentials = ({ natsUrl }: SecurityContext): boolean =>
  natsUrl !== undefined && Object.keys(natsConnectionTarget(natsUrl).credentials).length === 0;

/**
 * The settings whose absence silently weakens security (of the Configuration table, checked one by
 * one: `ALLOWED_HOSTS` and `TRUST_PROXY` unset are the strictest, `RATE_LIMIT_PER_MINUTE` unset
 * keeps its limit): `API_KEYS` (unset: open development mode, no authentication); `NATS_USER` and
 * `NATS_PASSWORD` with `NATS_URL` set without credentials of its own (unset: the service connects
 * anonymously, into whatever account such clients share); `OPENAI_BASE_URL` with `OPENAI_API_KEY`
 * set (unset: conversations go to api.openai.com, not to the endpoint meant, e.g. a company gateway).
 */
export const SECURITY_SETTINGS: readonly SecuritySetting[] = [
  {
    name: 'API_KEYS',
    weakenedWithout: ({ apiKeys }) => apiKeys.size === 0,
    without: 'starts without authentication (open development mode: every request is tenant "default")',
    mask: 'secret',
  },
  {
    name: 'NATS_USER',
    weakenedWithout: (c) => c.natsUser === undefined && natsUrlWithoutCredentials(c),
    without: 'connects to NATS_URL without credentials',
    mask: 'secret',
  },
  {
    name: 'NATS_PASSWORD',
    weakenedWithout: (c) => c.natsPassword === undefined && natsUrlWithoutCredentials(c),
    without: `connects to NATS_URL without a password`,
    mask: 'secret',
  },
  {
    name: 'OPENAI_BASE_URL',
    weakenedWithout: ({ env }) => !isSet(env, 'OPENAI_BASE_URL') && isSet(env, 'OPENAI_API_KEY'),
    without: 'sends conversations to summarize to the default endpoint, https://api.openai.com/v1, with OPENAI_API_KEY',
    mask: 'endpoint-url',
  },
];

/**
 * Refuses to start when a variable set (not blank) in `context.env` is no setting of the service
 * but a near miss of a security setting, or another tool's name for one ({@link OTHER_TOOLS_NAMES}:
 * `OPENAI_API_BASE`), ({@link SECURITY_SETTINGS}; the one {@link misspelledSettingLines}
 * would name) that the configuration leaves unset, so that the service would run less safely than its
 * operator believes: `API_KEY=secret` without `API_KEYS`. Other near misses stay warnings. Called by
 * `main.ts` after the configuration loads (the service's start only: the CLI tools serve no request).
 * @throws ConfigurationError `API_KEY=***: not a setting of the service, but a near miss of API_KEYS,
 *   which is unset: the service starts without authentication (…): rename API_KEY to API_KEYS, or
 *   unset API_KEY to run so on purpose`, for the first such variable in `env`'s order (its value masked); for another
 *   tool's name, `OPENAI_API_BASE=…: not a setting of the service, but the name openai-python before 1.0, … read for
 *   OPENAI_BASE_URL, which is unset: …: set OPENAI_BASE_URL to the endpoint meant (the service does not read
 *   OPENAI_API_BASE), or unset OPENAI_API_BASE to run so on purpose`.
 */
export function refuseMisspelledSecuritySettings(context: SecurityContext, settings: readonly string[] = SETTINGS): void {
  const known = new Set(settings);
  for (const name of Object.keys(context.env)) {
    if (!isSet(context.env, name) || known.has(name) || TOOL_SETTINGS.has(name)) continue;
    const other = otherToolsNameOf(name);
    const meant = other?.setting ?? nearMissOf(name, settings);
    const setting = SECURITY_SETTINGS.find((s) => s.name === meant);
    if (setting === undefined || !setting.weakenedWithout(context)) continue;
    throw new ConfigurationError({
      variable: name,
      value: context.env[name]!,
      mask: setting.mask,
      problem: `not a setting of the service, but ${other ? `the name ${other.usedBy} read for ${setting.name}` : `a near miss of ${setting.name}`}, which is unset: the service ${setting.without}`,
      fix: other
        ? `set ${setting.name} to the endpoint meant (the service does not read ${name}), or unset ${name} to run so on purpose`
        : `rename ${name} to ${setting.name}, or unset ${name} to run so on purpose`,
    });
  }
}
