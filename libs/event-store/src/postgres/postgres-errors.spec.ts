import { EventStoreUnavailableError } from '../errors';
import { isPostgresUnavailable, mapPostgresError, postgresCauseOf } from './postgres-errors';

describe('mapPostgresError', () => {
  it('takes SSL asked for of a server without it for the store unavailable, described by the caller (the service names DATABASE_URL and the fix)', () => {
    const driver = new Error('The server does not support SSL connections');
    expect(isPostgresUnavailable(driver)).toBe(true);
    const mapped = mapPostgresError(driver, () => 'PostgreSQL event store: DATABASE_URL=…: the server does not support SSL connections: …');
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
    expect((mapped as Error).message).toBe('PostgreSQL event store: DATABASE_URL=…: the server does not support SSL connections: …');
  });

  // Newcomer ncmigrate (F3): the database dropped and created again under a running replica made every write 500 internal ("may be retried"), for ever.
  it.each([
    ['42P01', 'relation "es_streams" does not exist'],
    ['42883', 'function es_append_v2(text, text, uuid[], text[], text[], text[], uuid[]) does not exist'],
    ['3F000', 'schema "events" does not exist'],
  ])("takes the service's own objects missing (SQLSTATE %s) for the store unavailable, saying why and what to do", (code, message) => {
    const driver = Object.assign(new Error(message), { code });
    const mapped = mapPostgresError(driver, () => 'not this');
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
    expect((mapped as EventStoreUnavailableError).mayHaveBeenWritten).toBe(false);
    expect((mapped as Error).message).toContain(message);
    expect((mapped as Error).message).toMatch(/the service's tables are missing .*dropped and created again, or restored.*restart the replica/);
    expect(postgresCauseOf(code)).toMatch(/missing from its PostgreSQL database/);
  });

  it("leaves a missing object that is not the service's unchanged (a bug, not an outage)", () => {
    const driver = Object.assign(new Error('relation "users" does not exist'), { code: '42P01' });
    expect(mapPostgresError(driver)).toBe(driver);
  });

  it('returns a programming error unchanged', () => {
    const bug = new RangeError('bug');
    expect(mapPostgresError(bug)).toBe(bug);
  });
});
