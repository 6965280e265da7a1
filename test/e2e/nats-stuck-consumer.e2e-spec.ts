/**
 * Newcomer ncnatsops F1: after two kill -9 of nats-server 2.9 under load the durable command
 * consumer stopped delivering for good (the server logging `Received an error looking up message
 * for consumer: deleted message`) while 869 accepted commands waited, and the service showed
 * nothing: `/health` ok, `commandsStalled` 0, no log line for 5 minutes. Deleting the consumer
 * fixed it (the service re-created it and applied every command once).
 *
 * That nats-server bug cannot be reproduced on demand (1 of 8 double-kill runs under load), so the
 * fault is made here: a TCP proxy between the service and the machine's NATS server drops every
 * pull request the service makes on its consumer (`$JS.API.CONSUMER.MSG.NEXT.<stream>.<consumer>`)
 * until the service deletes the consumer (`$JS.API.CONSUMER.DELETE.…`). To the server it is the
 * finding's state: commands pending, the consumer delivering none, whatever the replica does (it
 * pulls again after every two missed heartbeats); and, as there, a fault that goes with the consumer.
 * - Detected after `NATS_CONSUMER_STUCK_MS` (5 s here): `/health` `degraded` with
 *   `nats.commandConsumer.stuck` saying what was found, `/metrics` `nats_commands_pending`,
 *   `nats_commands_pending_idle_seconds`, `nats_command_consumer_stuck 1`, one error line.
 * - Recovered: the consumer is deleted and created again with its configuration (an operator's
 *   `max_ack_pending` kept), every command applied once, in order; `/health` ok again, one line.
 * Before: `/health` ok, nothing logged, the commands waited for good.
 */
import type { ConsumerInfo } from '@nats-io/jetstream';
import { startService, type Harness } from '../support/service-harness';
import { captureLogLines } from '../support/captured-log-lines';
import { startNatsProxy, type NatsProxy } from '../support/nats-proxy';
import { describeWithNats, eventually, publishCommand, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';

jest.setTimeout(90_000);

const SESSIONS = ['s1', 's2', 's3', 's4'];
const PER_SESSION = 5;

describeWithNats('NATS stuck consumer')('a command consumer that delivers nothing while commands are pending', () => {
  const nats = useNatsSuite('NATS stuck consumer');
  let proxy: NatsProxy | null = null;
  let harness: Harness | null = null;
  let lines: string[] = [];

  beforeAll(() => {
    lines = captureLogLines();
  });

  afterAll(async () => {
    await harness?.stop();
    await proxy?.close();
    await nats.close();
    jest.restoreAllMocks();
  });

  async function eventIds(h: Harness, session: string): Promise<string[]> {
    const window = await h.http().get(`/v1/sessions/${session}/window`);
    if (window.status === 404) return [];
    return (window.body.events as Array<{ id: string }>).map((e) => e.id);
  }
  const metric = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

  it('is reported (health degraded, metrics, one error line) and re-created with its configuration; every command is then applied once, in order', async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    // The streams and the consumer as a deployment left them, with an operator's max_ack_pending.
    await ensureStreams(nats.client.jsm, names, 30_000);
    await nats.client.jsm.consumers.update(names.commandStream, names.commandConsumer, { max_ack_pending: 777 });
    const before: ConsumerInfo = await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer);

    proxy = await startNatsProxy(NATS_TEST_URL);
    const dropped = proxy.dropUntil(`$JS.API.CONSUMER.MSG.NEXT.${names.commandStream}.${names.commandConsumer}`, (f) =>
      (f.subject ?? '').startsWith(`$JS.API.CONSUMER.DELETE.${names.commandStream}.${names.commandConsumer}`),
    );
    harness = await startService({ env: { NATS_URL: proxy.url, NATS_PREFIX: prefix, NATS_CONSUMER_STUCK_MS: '5000' } });
    const h = harness;
    for (let i = 1; i <= PER_SESSION; i++) {
      for (const s of SESSIONS) {
        await publishCommand(
          nats.client.js,
          commandSubject(prefix, 'default', s, 'append'),
          { events: [{ id: `${s}-e${i}`, type: 'user', text: `turn ${i}` }] },
          { msgId: `${s}-c${i}` },
        );
      }
    }
    const total = SESSIONS.length * PER_SESSION;

    // Detected: /health degraded, saying what was found; the metrics; one error line.
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let health: any = null;
    await eventually(
      async () => {
        const body = (await h.http().get('/health').expect(200)).body;
        if (body.status === 'degraded' && body.nats.commandConsumer?.stuck) health = body;
        return health !== null;
      },
      30_000,
      '/health to report the consumer stuck',
    );
    const stuckMetrics = (await h.http().get('/metrics').expect(200)).text;
    expect(metric(stuckMetrics, 'nats_command_consumer_stuck')).toBe(1);
    expect(metric(stuckMetrics, 'nats_commands_pending')).toBe(total);
    expect(metric(stuckMetrics, 'nats_commands_pending_idle_seconds')).toBeGreaterThanOrEqual(5);
    expect(health.nats.commandConsumer).toMatchObject({ pending: total, recreated: 0 });
    expect(health.nats.commandConsumer.stuck).toMatch(
      new RegExp(
        `^NATS consumer ${names.commandConsumer} is stuck: it has delivered no command for \\d+ s while ${total} command\\(s\\) wait in the command stream .*; re-creating it`,
      ),
    );
    expect(health.nats.commandsStalled).toBe(0);
    const errors = lines.filter((l) => l.includes('is stuck'));
    expect(errors).toEqual([health.nats.commandConsumer.stuck]);

    // Recovered: the consumer deleted (the proxy lets pulls through from then on) and created again.
    expect(await dropped).toBeGreaterThan(0);
    await eventually(
      async () => {
        for (const s of SESSIONS) if ((await eventIds(h, s)).length < PER_SESSION) return false;
        return true;
      },
      30_000,
      'every command applied',
    );
    for (const s of SESSIONS) expect(await eventIds(h, s)).toEqual(Array.from({ length: PER_SESSION }, (_, i) => `${s}-e${i + 1}`));
    const after = await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer);
    expect(after.created).not.toEqual(before.created);
    expect(after.config).toMatchObject({ max_ack_pending: 777, ack_wait: before.config.ack_wait, deliver_policy: 'all', ack_policy: 'explicit' });
    expect(lines.filter((l) => l.startsWith(`NATS consumer ${names.commandConsumer} re-created`))).toHaveLength(1);

    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    let healthy: any = null;
    await eventually(
      async () => {
        const body = (await h.http().get('/health').expect(200)).body;
        if (body.status === 'ok') healthy = body;
        return healthy !== null;
      },
      15_000,
      '/health ok again',
    );
    expect(healthy.nats.commandConsumer).toMatchObject({ stuck: null, pending: 0, idleSeconds: 0, recreated: 1 });
    expect(healthy.nats.commandConsumer.lastRecreatedAt).toEqual(expect.any(String));
    expect(lines.filter((l) => l.includes('delivers again'))).toHaveLength(1);
    const text = (await h.http().get('/metrics').expect(200)).text;
    expect(metric(text, 'nats_command_consumer_stuck')).toBe(0);
    expect(metric(text, 'nats_command_consumer_recreations_total')).toBe(1);
    expect(metric(text, 'nats_commands_pending')).toBe(0);
  });
});
