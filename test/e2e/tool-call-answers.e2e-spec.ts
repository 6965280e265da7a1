/**
 * An answer to a tool call, by where the call is (window, abandoned, archived) and whether it is
 * answered, through every way of appending (`/events`, `/messages`, NATS `append` and
 * `messages`): every cell gets the README's answer (issue 17 follow-up: a second answer to an
 * archived, answered call was 422 `unknown_tool_call`, "not in this session"). A refused answer
 * leaves the log unchanged. Runtime: a few seconds (in-process service, embedded store).
 */
import { randomUUID } from 'node:crypto';
import { createInbox } from '@nats-io/transport-node';
import { useService, type Harness } from '../support/service-harness';
import { describeWithNats, publishCommand, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(60_000);

type Json = Record<string, unknown>;
const user = (id: string): Json => ({ id, type: 'user', text: `user ${id}` });
const reply = (id: string): Json => ({ id, type: 'assistant', text: `assistant ${id}` });
const call = (id: string): Json => ({ id, type: 'assistant', text: null, toolCalls: [{ id: 'k', name: 'book_flight', arguments: '{"time":"09:10"}' }] });
const answer = (id: string): Json => ({ id, type: 'tool', responses: [{ toolCallId: 'k', name: 'book_flight', data: `result ${id}` }] });

/** What happens to the answer `r` to call `k`. */
type Expected = { status: 201; archivedOnArrival: boolean } | { status: 422; code: 'tool_call_conflict' | 'unknown_tool_call' };
const accepted = (archivedOnArrival = false): Expected => ({ status: 201, archivedOnArrival });
const refused = (code: 'tool_call_conflict' | 'unknown_tool_call'): Expected => ({ status: 422, code });

/** A step that builds the session: append these events, or compact keeping the newest turn. */
type Step = Json[] | 'compact';
const compacted: Step = 'compact';

const TABLE: Array<{ call: string; steps: Step[]; expected: Expected }> = [
  { call: 'in the window, open', steps: [[user('u1'), call('c1')]], expected: accepted() },
  { call: 'in the window, answered', steps: [[user('u1'), call('c1'), answer('t1')]], expected: refused('tool_call_conflict') },
  { call: 'abandoned in the window, open', steps: [[user('u1'), call('c1'), user('u2')]], expected: accepted() },
  { call: 'abandoned in the window, answered since', steps: [[user('u1'), call('c1'), user('u2'), answer('t1')]], expected: refused('tool_call_conflict') },
  {
    call: 'archived while open (abandoned)',
    steps: [[user('u1'), call('c1'), user('u2'), reply('a2'), user('u3'), reply('a3')], compacted],
    expected: accepted(true),
  },
  {
    call: 'archived with its answer',
    steps: [[user('u1'), call('c1'), answer('t1'), reply('a1'), user('u2'), reply('a2')], compacted],
    expected: refused('tool_call_conflict'),
  },
  {
    call: 'archived while open, answered late (archived on arrival)',
    steps: [[user('u1'), call('c1'), user('u2'), reply('a2'), user('u3'), reply('a3')], compacted, [answer('t1')]],
    expected: refused('tool_call_conflict'),
  },
  { call: 'never made in the session', steps: [[user('u1'), reply('a1')]], expected: refused('unknown_tool_call') },
];

/** How an answer travels: its answer as `{ status, body }`. */
type Send = (session: string, kind: 'events' | 'messages', body: Json) => Promise<{ status: number; body: Json }>;

const bodies = {
  events: { events: [answer('r')] },
  messages: { messages: [{ role: 'tool', tool_call_id: 'k', content: 'result r', id: 'r' }] },
} as const;

/** The table, for one service and a way to send the answer (`label` names the transport). */
function answersTable(harness: () => Harness, label: string, send: Send, kinds: Array<'events' | 'messages'>) {
  const http = () => harness().http();
  const log = async (session: string) => (await http().get(`/v1/sessions/${session}/events?limit=1000`).expect(200)).body.events as Json[];

  const answerOf = (e: Expected) => (e.status === 422 ? `422 ${e.code}` : e.archivedOnArrival ? '201, archived on arrival' : '201, in the window');
  const cases = kinds.flatMap((kind) => TABLE.map((row, i) => ({ ...row, kind, session: `${label}-${kind}-${i}`, answer: answerOf(row.expected) })));
  it.each(cases)(`${label} $kind: call $call → $answer`, async ({ kind, session, steps, expected }) => {
    for (const step of steps) {
      if (step === 'compact') {
        const pass = await http()
          .post(`/v1/sessions/${session}/compactions`)
          .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
          .expect(200);
        expect(pass.body).toMatchObject({ outcome: 'compacted', archived: expect.arrayContaining(['c1']) });
      } else await http().post(`/v1/sessions/${session}/events`).send({ events: step }).expect(201);
    }
    const before = await log(session);
    const res = await send(session, kind, bodies[kind]);
    const after = await log(session);
    if (expected.status === 422) {
      const { parameter, toolCallId } = res.body as { parameter?: string; toolCallId?: string };
      // Both codes name the call id (ncclient60 F2: tool_call_conflict did not), so a runtime need not read it from the message.
      expect({ status: res.status, code: res.body.code, parameter, toolCallId }).toEqual({
        status: 422,
        code: expected.code,
        parameter: kind === 'events' ? 'events[0].responses[0].toolCallId' : 'messages[0].tool_call_id',
        toolCallId: 'k',
      });
      expect(after).toEqual(before);
      return;
    }
    expect(res.status).toBe(201);
    const stored = after.find((e) => e.eventId === 'r');
    expect(stored).toMatchObject({ archived: expected.archivedOnArrival });
    const window = await http()
      .get(`/v1/sessions/${session}/window?minPosition=${res.body.position as string}`)
      .expect(200);
    expect(window.body.events.some((e: Json) => e.id === 'r')).toBe(!expected.archivedOnArrival);
  });
}

describe('an answer to a tool call, through /events and /messages', () => {
  const harness = useService();
  answersTable(
    () => harness,
    'http',
    async (session, kind, body) => {
      const res = await harness.http().post(`/v1/sessions/${session}/${kind}`).send(body);
      return { status: res.status, body: res.body as Json };
    },
    ['events', 'messages'],
  );

  it('/messages: a tool message sent while its call is being appended is refused, or stored named after its call (never unnamed)', async () => {
    const http = () => harness.http();
    const sessions = Array.from({ length: 12 }, (_, i) => `race-${i}`);
    const outcomes = await Promise.all(
      sessions.map(async (session) => {
        await http()
          .post(`/v1/sessions/${session}/events`)
          .send({ events: [user('u1')] })
          .expect(201);
        const [callRes, answerRes] = await Promise.all([
          http()
            .post(`/v1/sessions/${session}/messages`)
            .send({
              messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'k', type: 'function', function: { name: 'search', arguments: '{}' } }] }],
            }),
          http()
            .post(`/v1/sessions/${session}/messages`)
            .send({ messages: [{ role: 'tool', tool_call_id: 'k', content: 'found', id: 'r' }] }),
        ]);
        expect(callRes.status).toBe(201);
        if (answerRes.status !== 201) {
          expect({ status: answerRes.status, code: answerRes.body.code }).toEqual({ status: 422, code: 'unknown_tool_call' });
          return 'refused';
        }
        const log = await http()
          .get(`/v1/sessions/${session}/events?minPosition=${answerRes.body.position as string}`)
          .expect(200);
        const stored = (log.body.events as Array<{ eventId?: string; data: { event: { responses?: Array<{ name: string }> } } }>).find(
          (e) => e.eventId === 'r',
        );
        expect(stored?.data.event.responses?.map((r) => r.name)).toEqual(['search']);
        return 'named';
      }),
    );
    expect(outcomes).toHaveLength(sessions.length);
  });
});

