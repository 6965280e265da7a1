/**
 * A service started while PostgreSQL at `DATABASE_URL` cannot be used — nothing listens on the
 * port, the host name does not resolve, the login is refused (an unknown user here: the machine's
 * server trusts every password), the database does not exist — starts and waits (README,
 * Configuration), and `/health` names `DATABASE_URL` (its password masked) and what to fix
 * (newcomer ncops: `store.error` said only the driver's message, e.g. `PostgreSQL event store:
 * password authentication failed for user "postgres"`, and the warn line too). Against the
 * machine's PostgreSQL (skipped with one line without it; CI runs it). Runtime ≈ 5 s.
 */
import * as net from 'node:net';
import { Logger } from '@nestjs/common';
import { POSTGRES_ADMIN_URL, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { startService } from '../support/service-harness';

jest.setTimeout(60_000);

const pgSkip = postgresUnavailableReason();
if (pgSkip) process.stderr.write(`SKIPPED PostgreSQL unavailable at start: ${pgSkip}\n`);

/** A port nothing listens on now (the OS's pick, released at once). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The machine's server URL with `change` applied, the password `hunter2` (never shown). */
const serverUrl = (change: (url: URL) => void): string => {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.password = 'hunter2';
  change(url);
  return url.toString();
};

(pgSkip ? describe.skip : describe)('a service started while PostgreSQL at DATABASE_URL cannot be used', () => {
  beforeAll(() => {
    for (const level of ['log', 'warn'] as const) jest.spyOn(Logger.prototype, level).mockImplementation(() => undefined);
  });
  afterAll(() => jest.restoreAllMocks());

  const cases: Array<[string, () => Promise<string>, RegExp]> = [
    [
      'nothing listens on the port',
      async () => {
        const port = await freePort();
        return serverUrl((u) => (u.port = String(port)));
      },
      /: connection refused by 127\.0\.0\.1:\d+: start PostgreSQL \(or fix DATABASE_URL\); the service retries until it answers$/,
    ],
    [
      'the host does not resolve',
      async () => serverUrl((u) => (u.hostname = 'nosuchhost.invalid')),
      /: host nosuchhost\.invalid not found \((ENOTFOUND|EAI_AGAIN)\): use a host name that resolves; the service retries until it does \(a name may not resolve during a failover\)$/,
    ],
    [
      'the login is refused',
      async () => serverUrl((u) => (u.username = 'nosuchuser_ncops')),
      /: role "nosuchuser_ncops" does not exist: fix the user or password in DATABASE_URL \(or the server's pg_hba\.conf\) and restart the service; it retries meanwhile$/,
    ],
    [
      'the database does not exist',
      async () => serverUrl((u) => (u.pathname = '/nosuchdb_ncops')),
      /: database "nosuchdb_ncops" does not exist: create the database \(createdb\) or fix its name in DATABASE_URL; the service retries until it exists$/,
    ],
  ];

  it.each(cases)('%s: starts, /health names DATABASE_URL (masked) and the fix, /health/ready 503', async (_case, urlOf, fix) => {
    const url = await urlOf();
    const h = await startService({ env: { DATABASE_URL: url } });
    try {
      const shown = `PostgreSQL event store: DATABASE_URL=${url.replace(':hunter2@', ':***@')}`;
      const health = (await h.http().get('/health').expect(200)).body;
      expect(health).toMatchObject({ status: 'unavailable', store: { kind: 'postgres', headPosition: null } });
      expect(health.store.error.startsWith(`${shown}: `)).toBe(true);
      expect(health.store.error).toMatch(fix);
      expect(JSON.stringify(health)).not.toContain('hunter2');
      expect((await h.http().get('/health/ready').expect(503)).body).toMatchObject({ code: 'store_unavailable' });
    } finally {
      await h.stop();
    }
  });
});
