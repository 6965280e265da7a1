/**
 * A resend that differs from the stored event in one field is not a retry (README "Ids and
 * retries": content is compared as stored, field by field; an optional field left out differs):
 * the 409 `duplicate_event_id` names that field in the request's terms, on both append routes.
 * Newcomer report (apileft2 item 7): an OpenAI tool message resent without its optional `name`
 * got 409 without saying why. Runtime: a few seconds (in-process service, SQLite).
 */
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(30_000);

describe('a resend differing in one field', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startService();
  });
  afterAll(async () => h.stop());

  const user = { id: 'u1', role: 'user', content: 'hi' };
  const call = { id: 'a1', role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] };
  const tool = { id: 't1', role: 'tool', tool_call_id: 'c1', name: 'lookup', content: 'result' };

  it('a tool message resent without its name is 409 naming messages[i].name; resent as sent it is a retry', async () => {
    const first = await h
      .http()
      .post('/v1/sessions/named/messages')
      .send({ messages: [user, call, tool] })
      .expect(201);
    const { name: _name, ...unnamed } = tool;
    const resent = await h
      .http()
      .post('/v1/sessions/named/messages')
      .send({ messages: [user, call, unnamed] })
      .expect(409);
    expect(resent.body).toEqual({
      code: 'duplicate_event_id',
      eventId: 't1',
      parameter: 'messages[2].name',
      message:
        'messages[2].name: event id "t1" already exists in this session with other content: the stored event has this field, the resent one does not. A retry repeats every field as first sent (content is compared field by field as text; an optional field left out differs from one sent): resend it as stored, or use a new id for new content',
    });
    expect(
      (
        await h
          .http()
          .post('/v1/sessions/named/messages')
          .send({ messages: [user, call, tool] })
          .expect(201)
      ).body,
    ).toEqual(first.body);
  });

  // newcomer ncint64 F3: "the resent event has this field, the stored one does not", of a content the client sent both times.
  it('a message resent with its text as parts, stored as a string (or the other way), says so', async () => {
    await h
      .http()
      .post('/v1/sessions/parts/messages')
      .send({ messages: [{ id: 'x1', role: 'user', content: 'hello' }] })
      .expect(201);
    const asParts = await h
      .http()
      .post('/v1/sessions/parts/messages')
      .send({ messages: [{ id: 'x1', role: 'user', content: [{ type: 'text', text: 'hello' }] }] })
      .expect(409);
    expect(asParts.body).toMatchObject({ code: 'duplicate_event_id', eventId: 'x1', parameter: 'messages[0].content' });
    expect(asParts.body.message).toMatch(
      /^messages\[0\]\.content: event id "x1" already exists in this session with other content: the resent event's text is in text parts, the stored one's is one string\. /,
    );
    await h
      .http()
      .post('/v1/sessions/parts2/messages')
      .send({ messages: [{ id: 'x1', role: 'user', content: [{ type: 'text', text: 'hello' }] }] })
      .expect(201);
    const asString = await h
      .http()
      .post('/v1/sessions/parts2/messages')
      .send({ messages: [{ id: 'x1', role: 'user', content: 'hello' }] })
      .expect(409);
    expect(asString.body.message).toContain("with other content: the stored event's text is in text parts, the resent one's is one string. ");
  });

  it('on /events, a changed text is named events[i].text', async () => {
    await h
      .http()
      .post('/v1/sessions/native/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'hi' }] })
      .expect(201);
    const resent = await h
      .http()
      .post('/v1/sessions/native/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'hello' }] })
      .expect(409);
    expect(resent.body).toMatchObject({ code: 'duplicate_event_id', eventId: 'u1', parameter: 'events[0].text' });
    expect(resent.body.message).toMatch(
      /^events\[0\]\.text: event id "u1" already exists in this session with other content: its value differs from the stored one\. /,
    );
  });
});
