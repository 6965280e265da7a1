/**
 * A service started with `NATS_URL` while no NATS server listens there (a NATS outage or a
 * rolling restart of the whole stack) starts and serves HTTP, as one started while PostgreSQL is
 * down does: `/health` 200 with `nats.connection` `connecting` and the error, `/health/ready` 200,
 * `/metrics` `nats_connected 0`, one warn line naming `NATS_URL` (password masked) and that it
 * retries; once the server starts, the command consumer and the decisions feed start without a
 * restart (a command published then is applied and answered; the decision made meanwhile over HTTP
 * is published). Before, the start failed (`failed to start: NATS_URL=…: connection refused by …`, exit 1).
 *
 * Against a throwaway `nats-server` started on the service's port after the service; skips with
 * one line when no `nats-server` binary is installed. Runtime ≈ 10 s.
 */
import { randomUUID } from 'node:crypto';
import { startService, type Harness } from '../support/service-harness';
import { captureLogLines } from '../support/captured-log-lines';
import { eventually, natsClient, publishCommand, readStream, uniquePrefix } from '../support/nats-test';
import { NATS_SERVER_BINARY, freePort, startThrowawayNats, type ThrowawayNats } from '../support/throwaway-nats';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';

const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS down at start: no nats-server binary installed\n');

suite('a service started while its NATS server is down', () => {
  jest.setTimeout(90_000);
  let nats: ThrowawayNats | null = null;
  let harness: Harness | null = null;
  let logged: string[] = [];

  beforeAll(() => {
    logged = captureLogLines();
  });

  afterAll(async () => {
    await harness?.stop();
    await nats?.stop();
    jest.restoreAllMocks();
  });

  it('starts and serves HTTP, shows NATS connecting in /health, then consumes commands and publishes decisions once the server is up', async () => {
    const port = await freePort();
    const names = natsNames(uniquePrefix());
    harness = await startService({ env: { NATS_URL: `nats://svc:s3cret-pw@127.0.0.1:${port}`, NATS_PREFIX: names.prefix } });
    const h = harness;
    const health = async () => (await h.http().get('/health').expect(200)).body;
    const metric = async (name: string) => new RegExp(`^${name} (\\S+)$`, 'm').exec((await h.http().get('/metrics').expect(200)).text)?.[1];

    const refused = `NATS_URL=nats://svc:***@127.0.0.1:${port}: connection refused by 127.0.0.1:${port}: start the NATS server (or fix NATS_URL); the service retries until it answers`;
    expect(await health()).toMatchObject({ status: 'ok', nats: { connection: 'connecting', error: refused, decisionFeed: null, commandsRetrying: 0 } });
    await h.http().get('/health/ready').expect(200);
    expect(await metric('nats_connected')).toBe('0');
    expect(logged.filter((l) => l.startsWith('NATS_URL='))).toEqual([expect.stringContaining(`${refused} (every 2 s); HTTP serves meanwhile`)]);
    expect(logged.join('\n')).not.toContain('s3cret-pw');

    // HTTP works meanwhile; its decision waits for NATS.
    await h
      .http()
      .post('/v1/sessions/before/events')
      .send({ events: Array.from({ length: 6 }, (_, i) => ({ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `text ${i}` })) })
      .expect(201);
    await h
      .http()
      .post('/v1/sessions/before/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
      .expect(200);

    nats = await startThrowawayNats('nats-down-at-start', '', port);
    await eventually(
      async () => {
        const { nats: n } = await health();
        return n.connection === 'connected' && n.error === null && n.decisionFeed?.lastError === null && n.decisionFeed.lag === 'caught-up';
      },
      30_000,
      'the transport to start once the server is up',
    );
    expect(await metric('nats_connected')).toBe('1');
    expect(logged).toContainEqual(expect.stringMatching(/^NATS connected \(server .*\) after \d+ ms: commands are consumed and decisions published/));

    const client = await natsClient(nats.nc);
    const commandId = randomUUID();
    await publishCommand(
      client.js,
      commandSubject(names.prefix, 'default', 'after', 'append'),
      { events: [{ id: 'u1', type: 'user', text: 'published once NATS was up' }] },
      { msgId: commandId },
    );
    const [answer] = await readStream(client, names.resultStream, `${names.prefix}.results.default.after`, 1);
    expect(answer.headers).toMatchObject({ 'Command-Id': commandId, Status: '201' });
    expect((await h.http().get('/v1/sessions/after/window').expect(200)).body.events.map((e: { id: string }) => e.id)).toEqual(['u1']);
    const [decision] = await readStream(client, names.decisionStream, `${names.prefix}.decisions.default.before`, 1);
    expect(decision.body).toMatchObject({ type: 'CompactionCompleted', sessionId: 'before' });
  });

  it('given no server ever comes, when the service stops, then it gives the wait up and stops', async () => {
    const port = await freePort();
    const waiting = await startService({ env: { NATS_URL: `nats://127.0.0.1:${port}`, NATS_PREFIX: uniquePrefix() } });
    expect((await waiting.http().get('/health').expect(200)).body.nats).toMatchObject({ connection: 'connecting' });
    await waiting.stop();
    expect(logged.filter((l) => /NATS transport stopped/.test(l))).toEqual([]);
  });
});