describe('a retried /messages tool message once its call is archived (README "Ids and retries")', () => {
  const harness = useService();
  const http = () => harness.http();
  const log = async (session: string) => (await http().get(`/v1/sessions/${session}/events?limit=1000`).expect(200)).body.events as Json[];
  /** Keeps the newest turn; the call `c1` is archived. */
  const compact = async (session: string) => {
    const pass = await http()
      .post(`/v1/sessions/${session}/compactions`)
      .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
      .expect(200);
    expect(pass.body).toMatchObject({ outcome: 'compacted', archived: expect.arrayContaining(['c1']) });
  };
  const toolMessage = { messages: [{ role: 'tool', tool_call_id: 'k', content: 'late', id: 't1' }] };
  const calling = (name: string, id: string) => ({
    messages: [{ id, role: 'assistant', content: null, tool_calls: [{ id: 'k', type: 'function', function: { name, arguments: '{}' } }] }],
  });

  /** A call answered by a tool message while in the window, then both archived: the tool message's answer. */
  const answeredThenArchived = async (session: string) => {
    await http()
      .post(`/v1/sessions/${session}/events`)
      .send({ events: [user('u1')] })
      .expect(201);
    await http().post(`/v1/sessions/${session}/messages`).send(calling('book_flight', 'c1')).expect(201);
    const first = (await http().post(`/v1/sessions/${session}/messages`).send(toolMessage).expect(201)).body as Json;
    await http()
      .post(`/v1/sessions/${session}/events`)
      .send({ events: [user('u2'), reply('a2')] })
      .expect(201);
    await compact(session);
    return first;
  };

  it.each([
    {
      given: 'a late answer archived on arrival',
      build: async (session: string) => {
        await http()
          .post(`/v1/sessions/${session}/events`)
          .send({ events: [user('u1'), call('c1'), user('u2'), reply('a2')] })
          .expect(201);
        await compact(session);
        return (await http().post(`/v1/sessions/${session}/messages`).send(toolMessage).expect(201)).body as Json;
      },
    },
    {
      given: 'an answer sent while its call was in the window, both archived since',
      build: answeredThenArchived,
    },
    {
      given: 'its call archived and its id reused since by a call to another tool',
      build: async (session: string) => {
        const first = await answeredThenArchived(session);
        await http().post(`/v1/sessions/${session}/messages`).send(calling('cancel_flight', 'c2')).expect(201);
        return first;
      },
    },
  ])('given $given, when the same request is sent again, then it is a retry: the original answer, nothing written', async ({ build }) => {
    const session = `retry-${randomUUID()}`;
    const first = await build(session);
    const before = await log(session);
    const again = await http().post(`/v1/sessions/${session}/messages`).send(toolMessage);
    expect({ status: again.status, body: again.body as Json }).toEqual({ status: 201, body: first });
    expect(await log(session)).toEqual(before);
  });
});

describeWithNats('tool-call answers over NATS')('an answer to a tool call, through NATS append and messages commands', () => {
  const prefix = uniquePrefix();
  const nats = useNatsSuite('tool-call answers', { prefixes: [prefix] });
  const harness = useService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix } });
  afterAll(async () => {
    await nats.close();
  });

  answersTable(
    () => harness,
    'nats',
    async (session, kind, body) => {
      const inbox = createInbox();
      const sub = nats.nc.subscribe(inbox, { max: 1 });
      await publishCommand(nats.client.js, commandSubject(prefix, 'default', session, kind === 'events' ? 'append' : 'messages'), body, {
        msgId: randomUUID(),
        replyTo: inbox,
      });
      for await (const m of sub) return { status: Number(m.headers?.get('Status')), body: m.json<Json>() };
      throw new Error('no answer on the Reply-To subject');
    },
    ['events', 'messages'],
  );
});
