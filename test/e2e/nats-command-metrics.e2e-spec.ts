/**
 * `/metrics` counts NATS commands (the NATS side of `http_request_duration_seconds`):
 * `nats_commands_total` by kind, outcome and error code, `nats_commands_redelivered_total` by kind,
 * `nats_command_duration_seconds` by kind and outcome. Before, `/metrics` had no NATS command
 * counter at all. Against the machine's NATS server (a prefix of this file's own); skipped with
 * one line without it.
 */
import { randomUUID } from 'node:crypto';
import { startService, type Harness } from '../support/service-harness';
import { NATS_TEST_URL, describeWithNats, publishCommand, readStream, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { ensureStreams } from '../../apps/session-service/src/nats/nats-streams';

jest.setTimeout(60_000);

describeWithNats('NATS command metrics')('NATS command metrics', () => {
  const names = natsNames(uniquePrefix());
  let harness: Harness | null = null;

  const nats = useNatsSuite('NATS command metrics', { quiet: true, prefixes: [names.prefix] });

  afterAll(async () => {
    await harness?.stop();
    await nats.close();
    jest.restoreAllMocks();
  });

  it('counts each command by kind, outcome and error code, its redelivery, and its duration', async () => {
    // A command delivered once and given back before the service starts: the service gets it redelivered.
    await ensureStreams(nats.client.jsm, names, 30_000);
    await publishCommand(
      nats.client.js,
      commandSubject(names.prefix, 'default', 'metered', 'append'),
      { events: [{ id: 'u1', type: 'user', text: 'once' }] },
      { msgId: randomUUID() },
    );
    const taken = await (await nats.client.js.consumers.get(names.commandStream, names.commandConsumer)).next({ expires: 5000 });
    expect(taken?.info.deliveryCount).toBe(1);
    taken!.nak();

    harness = await startService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: names.prefix } });
    await publishCommand(nats.client.js, commandSubject(names.prefix, 'default', 'metered', 'append'), '{"events": [', { msgId: randomUUID() });
    await publishCommand(nats.client.js, commandSubject(names.prefix, 'default', 'metered', 'rename'), {}, { msgId: randomUUID() });
    const answers = await readStream(nats.client, names.resultStream, `${names.prefix}.results.default.metered`, 3);
    expect(answers.map((a) => a.headers.Status).sort()).toEqual(['201', '400', '400']);

    const text = (await harness.http().get('/metrics').expect(200)).text;
    const value = (series: string) => new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1];
    expect({
      ok: value('nats_commands_total{kind="append",outcome="ok",code=""}'),
      malformed: value('nats_commands_total{kind="append",outcome="rejected",code="malformed_json"}'),
      unknownKind: value('nats_commands_total{kind="unknown",outcome="rejected",code="unknown_command"}'),
      redelivered: value('nats_commands_redelivered_total{kind="append"}'),
      durations: value('nats_command_duration_seconds_count{kind="append",outcome="ok"}'),
      rejectedDurations: value('nats_command_duration_seconds_count{kind="append",outcome="rejected"}'),
    }).toEqual({ ok: '1', malformed: '1', unknownKind: '1', redelivered: '1', durations: '1', rejectedDurations: '1' });
    expect(text).toMatch(/^# TYPE nats_command_duration_seconds histogram$/m);
  });
});
