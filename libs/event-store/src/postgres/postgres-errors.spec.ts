import { EventStoreUnavailableError } from '../errors';
import { isPostgresUnavailable, mapPostgresError } from './postgres-errors';

describe('mapPostgresError', () => {
  it('takes SSL asked for of a server without it for the store unavailable, described by the caller (the service names DATABASE_URL and the fix)', () => {
    const driver = new Error('The server does not support SSL connections');
    expect(isPostgresUnavailable(driver)).toBe(true);
    const mapped = mapPostgresError(driver, () => 'PostgreSQL event store: DATABASE_URL=…: the server does not support SSL connections: …');
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
    expect((mapped as Error).message).toBe('PostgreSQL event store: DATABASE_URL=…: the server does not support SSL connections: …');
  });

  it('returns a programming error unchanged', () => {
    const bug = new RangeError('bug');
    expect(mapPostgresError(bug)).toBe(bug);
  });
});
