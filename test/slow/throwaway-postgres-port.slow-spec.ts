/**
 * The fault tests' throwaway PostgreSQL (`test/support/throwaway-postgres.ts`) picks a free port
 * before `initdb` and binds it seconds later; another process may take it meanwhile (CI: `could not
 * bind IPv4 address "127.0.0.1": Address already in use`, failing `frozen-postgres-requests`). Such
 * a start is tried again on another port; a port the test gave is not replaced, and the refusal carries what the
 * server logged (pg_ctl says only "Examine the log output", and the log goes with the directory). Runtime: ~5 s.
 */
import * as net from 'node:net';
import { Client } from 'pg';
import { ThrowawayPostgres, throwawayPostgresUnavailableReason } from '../support/throwaway-postgres';
import { describeUnlessSkipped } from '../../libs/event-store/test/postgres-test-database';

jest.setTimeout(120_000);

/** A loopback port something listens on until `close` (what a parallel test holding it looks like). */
async function heldPort(): Promise<{ port: number; close(): Promise<void> }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as net.AddressInfo).port, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describeUnlessSkipped(throwawayPostgresUnavailableReason(), 'a throwaway PostgreSQL whose picked port is taken before it binds', () => {
  it('starts on the next port picked, and answers there', async () => {
    const held = await heldPort();
    const picks: number[] = [];
    let cluster: ThrowawayPostgres | undefined;
    try {
      cluster = await ThrowawayPostgres.create({
        pickPort: async () => {
          // The first pick is the held port; later ones the OS's.
          const next =
            picks.length === 0
              ? held.port
              : await new Promise<number>((resolve) => {
                  const probe = net.createServer().listen(0, '127.0.0.1', () => {
                    const { port } = probe.address() as net.AddressInfo;
                    probe.close(() => resolve(port));
                  });
                });
          picks.push(next);
          return next;
        },
      });
      expect(picks.length).toBe(2);
      expect(cluster.port).toBe(picks[1]);
      const client = new Client({ connectionString: cluster.url });
      await client.connect();
      expect((await client.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await client.end();
    } finally {
      cluster?.destroy();
      await held.close();
    }
  });

  it('does not replace a port the test gave, and says what the server logged', async () => {
    const held = await heldPort();
    try {
      await expect(ThrowawayPostgres.create({ port: held.port })).rejects.toThrow(
        /could not start server[^]*server log of the failed start:[^]*Address already in use/,
      );
    } finally {
      await held.close();
    }
  });
});
