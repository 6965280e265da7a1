/**
 * Newcomer finding (cheap refusals, low): a large append refused by a rule on the session's state
 * (422 `unknown_tool_call`, 409 `user_id_conflict`) was refused only after its whole body was
 * token-counted in the counting thread (3–6 s for 1 MB, a place in its queue of 64), about what an
 * accepted one costs. Now such a request is refused before counting: the same answer as before,
 * the counting pool never asked, the log unchanged; the same request made valid is counted and
 * written. Through `/events`, `/messages` and NATS `append` (one command handler behind all three).
 */
import { randomUUID } from 'node:crypto';
import { useService, type Harness } from '../support/service-harness';
import { describeWithNats, publishCommand, readStream, uniquePrefix, useNatsSuite, NATS_TEST_URL } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { sharedTokenCountingPool } from '../../libs/session/src/token-counting/token-counting-pool';

jest.setTimeout(90_000);

type Json = Record<string, unknown>;
/** `length` characters of words (cheap to count, far over the 8,192 counted inline). */
const words = (length: number) => 'alpha beta gamma delta '.repeat(Math.ceil(length / 23)).slice(0, length);
const call = (id: string, callId: string): Json => ({ id, type: 'assistant', text: null, toolCalls: [{ id: callId, name: 'lookup', arguments: '{}' }] });
const answer = (id: string, callId: string, data: string): Json => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'lookup', data }] });

/** Alice's session `session` with call `call_1` open. */
async function owned(harness: Harness, session: string): Promise<void> {
  await harness
    .http()
    .post(`/v1/sessions/${session}/events`)
    .send({ userId: 'alice', events: [{ id: 'u0', type: 'user', text: 'hello' }, call('c1', 'call_1')] })
    .expect(201);
}

describe('a large append refused by a rule on the session state, over HTTP', () => {
  const harness = useService({ env: { MAX_BODY_BYTES: String(4 * 1024 * 1024) } });
  afterEach(() => jest.restoreAllMocks());
  const MB = words(1_000_000);
  const log = async (session: string) => (await harness.http().get(`/v1/sessions/${session}/events?limit=1000`).expect(200)).body.events as Json[];
  const answerOf = (res: { status: number; body: Json }) => ({ status: res.status, code: res.body.code, message: res.body.message });

  it.each([
    ['/events, an unknown call', 'events', (text: string) => ({ userId: 'alice', events: [answer('r9', 'call_9', text)] }), 422, 'unknown_tool_call'],
    ['/events, another user', 'events', (text: string) => ({ userId: 'bob', events: [{ id: 'b1', type: 'user', text }] }), 409, 'user_id_conflict'],
    [
      '/messages, an unknown call',
      'messages',
      (text: string) => ({ messages: [{ role: 'tool', tool_call_id: 'call_9', content: text, id: 'r9' }] }),
      422,
      'unknown_tool_call',
    ],
  ])('%s: answered as the same small request, without counting, nothing written', async (_case, route, body, status, code) => {
    const session = `http-${code}-${route}`;
    await owned(harness, session);
    const before = await log(session);
    const small = await harness.http().post(`/v1/sessions/${session}/${route}`).send(body('small'));
    const counting = jest.spyOn(sharedTokenCountingPool(), 'eventCosts');
    const large = await harness.http().post(`/v1/sessions/${session}/${route}`).send(body(MB));
    expect(answerOf(large)).toEqual({ ...answerOf(small), status, code });
    expect(counting).not.toHaveBeenCalled();
    expect(await log(session)).toEqual(before);
  });

  it('the same requests made valid are counted and written', async () => {
    await owned(harness, 'http-valid');
    const counting = jest.spyOn(sharedTokenCountingPool(), 'eventCosts');
    await harness
      .http()
      .post('/v1/sessions/http-valid/events')
      .send({ userId: 'alice', events: [answer('r1', 'call_1', MB)] })
      .expect(201);
    await harness
      .http()
      .post('/v1/sessions/http-valid/events')
      .send({ userId: 'alice', events: [{ id: 'a1', type: 'user', text: MB }] })
      .expect(201);
    expect(counting).toHaveBeenCalledTimes(2);
  });
});

const prefix = uniquePrefix();
const names = natsNames(prefix);

describeWithNats('NATS refusal before counting')('a large append refused by a rule on the session state, over NATS', () => {
  const harness = useService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '10000' } });
  const nats = useNatsSuite('NATS refusal before counting', { prefixes: [prefix] });
  afterEach(() => jest.restoreAllMocks());
  afterAll(async () => {
    await harness.stop();
    await nats.close();
  });
  // Under NATS's default max_payload (1 MiB): still far over what is counted inline.
  const LARGE = words(600_000);

  /** Publishes an append to `session` and reads its answer from the results stream. */
  async function appended(session: string, body: Json): Promise<{ status: string; code?: string }> {
    const msgId = randomUUID();
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', session, 'append'), body, { msgId });
    const isMine = (a: { headers: Record<string, string> }) => a.headers['Command-Id'] === msgId;
    const got = await readStream(nats.client, names.resultStream, `${prefix}.results.default.${session}`, (all) => all.some(isMine), {
      durable: `r-${msgId.slice(0, 8)}`,
    });
    const mine = got.find(isMine);
    return { status: mine?.headers.Status ?? 'none', ...(mine?.body.code ? { code: mine.body.code as string } : {}) };
  }

  it('an unknown call and another user are refused without counting; the valid append is counted and written', async () => {
    await owned(harness, 'nats-s');
    const head = await harness.service.store.headPosition();
    const counting = jest.spyOn(sharedTokenCountingPool(), 'eventCosts');
    expect(await appended('nats-s', { events: [answer('r9', 'call_9', LARGE)] })).toEqual({ status: '422', code: 'unknown_tool_call' });
    expect(await appended('nats-s', { userId: 'bob', events: [{ id: 'b1', type: 'user', text: LARGE }] })).toEqual({ status: '409', code: 'user_id_conflict' });
    expect(counting).not.toHaveBeenCalled();
    expect(await harness.service.store.headPosition()).toBe(head);
    expect(await appended('nats-s', { userId: 'alice', events: [answer('r1', 'call_1', LARGE)] })).toEqual({ status: '201' });
    expect(counting).toHaveBeenCalledTimes(1);
  });
});
