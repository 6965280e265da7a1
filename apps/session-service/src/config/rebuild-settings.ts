/**
 * The settings of `npm run rebuild-read-models` of its own (docs/commands.md), besides the service's
 * configuration it shares: read by the same rules as the service's variables (trimmed, a blank one
 * refused; a number an integer in plain decimal digits within its row's range), refused the same way
 * (`configuration error: NAME=value: …`, exit code 2).
 */
import { numberVariable } from './service-config';
import { trimmedEnvironment } from './environment-values';
import { REBUILD_NUMBER_VARIABLES } from './rebuild-number-variables';

export { REBUILD_NUMBER_VARIABLES };

/** What {@link loadRebuildSettings} reads. */
export interface RebuildSettings {
  /** Events per read of the log (`REBUILD_PAGE_SIZE`, default 1000, 1 to 100,000). */
  pageSize: number;
  /** Least time between two progress lines, ms (`REBUILD_PROGRESS_MS`, default 2000, 0 to 3,600,000). */
  progressMs: number;
}

/**
 * The rebuild's own settings from `env`.
 * @throws ConfigurationError naming the variable, e.g. `REBUILD_PAGE_SIZE=0: out of range: use a number of events per read of the log, an integer from 1 to 100000`.
 */
export function loadRebuildSettings(givenEnv: NodeJS.ProcessEnv = process.env): RebuildSettings {
  const rows = Object.entries(REBUILD_NUMBER_VARIABLES).map(([name, { fallback }]) => ({ name, fallback: String(fallback), meaning: '' }));
  const env = trimmedEnvironment(givenEnv, rows);
  return {
    pageSize: numberVariable(env, 'REBUILD_PAGE_SIZE', REBUILD_NUMBER_VARIABLES.REBUILD_PAGE_SIZE),
    progressMs: numberVariable(env, 'REBUILD_PROGRESS_MS', REBUILD_NUMBER_VARIABLES.REBUILD_PROGRESS_MS),
  };
}
