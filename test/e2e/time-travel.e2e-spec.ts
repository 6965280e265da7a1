/**
 * Time travel (`GET /v1/sessions/:id/window?atRevision=`) at a revision inside one atomic
 * decision answers the window after the whole decision, and says which revision it shows
 * (DESIGN §4, §5): a compaction's decision events before its CompactionCompleted, and a late
 * answer before its on-arrival archive, were never a window anyone could read. `tokens` of the
 * `openai` rendering is the cost of the messages it holds (placeholders in, left-out events out).
 * Runtime: a few seconds (in-process service, embedded store).
 */
import { useService } from '../support/service-harness';

jest.setTimeout(60_000);

type Json = Record<string, unknown>;
const system = (id: string): Json => ({ id, type: 'system', text: `system ${id}` });
const user = (id: string): Json => ({ id, type: 'user', text: `user ${id}` });
const reply = (id: string): Json => ({ id, type: 'assistant', text: `assistant ${id}` });
const call = (id: string, callId: string): Json => ({ id, type: 'assistant', text: null, toolCalls: [{ id: callId, name: 'lookup', arguments: '{}' }] });
const answer = (id: string, callId: string): Json => ({ id, type: 'tool', responses: [{ toolCallId: callId, name: 'lookup', data: `result ${id}` }] });

/** `Tool [responses: lookup -> [no tool response recorded]]` under `chars`: what a placeholder answer costs. */
const PLACEHOLDER_CHARS = 'Tool [responses: lookup -> [no tool response recorded]]'.length;

describe('time travel inside one atomic decision', () => {
  const service = useService();
  const http = () => service.http();

  const windowAt = async (session: string, query: string) => (await http().get(`/v1/sessions/${session}/window?${query}`).expect(200)).body as Json;
  const ids = (w: Json) => (w.events as Json[]).map((e) => e.id);
  const types = async (session: string) =>
    ((await http().get(`/v1/sessions/${session}/events?limit=1000`).expect(200)).body.events as Json[]).map((e) => [e.revision, e.type]);

  it('a revision inside a compaction answers the window after it, with the summary (repro A)', async () => {
    await http()
      .post('/v1/sessions/tt1/events')
      .send({ events: [system('s'), user('u1'), reply('a1'), user('u2'), reply('a2'), user('u3'), reply('a3')] })
      .expect(201);
    const pass = await http()
      .post('/v1/sessions/tt1/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 } })
      .expect(200);
    expect(pass.body).toMatchObject({ outcome: 'compacted', archived: ['u1', 'a1', 'u2', 'a2'] });
    expect((await types('tt1')).slice(7)).toEqual([
      ['7', 'EventsArchived'],
      ['8', 'SummaryInserted'],
      ['9', 'CompactionCompleted'],
    ]);
    const after = await windowAt('tt1', 'atRevision=9');
    expect(after).toMatchObject({ revision: '9' });
    expect(ids(after)).toEqual(['s', pass.body.summary.id, 'u3', 'a3']);
    for (const at of ['7', '8']) {
      const w = await windowAt('tt1', `atRevision=${at}`);
      expect({ at, revision: w.revision, ids: ids(w), tokens: w.tokens }).toEqual({ at, revision: '9', ids: ids(after), tokens: after.tokens });
    }
    // Revisions that end an append are shown as they are.
    expect(await windowAt('tt1', 'atRevision=6')).toMatchObject({ revision: '6' });
    expect(ids(await windowAt('tt1', 'atRevision=6'))).toEqual(['s', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3']);
  });

  it('a late answer is never shown without its call: its revision answers the window after its on-arrival archive (repro B)', async () => {
    await http()
      .post('/v1/sessions/tl1/events')
      .send({ events: [system('s'), user('u1'), call('k1', 'k'), user('u2'), reply('a2'), user('u3'), reply('a3')] })
      .expect(201);
    const pass = await http()
      .post('/v1/sessions/tl1/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
      .expect(200);
    expect(pass.body).toMatchObject({ outcome: 'compacted', archived: ['u1', 'k1', 'u2', 'a2'] });
    await http()
      .post('/v1/sessions/tl1/events')
      .send({ events: [answer('t1', 'k')] })
      .expect(201);
    expect((await types('tl1')).slice(9)).toEqual([
      ['9', 'ConversationEventAppended'],
      ['10', 'EventsArchived'],
    ]);

    const events = await windowAt('tl1', 'atRevision=9');
    expect({ revision: events.revision, ids: ids(events) }).toEqual({ revision: '10', ids: ['s', 'u3', 'a3'] });
    const costs = (events.events as Json[]).reduce((sum, e) => sum + (e.tokens as number), 0);
    expect(events.tokens).toBe(costs);

    const openai = await windowAt('tl1', 'atRevision=9&format=openai');
    expect(openai).toEqual({
      sessionId: 'tl1',
      revision: '10',
      tokens: costs,
      estimator: 'cl100k_base',
      messages: [
        { role: 'system', content: 'system s' },
        { role: 'user', content: 'user u3' },
        { role: 'assistant', content: 'assistant a3' },
      ],
    });
    expect(await windowAt('tl1', 'format=openai')).toEqual(openai);
  });

  it('tokens of the openai rendering count the placeholder answers it adds and not the superseded system messages it leaves out', async () => {
    await http()
      .post('/v1/sessions/ph1/events')
      .send({ events: [system('s1'), system('s2'), user('u1'), call('k1', 'k'), user('u2'), reply('a2')] })
      .expect(201);
    for (const query of ['estimator=chars', 'estimator=chars&atRevision=5']) {
      const native = await windowAt('ph1', query);
      const cost = Object.fromEntries((native.events as Json[]).map((e) => [e.id, e.tokens as number]));
      const openai = await windowAt('ph1', `${query}&format=openai`);
      expect((openai.messages as Json[]).map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user', 'assistant']);
      expect((openai.messages as Json[])[3]).toEqual({ role: 'tool', tool_call_id: 'k', content: '[no tool response recorded]' });
      expect({ query, tokens: openai.tokens }).toEqual({
        query,
        tokens: cost.s2 + cost.u1 + cost.k1 + PLACEHOLDER_CHARS + cost.u2 + cost.a2,
      });
    }
  });
});
