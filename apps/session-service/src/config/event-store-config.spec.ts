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

  it('rejects a DATABASE_URL that is not a PostgreSQL URL, and two stores at once, naming the variables', () => {
    expect(() => loadServiceConfig({ DATABASE_URL: 'mysql://db/events' })).toThrow(/DATABASE_URL must start with postgres:\/\//);
    expect(() => loadServiceConfig({ DATABASE_URL: 'not a url' })).toThrow(/DATABASE_URL is not a valid URL/);
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://db/e', KURRENTDB_CONNECTION_STRING: 'kurrentdb://k:2113' })).toThrow(
      /KURRENTDB_CONNECTION_STRING and DATABASE_URL are both set/,
    );
  });
});
