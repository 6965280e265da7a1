import { eventStoreConfig, eventStoreKind, quickCheckLine } from './event-store-config';
import { loadServiceConfig } from './service-config';

describe('event store selection from the environment', () => {
  it('SQLite when nothing is set, PostgreSQL with DATABASE_URL, KurrentDB with its connection string', () => {
    expect(eventStoreKind(loadServiceConfig({}))).toBe('sqlite');
    const pg = loadServiceConfig({ DATABASE_URL: 'postgres://svc@db:5432/events', DATA_DIR: '/tmp/replica-1' });
    expect(eventStoreKind(pg)).toBe('postgres');
    expect(eventStoreConfig(pg)).toMatchObject({ postgresUrl: 'postgres://svc@db:5432/events', kurrentDbConnectionString: undefined });
    expect(eventStoreKind(loadServiceConfig({ DATABASE_URL: 'postgresql://db/events' }))).toBe('postgres');
    expect(eventStoreKind(loadServiceConfig({ KURRENTDB_CONNECTION_STRING: 'kurrentdb://k:2113?tls=false', OPENAI_API_KEY: '' }))).toBe('kurrentdb');
  });

  it('gives the PostgreSQL store its pool size (DATABASE_POOL_SIZE, default 16) and statement bound (DATABASE_STATEMENT_TIMEOUT_MS, default 30000), refusing bad values by name', () => {
    const url = 'postgres://svc@db:5432/events';
    expect(eventStoreConfig(loadServiceConfig({ DATABASE_URL: url })).postgres).toMatchObject({ maxConnections: 16, statementTimeoutMs: 30000 });
    expect(eventStoreConfig(loadServiceConfig({ DATABASE_URL: url, DATABASE_POOL_SIZE: '4', DATABASE_STATEMENT_TIMEOUT_MS: '0' })).postgres).toMatchObject({
      maxConnections: 4,
      statementTimeoutMs: 0,
    });
    expect(() => loadServiceConfig({ DATABASE_URL: url, DATABASE_POOL_SIZE: '0' })).toThrow(
      /^DATABASE_POOL_SIZE=0: out of range: use a number of PostgreSQL connections per replica, an integer from 1 to 1000$/,
    );
    expect(() => loadServiceConfig({ DATABASE_URL: url, DATABASE_STATEMENT_TIMEOUT_MS: '5s' })).toThrow(
      /^DATABASE_STATEMENT_TIMEOUT_MS=5s: not an integer in plain decimal digits: use a time in milliseconds/,
    );
  });

  it('rejects a DATABASE_URL that is not a PostgreSQL URL, and two stores at once, as NAME=value: what to fix', () => {
    expect(() => loadServiceConfig({ DATABASE_URL: 'notaurl' })).toThrow(
      /^DATABASE_URL=notaurl: not a URL: use postgres:\/\/user:password@host:5432\/database$/,
    );
    expect(() => loadServiceConfig({ DATABASE_URL: ' not a url ' })).toThrow(/^DATABASE_URL="not a url": not a URL: /);
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

describe('the start-up check lines (nccapacity: a 0.55 GB data dir took 11 s to check, without a line)', () => {
  const MiB = 1024 * 1024;
  it('a file of 128 MiB or more gets a line before its check, naming what and how large, and one after', () => {
    expect(quickCheckLine({ file: '/d/events.sqlite', bytes: 258 * MiB })).toMatch(
      /^checking the event store file \/d\/events\.sqlite \(258 MiB\) with PRAGMA quick_check before starting .*SQLITE_QUICK_CHECK=false skips it\)$/,
    );
    expect(quickCheckLine({ file: '/d/events.sqlite', bytes: 258 * MiB, ms: 400 })).toMatch(
      /^checked the event store file \/d\/events\.sqlite \(258 MiB\) in 0\.4 s/,
    );
  });

  it('a smaller file gets a line only when its check took a second or more', () => {
    expect(quickCheckLine({ file: '/d/read-models.sqlite', bytes: 100 * MiB, what: 'the read models file' })).toBeNull();
    expect(quickCheckLine({ file: '/d/read-models.sqlite', bytes: 100 * MiB, ms: 999, what: 'the read models file' })).toBeNull();
    expect(quickCheckLine({ file: '/d/read-models.sqlite', bytes: 100 * MiB, ms: 5400, what: 'the read models file' })).toMatch(
      /^checked the read models file \/d\/read-models\.sqlite \(100 MiB\) in 5\.4 s/,
    );
  });
});
