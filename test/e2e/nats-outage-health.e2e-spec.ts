/**
 * A NATS outage under a running service shows where operators look: `/health` names the NATS
 * connection's state and the decisions feed's pause (status stays `ok`, 200: HTTP keeps serving),
 * `/health/ready` stays 200, `/metrics` has `nats_connected` and `nats_decision_feed_paused`, and
 * one log line says when the feed resumes. Against a throwaway `nats-server` of its own (killed and
 * restarted on the same port and folder); skips with one line when no `nats-server` binary is installed.
 */
import { Logger } from '@nestjs/common';
import { startService, type Harness } from '../support/service-harness';
import { eventually, uniquePrefix } from '../support/nats-test';
import { NATS_SERVER_BINARY, startThrowawayNats, type ThrowawayNats } from '../support/throwaway-nats';

const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS outage health: no nats-server binary installed\n');

interface NatsHealth {
  connection: string;
  decisionFeed: { checkpoint: string; lag: string; lastError: string | null; lastErrorAt: string | null } | null;
}

suite('a NATS outage under a running service', () => {
  jest.setTimeout(90_000);
  let nats: ThrowawayNats;
  let harness: Harness;
  const logged: string[] = [];

  beforeAll(async () => {
    for (const level of ['log', 'warn'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => {
        logged.push(String(args[0]));
      });
    }
    nats = await startThrowawayNats('nats-outage');
    harness = await startService({ env: { NATS_URL: nats.url, NATS_PREFIX: uniquePrefix() } });
  });

  afterAll(async () => {
    await harness?.stop();
    await nats?.stop();
    jest.restoreAllMocks();
  });

  const health = async () => {
    const res = await harness.http().get('/health');
    return { code: res.status, status: (res.body as { status: string }).status, nats: (res.body as { nats: NatsHealth }).nats };
  };
  const metric = async (name: string) => {
    const text = (await harness.http().get('/metrics').expect(200)).text;
    return new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1];
  };

  it('given NATS killed, then /health shows it (200 ok), /health/ready stays 200, /metrics says nats_connected 0; the feed pauses on a pending decision and says when it resumes', async () => {
    expect(await health()).toMatchObject({ code: 200, status: 'ok', nats: { connection: 'connected', decisionFeed: { lastError: null } } });
    expect(await metric('nats_connected')).toBe('1');

    await nats.kill();
    await eventually(async () => (await health()).nats.connection === 'reconnecting', 20_000, '/health to show the NATS connection lost');
    expect(await health()).toMatchObject({ code: 200, status: 'ok' });
    await harness.http().get('/health/ready').expect(200);
    expect(await metric('nats_connected')).toBe('0');

    // HTTP commands keep working; the decision they make waits for NATS.
    await harness
      .http()
      .post('/v1/sessions/outage/events')
      .send({ events: Array.from({ length: 6 }, (_, i) => ({ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `outage text ${i}` })) })
      .expect(201);
    await harness
      .http()
      .post('/v1/sessions/outage/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
      .expect((res) => expect(res.status).toBeLessThan(300));
    await eventually(async () => (await health()).nats.decisionFeed?.lastError != null, 30_000, 'the feed to pause on the pending decision');
    expect(await health()).toMatchObject({ code: 200, status: 'ok', nats: { decisionFeed: { lag: 'behind', lastErrorAt: expect.any(String) } } });
    expect(await metric('nats_decision_feed_paused')).toBe('1');

    nats.restart();
    await eventually(
      async () => {
        const { nats: n } = await health();
        return n.connection === 'connected' && n.decisionFeed?.lastError === null && n.decisionFeed.lag === 'caught-up';
      },
      40_000,
      'NATS back and the feed caught up',
    );
    expect([await metric('nats_connected'), await metric('nats_decision_feed_paused')]).toEqual(['1', '0']);
    expect(logged.filter((l) => /decision feed (paused|resumed)/.test(l))).toEqual([
      expect.stringMatching(/^decision feed paused at position \d+: /),
      expect.stringMatching(/^decision feed resumed: published up to position \d+ after \d+ ms paused \(last error: /),
    ]);
  });

  it('given NATS killed, when the service shuts down, then it closes (without waiting for the server) and says so', async () => {
    await nats.kill();
    await eventually(async () => (await health()).nats.connection === 'reconnecting', 20_000, '/health to show the NATS connection lost');
    await harness.stop();
    expect(logged).toContainEqual(expect.stringMatching(/^shutting down while the NATS connection is lost: /));
  });
});
