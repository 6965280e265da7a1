/**
 * What the service says when PostgreSQL denies the role `DATABASE_URL` logs in as a privilege it
 * needs (SQLSTATE 42501: `permission denied for schema public`, the usual first start on
 * PostgreSQL 15 and later with a role that does not own the database; `permission denied for table
 * es_schema` or `must be owner of table es_events`, tables another role created): the role's name
 * (never its password), the server's words, and the privileges it needs
 * (`postgresPrivilegesNeeded`, docs/stores.md). At start a {@link ConfigurationError} (exit code 2:
 * only a grant fixes it); while running, the store's unavailable message (`databaseUrlUnavailable`).
 * Newcomer ncpg73 F1: writes answered 500 `internal` "may be retried", readiness a bare "unavailable".
 */
import { INSUFFICIENT_PRIVILEGE, postgresPrivilegesNeeded } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';

/** A role name as it goes into a SQL statement: bare when it is a plain lower-case identifier, else double-quoted. */
function sqlRole(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

/**
 * The role `databaseUrl` logs in as, as it goes into a SQL statement: the URL's user (percent-decoded), else `PGUSER`
 * (`env`), else the placeholder `<role>` (the driver then takes the operating system's user).
 */
export function databaseUrlRole(databaseUrl: string, env: NodeJS.ProcessEnv = process.env): string {
  let user = '';
  try {
    user = decodeURIComponent(new URL(databaseUrl).username);
  } catch {
    // not a URL: the start refused it before
  }
  const name = user || env.PGUSER || '';
  return name ? sqlRole(name) : '<role>';
}

/**
 * The problem and the fix of a privilege refused (`error`: the driver's error, SQLSTATE 42501) to the role of
 * `databaseUrl`, e.g. problem `PostgreSQL denied the role app a privilege the service needs (permission denied for
 * schema public, SQLSTATE 42501)`, fix {@link postgresPrivilegesNeeded}'s text for that role.
 */
export function privilegeProblem(error: unknown, databaseUrl: string): { problem: string; fix: string } {
  const role = databaseUrlRole(databaseUrl);
  return {
    problem: `PostgreSQL denied the role ${role} a privilege the service needs (${(error as Error).message}, SQLSTATE ${INSUFFICIENT_PRIVILEGE})`,
    fix: `grant it what it needs: ${postgresPrivilegesNeeded(role)}`,
  };
}

/** The start's refusal of a role denied a privilege (see the module documentation); `databaseUrl` as configured. */
export function databasePrivilegeRefusal(error: unknown, databaseUrl: string): ConfigurationError {
  const { problem, fix } = privilegeProblem(error, databaseUrl);
  return new ConfigurationError({
    variable: 'DATABASE_URL',
    value: databaseUrl,
    mask: 'url',
    problem: `${problem}; nothing was created or changed in the database`,
    fix: `${fix}; then start the service again (or point DATABASE_URL at a role that has them)`,
  });
}
