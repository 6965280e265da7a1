/**
 * Environment variables that look like a setting of the service but are not one (README,
 * Configuration): a name that is a near miss of a documented variable (`DATA_DIRR`,
 * `SUMARIZER_MODEL`, `data_dir`) is told in one `warn` line at start, `DATA_DIRR is not a setting of
 * the service: did you mean DATA_DIR?`, instead of being dropped without a word (the service ran on
 * `./data` with `DATA_DIRR=/srv/data` set, newcomer ncoperator F9). Only near misses: the rest of an
 * environment (`PATH`, `HOME`, `NODE_ENV`, `npm_*`, another program's settings) is none of the
 * service's business and gets no line. Not refused, as ignored settings are not (`ignored-settings.ts`).
 */
import { nearMissOf } from '@lib/compaction';
import { ENVIRONMENT_VARIABLES } from './command-line';
import { REBUILD_NUMBER_VARIABLES } from './rebuild-number-variables';

/** The documented variables (`--help`, the README table): the names a near miss is compared with. */
const SETTINGS: readonly string[] = ENVIRONMENT_VARIABLES.map((v) => v.name);

/** Names that are settings of the service's tools (`npm run rebuild-read-models`'s own), which an environment shared with them may hold: never a near miss. */
const TOOL_SETTINGS: ReadonlySet<string> = new Set(Object.keys(REBUILD_NUMBER_VARIABLES));

/**
 * The lines, one per variable set in `env` (in `env`'s order) whose name is not a setting of the
 * service but a near miss of one (`nearMissOf`: letter case, or one or two edits), e.g.
 * `DATA_DIRR is not a setting of the service: did you mean DATA_DIR?`; empty when there is none.
 * Names only: a value (perhaps a secret) is never quoted. `settings` defaults to the documented variables.
 */
export function misspelledSettingLines(env: NodeJS.ProcessEnv, settings: readonly string[] = SETTINGS): string[] {
  const known = new Set(settings);
  return Object.keys(env).flatMap((name) => {
    if (env[name] === undefined || known.has(name) || TOOL_SETTINGS.has(name)) return [];
    const meant = nearMissOf(name, settings);
    return meant === undefined ? [] : [`${name} is not a setting of the service: did you mean ${meant}?`];
  });
}
