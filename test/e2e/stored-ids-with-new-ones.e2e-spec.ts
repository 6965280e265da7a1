/**
 * A request that holds stored messages and new ones answers 409 `duplicate_event_id` naming the
 * first stored id, nothing written, whatever kind of message is stored (README "Importing existing
 * conversations"); newcomer ncclient60 F1: a stored tool message resent with a new one answered 422
 * `tool_call_conflict`, as a second answer to its call. On `/messages` and `/events`; the new
 * messages sent alone are then written. Runtime: a few seconds (in-process service, SQLite).
 */
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(30_000);

describe('stored messages resent with new ones', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startService();
  });
  afterAll(async () => h.stop());

  const user = { id: 'a', role: 'user', content: 'hi' };
  const call = { id: 'b', role: 'assistant', content: null, tool_calls: [{ id: 'k1', type: 'function', function: { name: 'f', arguments: '{}' } }] };
  const tool = { id: 'c', role: 'tool', tool_call_id: 'k1', content: 'r' };
  const next = { id: 'd', role: 'user', content: 'new' };
  const eventCount = async (sessionId: string) => (await h.http().get(`/v1/sessions/${sessionId}`).expect(200)).body.eventCount;

  it.each([
    ['a tool message first', [tool, next], 'c'],
    ['a tool message after the new one', [next, tool], 'c'],
    ['an assistant message with its call', [call, tool, next], 'b'],
    ['a user message', [user, next], 'a'],
  ])('/messages, %s: 409 duplicate_event_id naming the stored id, nothing written; the new one alone is written', async (_case, messages, stored) => {
    const sessionId = `mixed-${stored}-${messages.indexOf(next)}-${messages.length}`;
    await h
      .http()
      .post(`/v1/sessions/${sessionId}/messages`)
      .send({ messages: [user, call, tool] })
      .expect(201);
    const refused = await h.http().post(`/v1/sessions/${sessionId}/messages`).send({ messages }).expect(409);
    expect(refused.body).toMatchObject({ code: 'duplicate_event_id', eventId: stored });
    expect(await eventCount(sessionId)).toBe(3);
    await h
      .http()
      .post(`/v1/sessions/${sessionId}/messages`)
      .send({ messages: [next] })
      .expect(201);
    expect(await eventCount(sessionId)).toBe(4);
  });

  it('/events: a stored tool event resent with a new one is 409 duplicate_event_id naming it', async () => {
    const events = [
      { id: 'a', type: 'user', text: 'hi' },
      { id: 'b', type: 'assistant', text: null, toolCalls: [{ id: 'k1', name: 'f', arguments: '{}' }] },
      { id: 'c', type: 'tool', responses: [{ toolCallId: 'k1', name: 'f', data: 'r' }] },
    ];
    await h.http().post('/v1/sessions/mixed-native/events').send({ events }).expect(201);
    const refused = await h
      .http()
      .post('/v1/sessions/mixed-native/events')
      .send({ events: [events[2], { id: 'd', type: 'user', text: 'new' }] })
      .expect(409);
    expect(refused.body).toMatchObject({ code: 'duplicate_event_id', eventId: 'c' });
    expect(await eventCount('mixed-native')).toBe(3);
  });
});
