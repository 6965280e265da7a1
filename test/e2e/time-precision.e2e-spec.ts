/**
 * Times over HTTP (newcomer nctime F2, F3, F6, A1): recall's `from`/`to` and the session list's
 * `updatedSince` compare the instant sent (up to 9 fraction digits), not one cut to the
 * millisecond; every answer gives an event's `createdAt` in one form, UTC with milliseconds
 * (`Date.toISOString`), the window, time travel and recall alike, as the OpenAPI document says;
 * the log keeps the text as sent; `firstMention` marks the session's first mention only, with or
 * without a time range. Runtime: about 2 s.
 */
import { useService } from '../support/service-harness';

interface Hit {
  eventId: string;
  createdAt: string;
  firstMention?: boolean;
}

describe('recall and list time filters compare the instant sent, to 9 fraction digits', () => {
  const harness = useService();
  const recall = async (query: Record<string, string>) => (await harness.http().get('/v1/recall').query(query).expect(200)).body.items as Hit[];

  beforeAll(async () => {
    await harness
      .http()
      .post('/v1/sessions/tp-f2/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'pangolin sighting', createdAt: '2026-01-01T00:00:00.123456789Z' }] })
      .expect(201);
  });

  it('given an event at .123456789Z, when from=.1234Z and to=.1235Z, then it is found (was 400 "from: must be earlier than to")', async () => {
    const items = await recall({ q: 'pangolin', from: '2026-01-01T00:00:00.1234Z', to: '2026-01-01T00:00:00.1235Z' });
    expect(items.map((h) => h.eventId)).toEqual(['u1']);
  });

  it('given an event at .123456789Z, then to=.1235Z keeps it, to=.123456789Z and from=.1239Z leave it out, from=.123456789Z keeps it', async () => {
    expect((await recall({ q: 'pangolin', from: '2026-01-01T00:00:00Z', to: '2026-01-01T00:00:00.1235Z' })).map((h) => h.eventId)).toEqual(['u1']);
    expect(await recall({ q: 'pangolin', to: '2026-01-01T00:00:00.123456789Z' })).toEqual([]);
    expect(await recall({ q: 'pangolin', from: '2026-01-01T00:00:00.1239Z' })).toEqual([]);
    expect((await recall({ q: 'pangolin', from: '2026-01-01T00:00:00.123456789Z' })).map((h) => h.eventId)).toEqual(['u1']);
    // The same instant with an offset: digits past the millisecond are kept through it.
    expect(await recall({ q: 'pangolin', from: '2026-01-01T05:30:00.12345679+05:30' })).toEqual([]);
  });

  it('answers 400 validation_failed naming from when from is not earlier than to, to the nanosecond', async () => {
    for (const [from, to] of [
      ['2026-01-01T00:00:00.1235Z', '2026-01-01T00:00:00.1234Z'],
      ['2026-01-01T00:00:00.123400001Z', '2026-01-01T00:00:00.1234Z'],
      ['2026-01-01T05:30:00.1234+05:30', '2026-01-01T00:00:00.1234Z'],
    ]) {
      const res = await harness.http().get('/v1/recall').query({ q: 'pangolin', from, to }).expect(400);
      expect(res.body).toMatchObject({ code: 'validation_failed' });
      expect(res.body.message).toMatch(/from: must be earlier than to/);
    }
  });

  it("given a session's lastActivityAt T (milliseconds), then updatedSince a nanosecond past T leaves it out and T itself keeps it", async () => {
    const list = async (updatedSince: string) =>
      ((await harness.http().get('/v1/sessions').query({ updatedSince, limit: '100' }).expect(200)).body.sessions as Array<{ sessionId: string }>).map(
        (s) => s.sessionId,
      );
    const { lastActivityAt } = (await harness.http().get('/v1/sessions/tp-f2').expect(200)).body as { lastActivityAt: string };
    expect(lastActivityAt).toMatch(/\.\d{3}Z$/);
    expect(await list(lastActivityAt)).toContain('tp-f2');
    expect(await list(lastActivityAt.replace('Z', '000001Z'))).not.toContain('tp-f2');
  });
});

describe("one form of an event's createdAt in every answer (UTC, milliseconds), the log keeping the text as sent", () => {
  const harness = useService();
  const sent = [
    { id: 'u1', type: 'user', text: 'heron one', createdAt: '2026-01-01T05:30:00+05:30' },
    { id: 'a1', type: 'assistant', text: 'heron two', createdAt: '2026-01-01T00:30:00.123456789Z' },
    { id: 'u2', type: 'user', text: 'heron three', createdAt: '2026-01-01T01:00:00-00:00' },
  ];
  const utc = (text: string) => new Date(text).toISOString();

  beforeAll(async () => {
    await harness.http().post('/v1/sessions/tp-f3/events').send({ events: sent }).expect(201);
  });

  it('answers the window, time travel and recall with the same createdAt, UTC with milliseconds, sorting as text in time order', async () => {
    const window = (await harness.http().get('/v1/sessions/tp-f3/window').expect(200)).body.events as Array<{ id: string; createdAt: string }>;
    const past = (await harness.http().get('/v1/sessions/tp-f3/window').query({ atRevision: '2' }).expect(200)).body.events as Array<{
      id: string;
      createdAt: string;
    }>;
    const hits = (await harness.http().get('/v1/recall').query({ q: 'heron', sessionId: 'tp-f3' }).expect(200)).body.items as Hit[];
    const expected = Object.fromEntries(sent.map((e) => [e.id, utc(e.createdAt)]));
    expect(Object.fromEntries(window.map((e) => [e.id, e.createdAt]))).toEqual(expected);
    expect(Object.fromEntries(past.map((e) => [e.id, e.createdAt]))).toEqual(expected);
    expect(Object.fromEntries(hits.map((h) => [h.eventId, h.createdAt]))).toEqual(expected);
    const byText = [...window].sort((x, y) => (x.createdAt < y.createdAt ? -1 : 1)).map((e) => e.id);
    expect(byText).toEqual([...sent].sort((x, y) => Date.parse(x.createdAt) - Date.parse(y.createdAt)).map((e) => e.id));
  });

  it('keeps the text as sent in the log', async () => {
    const log = (await harness.http().get('/v1/sessions/tp-f3/events').expect(200)).body.events as Array<{
      data: { createdAt?: string; event?: { id: string } };
    }>;
    const conversation = log.filter((e) => e.data.event);
    expect(Object.fromEntries(conversation.map((e) => [e.data.event!.id, e.data.createdAt]))).toEqual(Object.fromEntries(sent.map((e) => [e.id, e.createdAt])));
  });

  it('says so in the OpenAPI document: the window event createdAt and the recall hit createdAt carry one description', async () => {
    const doc = (await harness.http().get('/docs/openapi.json').expect(200)).body as {
      components: {
        schemas: Record<string, { oneOf?: Array<{ properties: Record<string, { description?: string }> }>; properties?: Record<string, unknown> }>;
      };
    };
    const windowEvent = doc.components.schemas.WindowEvent.oneOf![0].properties.createdAt.description;
    expect(windowEvent).toMatch(/UTC/);
    expect(windowEvent).toMatch(/millisecond/);
    expect(windowEvent).toMatch(/as sent/);
  });
});

describe('firstMention is the session’s first mention with or without a time range (F6)', () => {
  const harness = useService();

  it('given the word said in January and in February, when recall asks February only, then no hit is the first mention', async () => {
    await harness
      .http()
      .post('/v1/sessions/tp-f6/events')
      .send({
        events: [
          { id: 'u1', type: 'user', text: 'my locker code is ZQ7781', createdAt: '2026-01-01T09:00:00Z' },
          { id: 'a1', type: 'assistant', text: 'noted' },
          { id: 'u2', type: 'user', text: 'repeat ZQ7781 please', createdAt: '2026-02-01T09:00:00Z' },
        ],
      })
      .expect(201);
    const ask = async (query: Record<string, string>) =>
      (
        (
          await harness
            .http()
            .get('/v1/recall')
            .query({ q: 'ZQ7781', sessionId: 'tp-f6', ...query })
            .expect(200)
        ).body.items as Hit[]
      ).map((h) => [h.eventId, h.firstMention === true]);
    expect(await ask({})).toEqual([
      ['u1', true],
      ['u2', false],
    ]);
    expect(await ask({ from: '2026-01-15T00:00:00Z', to: '2026-03-01T00:00:00Z' })).toEqual([['u2', false]]);
    expect(await ask({ to: '2026-01-15T00:00:00Z' })).toEqual([['u1', true]]);
  });
});
