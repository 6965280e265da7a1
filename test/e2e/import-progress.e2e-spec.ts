/**
 * Importing existing conversations (README): the progress signal a migrator watches,
 * `events_appended_total` on `/metrics` (ncimport A1: `/metrics` had no appended-events counter).
 * It counts the conversation events written, by kind, through both append routes; a retry, an
 * append refused and a request resent over stored events count nothing.
 */
import { useService } from '../support/service-harness';

describe('events_appended_total (import progress)', () => {
  const harness = useService();

  /** `events_appended_total` by type, as /metrics shows it now (absent types are 0). */
  const appended = async (): Promise<Record<string, number>> => {
    const text = (await harness.http().get('/metrics').expect(200)).text;
    return Object.fromEntries([...text.matchAll(/^events_appended_total\{type="([a-z]+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
  };

  it('counts each conversation event written, by type, on both routes; retries, refusals and resent events count nothing', async () => {
    expect(await appended()).toEqual({});
    const messages = [
      { id: 's', role: 'system', content: 'You are an agent.' },
      { id: 'u1', role: 'user', content: 'Find my booking' },
      { id: 'a1', role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'find', arguments: '{}' } }] },
      { id: 't1', role: 'tool', tool_call_id: 'c1', content: '' },
      { id: 'a2', role: 'assistant', content: 'Found it.' },
    ];
    await harness.http().post('/v1/sessions/import-1/messages').send({ messages }).expect(201);
    expect(await appended()).toEqual({ system: 1, user: 1, assistant: 2, tool: 1 });
    // A retry of the whole request and of a run of it: nothing written, nothing counted.
    await harness.http().post('/v1/sessions/import-1/messages').send({ messages }).expect(201);
    await harness
      .http()
      .post('/v1/sessions/import-1/messages')
      .send({ messages: messages.slice(1, 3) })
      .expect(201);
    // Stored events with new ones: 409, nothing written; then only the missing tail: counted.
    const tail = [{ id: 'u2', role: 'user', content: 'Thanks' }];
    await harness
      .http()
      .post('/v1/sessions/import-1/messages')
      .send({ messages: [...messages, ...tail] })
      .expect(409);
    await harness.http().post('/v1/sessions/import-1/messages').send({ messages: tail }).expect(201);
    // Native events through /events count alike; a refused one (400) counts nothing.
    await harness
      .http()
      .post('/v1/sessions/import-2/events')
      .send({ events: [{ type: 'user', text: '' }] })
      .expect(400);
    await harness
      .http()
      .post('/v1/sessions/import-2/events')
      .send({
        events: [
          { id: 'x', type: 'user', text: 'hi' },
          { id: 'y', type: 'summary', shadowPrompt: 'Earlier:', text: 'a summary' },
        ],
      })
      .expect(201);
    expect(await appended()).toEqual({ system: 1, user: 3, assistant: 2, tool: 1, summary: 1 });
  });
});
