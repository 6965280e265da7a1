import { eventStoreConfig, eventStoreKind } from './event-store-config';
import { loadServiceConfig } from './service-config';

describe('event store selection from the environment', () => {
  it('SQLite when nothing is set, PostgreSQL with DATABASE_URL, KurrentDB with its connection string', () => {
    expect(eventStoreKind(loadServiceConfig({}))).toBe('sqlite');
    const pg = loadServiceConfig({ DATABASE_URL: 'postgres://svc@db:5432/events', DATA_DIR: '/tmp/replica-1' });
    expect(eventStoreKind(pg)).toBe('postgres');
    expect(eventStoreConfig(pg)).toMatchObject({ postgresUrl: 'postgres://svc@db:5432/events', kurrentDbConnectionString: undefined });
    expect(eventStoreKind(loadServiceConfig({ DATABASE_URL: 'postgresql://db/events' }))).toBe('postgres');
    expect(eventStoreKind(loadServiceConfig({ KURRENTDB_CONNECTION_STRING: 'kurrentdb://k:2113?tls=false', DATABASE_URL: '' }))).toBe('kurrentdb');
  });

  it('rejects a DATABASE_URL that is not a PostgreSQL URL, and two stores at once, as NAME=value: what to fix', () => {
    expect(() => loadServiceConfig({ DATABASE_URL: 'notaurl' })).toThrow(
      /^DATABASE_URL=notaurl: not a URL: use postgres:\/\/user:password@host:5432\/database$/,
    );
    expect(() => loadServiceConfig({ DATABASE_URL: ' not a url ' })).toThrow(/^DATABASE_URL=" not a url ": not a URL: /);
    expect(() => loadServiceConfig({ DATABASE_URL: 'mysql://db/events' })).toThrow(
      /^DATABASE_URL=mysql:\/\/db\/events: not a PostgreSQL URL \(scheme mysql:\): use postgres:\/\/ or postgresql:\/\/, e\.g\. postgres:\/\/user:password@host:5432\/database$/,
    );
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://db/e', KURRENTDB_CONNECTION_STRING: 'kurrentdb://k:2113' })).toThrow(
      /^DATABASE_URL=postgres:\/\/db\/e: set together with KURRENTDB_CONNECTION_STRING: choose one event store \(unset the other\)$/,
    );
  });

  it('never prints a password from DATABASE_URL, whatever is wrong with it', () => {
    for (const value of [
      'postgres://admin:hunter2@[::1:5432/events',
      'admin:hunter2@db:5432/events',
      'mysql://admin:hunter2@db/events',
      'host=db password=hunter2 user=admin',
      'postgres://admin:hun ter2@db:notaport/events',
    ]) {
      let message = '';
      try {
        loadServiceConfig({ DATABASE_URL: value });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^DATABASE_URL=.*: /);
      expect(message).not.toMatch(/hunter2|hun ter2|ter2/);
    }
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://admin:hunter2@db/e', KURRENTDB_CONNECTION_STRING: 'kurrentdb://k:2113' })).toThrow(
      /^DATABASE_URL=postgres:\/\/admin:\*\*\*@db\/e: set together/,
    );
  });
});
