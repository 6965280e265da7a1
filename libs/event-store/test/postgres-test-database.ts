import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Client } from 'pg';
import { withoutCredentials } from '../src/without-credentials';

/**
 * PostgreSQL for tests: a server that answers (`POSTGRES_TEST_URL`, default the machine's shared
 * server `postgres://postgres@127.0.0.1:5432/postgres`), on which each test file creates its own
 * database with a random name and drops it afterwards, so parallel files never see each other's
 * streams.
 */
export const POSTGRES_ADMIN_URL = process.env.POSTGRES_TEST_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Null when PostgreSQL answers at {@link POSTGRES_ADMIN_URL} (checked synchronously in a child
 * process, so a spec can choose `describe` or `describe.skip`), else a one-line reason. On CI
 * (`CI` set) it always returns null: the server is part of CI, so an unreachable one must fail the tests.
 */
export function postgresUnavailableReason(): string | null {
  if (process.env.CI) return null;
  const probe = `
    const { Client } = require('pg');
    const c = new Client({ connectionString: process.argv[1], connectionTimeoutMillis: 2500 });
    c.connect().then(() => c.query('SELECT 1')).then(() => process.exit(0), () => process.exit(1));`;
  try {
    execFileSync(process.execPath, ['-e', probe, POSTGRES_ADMIN_URL], { timeout: 4000, stdio: 'ignore', cwd: resolve(__dirname, '../../..') });
    return null;
  } catch {
    return `PostgreSQL tests skipped: no PostgreSQL answers at ${withoutCredentials(POSTGRES_ADMIN_URL)} (set POSTGRES_TEST_URL)`;
  }
}

/** A database created for one test file. */
export interface TestDatabase {
  /** Connection URL of the new database. */
  url: string;
  name: string;
  /** Drops the database (terminating its connections). */
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: POSTGRES_ADMIN_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates an empty database `<tag>_<random hex>` on the test server; with `encoding` (e.g.
 * `LATIN1`), one of that encoding (from template0, C locale), else the server's default (UTF8).
 */
export async function createTestDatabase(tag: string, options: { encoding?: string } = {}): Promise<TestDatabase> {
  const name = `${tag}_${randomBytes(6).toString('hex')}`.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  const encoding = options.encoding ? ` ENCODING '${options.encoding}' TEMPLATE template0 LC_COLLATE 'C' LC_CTYPE 'C'` : '';
  await admin((c) => c.query(`CREATE DATABASE ${name}${encoding}`));
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/**
 * Registers `fn` under `describe(title)`, or, when `skipReason` is set (e.g. from
 * {@link postgresUnavailableReason}), prints that one line and registers a skipped placeholder.
 */
export function describeUnlessSkipped(skipReason: string | null, title: string, fn: () => void): void {
  if (!skipReason) {
    describe(title, fn);
    return;
  }
  process.stderr.write(`${skipReason}\n`);
  describe.skip(skipReason, () => it(title, () => undefined));
}

/** Runs `sql` on the database at `url` as its URL's user, on a connection of its own; answers its rows. @throws what PostgreSQL answers. */
export async function runSql<T extends object = Record<string, unknown>>(url: string, sql: string): Promise<T[]> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}
