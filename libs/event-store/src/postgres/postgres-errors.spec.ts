import { EventStoreUnavailableError } from '../errors';
import { connectFailure, isClosedBeforePostgresAnswer, isPostgresUnavailable, mapPostgresError, postgresCauseOf } from './postgres-errors';

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

  // Newcomer ncops61: the database dropped under a running replica answered /health/ready and every request a bare "unavailable".
  it.each([
    ['3D000', 'database "events" does not exist', /database does not exist/],
    ['28P01', 'password authentication failed for user "app"', /refused the password of DATABASE_URL/],
    ['28000', 'no pg_hba.conf entry for host "10.0.0.7", user "app", database "events"', /refused the connection for DATABASE_URL's user or this host/],
  ])('takes a login PostgreSQL refuses (SQLSTATE %s) for the store unavailable, with a cause a client may be shown', (code, message, cause) => {
    const driver = Object.assign(new Error(message), { code });
    expect(mapPostgresError(driver, () => 'described')).toBeInstanceOf(EventStoreUnavailableError);
    expect(postgresCauseOf(code)).toMatch(cause);
    expect(postgresCauseOf(code)).toContain(`(SQLSTATE ${code})`);
    // no server detail (user, host, database names) in what a client is shown
    expect(postgresCauseOf(code)).not.toMatch(/events|app|10\.0\.0\.7/);
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

describe('isClosedBeforePostgresAnswer (ncoperator F2: a DATABASE_URL naming a server that is not PostgreSQL)', () => {
  it('takes a connection closed or reset while being opened for one, and nothing else', () => {
    expect(isClosedBeforePostgresAnswer(connectFailure(new Error('Connection terminated unexpectedly')))).toBe(true);
    expect(isClosedBeforePostgresAnswer(connectFailure(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })))).toBe(true);
    // The same errors of a connection already open: PostgreSQL (or the network) ended it mid-session.
    expect(isClosedBeforePostgresAnswer(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(isClosedBeforePostgresAnswer(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    // PostgreSQL's own answers while connecting, and other failures to connect.
    expect(isClosedBeforePostgresAnswer(connectFailure(Object.assign(new Error('the database system is shutting down'), { code: '57P03' })))).toBe(false);
    expect(isClosedBeforePostgresAnswer(connectFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' })))).toBe(false);
    expect(isClosedBeforePostgresAnswer(connectFailure(new Error('Connection terminated due to connection timeout')))).toBe(false);
    expect(isClosedBeforePostgresAnswer(connectFailure(null))).toBe(false);
  });
});
