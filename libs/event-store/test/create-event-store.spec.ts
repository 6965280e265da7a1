/**
 * {@link createEventStore}: which adapter each configuration builds, and that the KurrentDB client
 * and `pg` are loaded only when their store is configured (issue 14: the empty service on SQLite
 * should not hold them).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createEventStore, SqliteEventStore } from '../src';
import { KurrentDbEventStore } from '../src/kurrentdb';
import { PostgresEventStore } from '../src/postgres';

jest.setTimeout(60_000);

const repoRoot = resolve(__dirname, '../../..');
let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'es-create-'))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('createEventStore', () => {
  it('builds the SQLite store when no server is configured', async () => {
    const store = createEventStore({ sqliteFile: join(dir, 'events.sqlite') });
    expect(store).toBeInstanceOf(SqliteEventStore);
    await store.close();
  });

  it('builds the PostgreSQL store for a database URL (connecting on first use)', async () => {
    const store = createEventStore({ postgresUrl: 'postgres://nobody@127.0.0.1:1/none' });
    expect(store).toBeInstanceOf(PostgresEventStore);
    await store.close();
  });

  it('builds the KurrentDB store for a connection string (connecting on first use)', async () => {
    const store = createEventStore({ kurrentDbConnectionString: 'kurrentdb://127.0.0.1:1?tls=false' });
    expect(store).toBeInstanceOf(KurrentDbEventStore);
    await store.close();
  });

  it('refuses both servers at once', () => {
    expect(() => createEventStore({ postgresUrl: 'postgres://db/e', kurrentDbConnectionString: 'kurrentdb://k:2113' })).toThrow(/not both/);
  });

  it('loads neither the KurrentDB client nor pg for a SQLite store', () => {
    // A fresh process: jest's own module registry says nothing about what Node loads.
    const script = `
      const { createEventStore } = require('./libs/event-store/src');
      createEventStore({ sqliteFile: ${JSON.stringify(join(dir, 'events.sqlite'))} }).close();
      const packages = Object.keys(require.cache).map((p) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(p)?.[1]).filter(Boolean);
      process.stdout.write(JSON.stringify([...new Set(packages)]));`;
    const out = execFileSync(process.execPath, ['-r', 'ts-node/register/transpile-only', '-e', script], {
      cwd: repoRoot,
      env: { ...process.env, TS_NODE_PROJECT: process.env.TS_NODE_PROJECT ?? join(repoRoot, 'tsconfig.json') },
      encoding: 'utf8',
    });
    const packages = JSON.parse(out) as string[];
    expect(packages).toContain('better-sqlite3');
    expect(packages).not.toContain('@kurrent/kurrentdb-client');
    expect(packages).not.toContain('pg');
  });
});
