/**
 * A replica started with `NATS_URL` while PostgreSQL does not answer (newcomer ncops: a replica
 * restarted during a PostgreSQL failover) stays up, as one without NATS does (README: a process
 * restarted during a store outage stays up and cannot serve reads until the store answers):
 * `/health` 200 `unavailable` with the store's error, the decisions feed paused on it,
 * `/health/ready` 503 `store_unavailable`; a command published meanwhile waits; once PostgreSQL
 * answers, the replica gets ready, the command is applied and answered, and the feed runs. Before,
 * the start failed (`failed to start: PostgreSQL event store: connect ECONNREFUSED …`, exit 1): the
 * decisions feed read the store's head at start, and its error ended the start.
 *
 * `DATABASE_URL` points at a port where nothing listens, then at a TCP proxy opened on that port in
 * front of the machine's PostgreSQL (a database of its own); NATS is the machine's server (a prefix
 * of its own). Skipped with one line without either (CI runs it). Runtime ≈ 10 s.
 */
import * as net from 'node:net';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from '../support/service-harness';
import { NATS_TEST_URL, describeWithNats, eventually, publishCommand, readStream, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(90_000);

const pgSkip = postgresUnavailableReason();
if (pgSkip) process.stderr.write(`SKIPPED NATS start while PostgreSQL is down: ${pgSkip}\n`);

/** A port nothing listens on now (the OS's pick, released at once). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A TCP proxy on `port` to `target` (host:port); resolves once it listens. */
async function openProxy(port: number, target: URL): Promise<net.Server> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => undefined).on('close', () => sockets.delete(s));
    }
    client.pipe(upstream).pipe(client);
  });
  server.on('close', () => sockets.forEach((s) => s.destroy()));
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

(pgSkip ? describe.skip : describeWithNats('NATS start while PostgreSQL is down'))('a replica with NATS started while PostgreSQL does not answer', () => {
  let db: TestDatabase;
  let proxy: net.Server | null = null;
  let harness: Harness | null = null;
  const names = natsNames(uniquePrefix());

  const nats = useNatsSuite('NATS start while PostgreSQL is down', { quiet: true, prefixes: [names.prefix] });
  beforeAll(async () => {
    db = await createTestDatabase('natsdownstart');
  });

  afterAll(async () => {
    await harness?.stop();
    if (proxy) await new Promise((resolve) => proxy!.close(resolve));
    await db?.drop();
    await nats.close();
    jest.restoreAllMocks();
  });

  it('stays up (health 200 unavailable, ready 503, the feed paused on the store’s error), then serves once PostgreSQL answers, applying the command published meanwhile', async () => {
    const port = await freePort();
    const url = new URL(db.url);
    const target = new URL(db.url);
    url.host = `127.0.0.1:${port}`;
    harness = await startService({ env: { DATABASE_URL: url.toString(), NATS_URL: NATS_TEST_URL, NATS_PREFIX: names.prefix, NATS_ACK_WAIT_MS: '5000' } });
    const h = harness;

    const health = (await h.http().get('/health').expect(200)).body;
    const refused = expect.stringMatching(/^PostgreSQL event store: DATABASE_URL=postgres:\/\/.*: connection refused by 127\.0\.0\.1:\d+: start PostgreSQL/);
    expect(health).toMatchObject({
      status: 'unavailable',
      store: { kind: 'postgres', headPosition: null, error: refused },
      nats: { connection: 'connected', decisionFeed: { checkpoint: '0', lastError: refused, anotherLog: null } },
    });
    expect((await h.http().get('/health/ready').expect(503)).body).toMatchObject({ code: 'store_unavailable' });

    // A command published while the store does not answer waits for it.
    const commandId = randomUUID();
    const events = [
      { id: 'u1', type: 'user', text: 'published while PostgreSQL was down' },
      { id: 'a1', type: 'assistant', text: 'applied once it answered' },
    ];
    await publishCommand(nats.client.js, commandSubject(names.prefix, 'default', 'waited', 'append'), { events }, { msgId: commandId });
    await eventually(async () => (await h.http().get('/health').expect(200)).body.nats.commandsRetrying === 1, 20_000, 'the command to wait for the store');

    proxy = await openProxy(port, target);
    await eventually(async () => (await h.http().get('/health/ready')).status === 200, 30_000, '/health/ready to answer 200 once PostgreSQL answers');
    const [answer] = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.waited`, 1);
    expect(answer.headers).toMatchObject({ 'Command-Id': commandId, Status: '201' });
    await eventually(
      async () => {
        const body = (await h.http().get('/health').expect(200)).body;
        return body.status === 'ok' && body.nats.decisionFeed.lastError === null && body.nats.commandsRetrying === 0;
      },
      20_000,
      'the decisions feed to resume',
    );
    const window = (await h.http().get('/v1/sessions/waited/window').expect(200)).body;
    expect(window.events.map((e: { id: string }) => e.id)).toEqual(['u1', 'a1']);
  });
});
