import { EventStoreUnavailableError } from '../errors';
import {
  connectFailure,
  isClosedBeforePostgresAnswer,
  isPostgresUnavailable,
  mapPostgresError,
  postgresCauseOf,
  postgresConnectionCauseOf,
  postgresUnavailableMessage,
} from './postgres-errors';

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

  // Newcomer ncpg73 F4: 856 appends ended by pg_terminate_backend answered "PostgreSQL is shutting down" while it ran on.
  it('says a connection ended by the server (57P01: a shutdown, or pg_terminate_backend) is that, not only a shutdown', () => {
    expect(postgresCauseOf('57P01')).toBe('the server ended the connection (shut down, or an administrator terminated it) (SQLSTATE 57P01)');
  });

  // Newcomer ncpg73 F1: a privilege the role lacks answered 500 internal "may be retried", for ever.
  it('takes a privilege denied to the role (SQLSTATE 42501) for the store unavailable, saying what to grant', () => {
    const driver = Object.assign(new Error('permission denied for schema public'), { code: '42501' });
    const mapped = mapPostgresError(driver);
    expect(mapped).toBeInstanceOf(EventStoreUnavailableError);
    expect((mapped as EventStoreUnavailableError).mayHaveBeenWritten).toBe(false);
    expect((mapped as Error).message).toMatch(
      /^PostgreSQL event store: permission denied for schema public \(SQLSTATE 42501\): the role needs CREATE on the schema .*GRANT CREATE ON SCHEMA public TO <role>/,
    );
    expect(postgresCauseOf('42501')).toMatch(
      /^PostgreSQL denied DATABASE_URL's role a privilege .*CREATE on the schema .*SELECT, INSERT, UPDATE and DELETE on es_events, es_streams, es_head and es_schema.*\(SQLSTATE 42501\)$/,
    );
  });

  // Newcomer ncpg73 F2: the driver's "client password must be a string" answered 500 internal.
  it('takes no password for a server asking for one (the driver’s SCRAM error) for the store unavailable, saying so', () => {
    const driver = new Error('SASL: SCRAM-SERVER-FIRST-MESSAGE: client password must be a string');
    expect(mapPostgresError(driver)).toBeInstanceOf(EventStoreUnavailableError);
    expect(postgresUnavailableMessage(driver)).toMatch(/the server asks for a password and the connection string carries none/);
    expect(postgresConnectionCauseOf(driver)).toMatch(/^PostgreSQL asks for a password and DATABASE_URL carries none/);
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
