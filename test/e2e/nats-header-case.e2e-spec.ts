/**
 * Newcomer ncnatsops F3: a command with a valid inbox in a `reply-to` or `REPLY-TO` header (nats.js
 * and nats-py send a header's name as written) was applied and its answer never reached the inbox,
 * without a word; an empty `Reply-To` the same. Over the wire, on the machine's NATS server: the
 * answer now goes to the inbox whatever the header name's letter case (as HTTP reads header
 * names); an empty `Reply-To` is refused (`invalid_reply_to`); a command whose id is sent as
 * `nats-msg-id` (which JetStream does not de-duplicate on) is refused (`invalid_command_id`) naming
 * the spelling, nothing applied.
 */
import { createInbox, headers } from '@nats-io/transport-node';
import { useService } from '../support/service-harness';
import { captureLogLines } from '../support/captured-log-lines';
import { describeWithNats, eventually, readStream, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(60_000);

const prefix = uniquePrefix();
const names = natsNames(prefix);

describeWithNats('NATS header case')('the headers a command is read by, in any letter case', () => {
  const harness = useService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix } });
  const nats = useNatsSuite('NATS header case', { prefixes: [prefix] });
  let lines: string[] = [];

  beforeAll(() => {
    lines = captureLogLines(['warn']);
  });

  afterAll(async () => {
    await harness.stop();
    await nats.close();
    jest.restoreAllMocks();
  });

  /** Publishes an append for `session` with `entries` as headers. */
  const publish = async (session: string, entries: Array<[string, string]>) => {
    const h = headers();
    for (const [k, v] of entries) h.append(k, v);
    const body = JSON.stringify({ events: [{ id: `${session}-1`, type: 'user', text: 'hi' }] });
    await nats.client.js.publish(commandSubject(prefix, 'default', session, 'append'), body, { headers: h });
  };
  const windowIds = async (session: string): Promise<string[]> => {
    const window = await harness.http().get(`/v1/sessions/${session}/window`);
    return window.status === 404 ? [] : (window.body.events as Array<{ id: string }>).map((e) => e.id);
  };

  it.each([['reply-to'], ['REPLY-TO'], ['Reply-To']])('a command with its inbox in %s gets its answer there', async (name) => {
    const inbox = createInbox();
    const sub = nats.nc.subscribe(inbox, { max: 1 });
    await nats.nc.flush();
    const session = `case-${name.replace(/[^a-z]/gi, '')}-${name === name.toLowerCase() ? 'l' : name === name.toUpperCase() ? 'u' : 'c'}`;
    await publish(session, [
      [name, inbox],
      ['Nats-Msg-Id', `${session}-c1`],
    ]);
    const received: string[] = [];
    await eventually(
      async () => {
        for await (const m of sub) received.push(`${m.headers?.get('Status')} ${m.headers?.get('Command-Id')}`);
        return received.length === 1;
      },
      15_000,
      `the answer on the inbox named by ${name}`,
    );
    expect(received).toEqual([`201 ${session}-c1`]);
    expect(await windowIds(session)).toEqual([`${session}-1`]);
  });

  it('an empty Reply-To and an id sent as nats-msg-id are refused, nothing applied, the answer on the results subject and one warn line each', async () => {
    await publish('empty', [
      ['Reply-To', ''],
      ['Nats-Msg-Id', 'empty-c1'],
    ]);
    await publish('lowid', [['nats-msg-id', 'lowid-c1']]);
    const [empty] = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 'empty'), 1);
    const [lowid] = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 'lowid'), 1);
    expect(empty).toMatchObject({ headers: { Status: '400' }, body: { code: 'invalid_reply_to', message: expect.stringMatching(/^Reply-To "" is empty: /) } });
    expect(lowid).toMatchObject({
      headers: { Status: '400' },
      body: { code: 'invalid_command_id', message: expect.stringContaining('header "nats-msg-id" is not Nats-Msg-Id') },
    });
    expect(await windowIds('empty')).toEqual([]);
    expect(await windowIds('lowid')).toEqual([]);
    expect(lines.filter((l) => l.includes('invalid_reply_to') && l.includes('"empty-c1"'))).toHaveLength(1);
    expect(lines.filter((l) => l.includes('invalid_command_id') && l.includes('lowid'))).toHaveLength(1);
  });

  it('a Nats-Msg-Id that would give an event sent without an id an invalid id is refused invalid_command_id, on append and messages alike (ncnats66 F2)', async () => {
    const zeroWidth = 'zw\u200bid';
    for (const [session, kind, body] of [
      ['zw-append', 'append', { events: [{ type: 'user', text: 'hi' }] }],
      ['zw-messages', 'messages', { messages: [{ role: 'user', content: 'hi' }] }],
    ] as const) {
      const h = headers();
      h.append('Nats-Msg-Id', `${zeroWidth}-${kind}`);
      await nats.client.js.publish(commandSubject(prefix, 'default', session, kind), JSON.stringify(body), { headers: h });
      const [answer] = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', session), 1);
      expect(answer).toMatchObject({
        headers: { Status: '400' },
        body: { code: 'invalid_command_id', message: expect.stringContaining('an event sent without an id takes "<Nats-Msg-Id>:<n>" as its id') },
      });
      expect(answer.body.message).toContain('U+200B');
      expect(await windowIds(session)).toEqual([]);
    }
    // An event with its own id does not take the command's: the same header is fine then.
    const h = headers();
    h.append('Nats-Msg-Id', `${zeroWidth}-own`);
    await nats.client.js.publish(
      commandSubject(prefix, 'default', 'zw-own', 'append'),
      JSON.stringify({ events: [{ id: 'own-1', type: 'user', text: 'hi' }] }),
      { headers: h },
    );
    const [own] = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 'zw-own'), 1);
    expect(own.headers.Status).toBe('201');
  });
});
