/**
 * The `application_name` of a service's connections to PostgreSQL (its claims' connection: this and
 * ` claims`), as `pg_stat_activity` shows them: how `npm run copy-store` finds a service using its target.
 */
export const SERVICE_APPLICATION_NAME = 'session-memory-compaction';

/** The `application_name` of `npm run copy-store`'s target connections: the service's name, `copy-store` and the process's pid (its own, told from another copy's). */
export function copyStoreApplicationName(pid: number = process.pid): string {
  return `${SERVICE_APPLICATION_NAME} copy-store ${pid}`;
}
