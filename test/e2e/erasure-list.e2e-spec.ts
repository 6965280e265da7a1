/**
 * What an auditor can read of erasures over HTTP (newcomer nca11y A6): `GET /v1/erasures` lists
 * the caller's tenant's erasures, newest first, in keyset pages (no content: session id, time,
 * event count, the revisions of the erased life, the record's position, who ordered it: never the
 * API key itself), with the list routes'
 * cursor errors; `GET /v1/sessions/{id}` of an erased session id answers 404 with `erasedAt`, and a
 * session id written again after its erasure answers its new life. The list is a read model
 * rebuilt from the log: deleting the read models gives the same answers. Runtime: about 5 s.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { startService, type Harness } from '../support/service-harness';

const KEY_A = 'erasure-list-key-a';
const KEY_B = 'erasure-list-key-b';
const env = { API_KEYS: `${KEY_A}:tenantA,${KEY_B}:tenantB` };

/** A keyset cursor of `list` in a format version this release does not write (another release's). */
const cursorOf = (list: string, v = 1) => Buffer.from(JSON.stringify({ v, l: list, k: '99' }), 'utf8').toString('base64url');

describe('GET /v1/erasures and the 404 of an erased session', () => {
  let h: Harness;
  const as = (key: string) => ({ authorization: `Bearer ${key}` });
  const write = async (key: string, sessionId: string, n: number, prefix: string) =>
    h
      .http()
      .post(`/v1/sessions/${sessionId}/messages`)
      .set(as(key))
      .send({ messages: Array.from({ length: n }, (_, i) => ({ id: `${prefix}${i}`, role: 'user', content: `secret ${prefix}${i}` })) })
      .expect(201);
  const erase = async (key: string, sessionId: string, requestId?: string) =>
    (
      await h
        .http()
        .delete(`/v1/sessions/${sessionId}`)
        .set({ ...as(key), ...(requestId === undefined ? {} : { 'x-request-id': requestId }) })
        .expect(200)
    ).body as { erasedAt: string; erasedEvents: number; position: string };
  const list = (key: string, query: Record<string, string> = {}) => h.http().get('/v1/erasures').query(query).set(as(key));
  /** tenantA's erasures, oldest first: s1's first life, s2, s1's second life. */
  const erased: Array<{ erasedAt: string; erasedEvents: number; position: string }> = [];

  beforeAll(async () => {
    h = await startService({ env });
    await write(KEY_A, 's1', 3, 'a');
    erased.push(await erase(KEY_A, 's1', 'ticket-1'));
    await write(KEY_A, 's2', 1, 'b');
    erased.push(await erase(KEY_A, 's2'));
    await write(KEY_A, 's1', 2, 'c');
    erased.push(await erase(KEY_A, 's1', 'ticket-3'));
    await write(KEY_B, 's1', 4, 'd');
    await erase(KEY_B, 's1');
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  /** Who ordered an erasure of KEY_A (the first entry of API_KEYS) with `requestId` of the client's, or one the service made. */
  const byKeyA = (requestId?: string) =>
    requestId === undefined
      ? { keyLabel: 'API_KEYS#1', requestId: expect.stringMatching(/^[0-9a-f-]{36}$/), requestIdFrom: 'service', via: 'http' }
      : { keyLabel: 'API_KEYS#1', requestId, requestIdFrom: 'client', via: 'http' };
  const expected = () => [
    {
      sessionId: 's1',
      erasedAt: erased[2].erasedAt,
      erasedEvents: 2,
      firstRevision: '3',
      lastRevision: '4',
      position: erased[2].position,
      requestedBy: byKeyA('ticket-3'),
    },
    {
      sessionId: 's2',
      erasedAt: erased[1].erasedAt,
      erasedEvents: 1,
      firstRevision: '0',
      lastRevision: '0',
      position: erased[1].position,
      requestedBy: byKeyA(),
    },
    {
      sessionId: 's1',
      erasedAt: erased[0].erasedAt,
      erasedEvents: 3,
      firstRevision: '0',
      lastRevision: '2',
      position: erased[0].position,
      requestedBy: byKeyA('ticket-1'),
    },
  ];

  it("lists the tenant's erasures newest first, without content, in keyset pages", async () => {
    const first = await list(KEY_A, { limit: '2' }).expect(200);
    expect(first.body.erasures).toEqual(expected().slice(0, 2));
    expect(typeof first.body.nextCursor).toBe('string');
    const second = await list(KEY_A, { limit: '2', cursor: first.body.nextCursor }).expect(200);
    expect(second.body).toEqual({ erasures: expected().slice(2) });
    expect(JSON.stringify([first.body, second.body])).not.toContain('secret');
    // Who ordered each erasure, never the API key itself.
    expect(JSON.stringify([first.body, second.body])).not.toContain(KEY_A);
    // Another tenant's erasures only
    const other = await list(KEY_B).expect(200);
    expect(other.body.erasures.map((e: { sessionId: string; erasedEvents: number }) => [e.sessionId, e.erasedEvents])).toEqual([['s1', 4]]);
  });

  it('refuses what the list routes refuse, with their codes', async () => {
    await h.http().get('/v1/erasures').expect(401);
    const expired = await list(KEY_A, { cursor: cursorOf('erasures', 2) }).expect(400);
    expect([expired.body.code, expired.body.parameter]).toEqual(['cursor_expired', 'cursor']);
    const another = await list(KEY_A, { cursor: cursorOf('sessions') }).expect(400);
    expect(another.body.code).toBe('invalid_query');
    expect(another.body.message).toContain('this cursor belongs to GET /v1/sessions');
    // An erasure list's cursor sent to the session list names its route.
    const back = await h
      .http()
      .get('/v1/sessions')
      .query({ cursor: cursorOf('erasures') })
      .set(as(KEY_A))
      .expect(400);
    expect(back.body.message).toContain('this cursor belongs to GET /v1/erasures');
    expect((await list(KEY_A, { limit: '0' }).expect(400)).body.code).toBe('validation_failed');
    expect((await list(KEY_A, { sessionId: 's1' }).expect(400)).body.code).toBe('validation_failed');
  });

  it('answers 404 with erasedAt for an erased session id, without it for one never written; a session written again answers its new life', async () => {
    const gone = await h.http().get('/v1/sessions/s2').set(as(KEY_A)).expect(404);
    expect(gone.body).toMatchObject({ code: 'session_not_found', erasedAt: erased[1].erasedAt });
    expect(gone.body.message).toContain(`was erased at ${erased[1].erasedAt}`);
    // The latest of two erasures of one id.
    expect((await h.http().get('/v1/sessions/s1').set(as(KEY_A)).expect(404)).body.erasedAt).toBe(erased[2].erasedAt);
    const never = await h.http().get('/v1/sessions/never').set(as(KEY_A)).expect(404);
    expect(never.body.code).toBe('session_not_found');
    expect(never.body).not.toHaveProperty('erasedAt');
    // tenantB's view of tenantA's erased s2: never written there.
    expect((await h.http().get('/v1/sessions/s2').set(as(KEY_B)).expect(404)).body).not.toHaveProperty('erasedAt');
    await write(KEY_A, 's2', 1, 'e');
    const again = await h.http().get('/v1/sessions/s2').set(as(KEY_A)).expect(200);
    expect(again.body).toMatchObject({ sessionId: 's2', revision: '1', eventCount: 1 });
    // The list is unchanged by the new life.
    expect((await list(KEY_A).expect(200)).body.erasures).toEqual(expected());
  });

  it('gives the same list from read models rebuilt from the log', async () => {
    await h.stop();
    for (const file of fs.readdirSync(h.dataDir)) if (file.startsWith('read-models.sqlite')) fs.rmSync(path.join(h.dataDir, file));
    h = await startService({ dataDir: h.dataDir, env });
    expect((await list(KEY_A).expect(200)).body.erasures).toEqual(expected());
    expect((await h.http().get('/v1/sessions/s1').set(as(KEY_A)).expect(404)).body.erasedAt).toBe(erased[2].erasedAt);
  });
});

describe('every route that addresses one erased session answers the 404 of GET /v1/sessions/{id} (newcomer F8)', () => {
  let h: Harness;
  const S = '/v1/sessions/gone';
  let compactionId: string;
  let erasedAt: string;
  let getAnswer: Record<string, unknown>;

  beforeAll(async () => {
    // Given a session with a policy and a compaction, erased.
    h = await startService({});
    const messages = Array.from({ length: 6 }, (_, i) => ({ id: `m${i}`, role: i % 2 ? 'assistant' : 'user', content: `turn ${i}` }));
    await h.http().post(`${S}/messages`).send({ messages }).expect(201);
    await h
      .http()
      .put(`${S}/policy`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 4 } })
      .expect(200);
    compactionId = (
      await h
        .http()
        .post(`${S}/compactions`)
        .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
        .expect(200)
    ).body.compactionId as string;
    erasedAt = ((await h.http().delete(S).expect(200)).body as { erasedAt: string }).erasedAt;
    getAnswer = (await h.http().get(S).expect(404)).body as Record<string, unknown>;
  }, 60_000);
  afterAll(async () => {
    await h?.stop();
  });

  it('GET /v1/sessions/{id} says when it was erased (the answer every other route gives)', () => {
    expect(getAnswer).toMatchObject({ code: 'session_not_found', erasedAt });
    expect(getAnswer.message).toBe(
      `session "gone" was erased at ${erasedAt} (its content is gone; GET /v1/erasures lists the erasures) and has not been written since`,
    );
  });

  it.each([
    ['GET window', 'get', '/window', undefined],
    ['GET window (openai)', 'get', '/window?format=openai', undefined],
    ['GET window at a revision', 'get', '/window?atRevision=0', undefined],
    ['GET window at a time', 'get', '/window?atTime=2020-01-01T00:00:00Z', undefined],
    ['GET log', 'get', '/events', undefined],
    ['GET policy', 'get', '/policy', undefined],
    ['GET compaction history', 'get', '/compactions', undefined],
    ['GET one compaction', 'get', '/compactions/COMPACTION', undefined],
    ['GET compaction diff', 'get', '/compactions/COMPACTION/diff', undefined],
    ['POST compaction', 'post', '/compactions', { strategy: { type: 'sliding-window', maxEvents: 2 } }],
    ['PUT policy clearing it', 'put', '/policy', { strategy: null }],
  ] as const)('when %s is asked of it, then it answers the same 404 with erasedAt', async (_name, method, route, body) => {
    const request = h.http()[method](`${S}${route.replace('COMPACTION', compactionId)}`);
    const answer = await (body === undefined ? request : request.send(body)).expect(404);
    expect(answer.body).toMatchObject({ code: 'session_not_found', message: getAnswer.message, erasedAt });
  });

  it.each([
    ['POST events', 'post', '/events', { events: [{ id: 'late', type: 'user', text: 'late' }], expectedRevision: '5' }, '5'],
    ['POST messages', 'post', '/messages', { messages: [{ id: 'late', role: 'user', content: 'late' }], expectedRevision: 'stream_exists' }, 'stream_exists'],
    ['PUT policy', 'put', '/policy', { strategy: { type: 'sliding-window', maxEvents: 4 }, expectedRevision: '6' }, '6'],
  ] as const)(
    'when %s expects a revision of the erased life, then the 409 says when it was erased, and nothing is written (newcomer ncfinal73 F1)',
    async (_name, method, route, body, expected) => {
      const answer = await h.http()[method](`${S}${route}`).send(body).expect(409);
      expect(answer.body).toMatchObject({ code: 'wrong_expected_revision', expected, actual: 'no_stream', erasedAt });
      expect(answer.body.message).toContain(`was erased at ${erasedAt} (its content is gone; GET /v1/erasures lists the erasures) and has no events since`);
      expect(answer.body.message).toContain('to start it again');
      expect((await h.http().get(S).expect(404)).body).toMatchObject({ code: 'session_not_found', erasedAt });
    },
  );

  it('when the session is written again, then an expectedRevision of the erased life is answered as one of an erased life, not with the new revision to retry with (newcomer ncfinal74 F1)', async () => {
    const again = await h
      .http()
      .post(`${S}/events`)
      .send({ events: [{ id: 'new1', type: 'user', text: 'a new conversation' }] })
      .expect(201);
    const head = again.body.revision as string;
    for (const [method, route, body] of [
      ['post', '/events', { events: [{ id: 'late', type: 'user', text: 'late' }], expectedRevision: '2' }],
      ['put', '/policy', { strategy: { type: 'sliding-window', maxEvents: 3 }, expectedRevision: '2' }],
    ] as const) {
      const answer = await h.http()[method](`${S}${route}`).send(body).expect(409);
      expect(answer.body).toMatchObject({ code: 'wrong_expected_revision', expected: '2', actual: head, erasedAt });
      expect(answer.body.message).toBe(
        `expected revision 2, a revision of an earlier life of this session id: the session was erased (latest at ${erasedAt}; GET /v1/erasures lists the erasures) and written again since, its current life beginning with revision ${head} and its last event at revision ${head}: what your client holds of the session is gone; read the session as it is now before writing to it`,
      );
    }
    // a stale revision of the current life keeps the plain answer
    await h
      .http()
      .post(`${S}/events`)
      .send({ events: [{ id: 'new2', type: 'user', text: 'more' }] })
      .expect(201);
    const plain = await h
      .http()
      .post(`${S}/events`)
      .send({ events: [{ id: 'late2', type: 'user', text: 'late' }], expectedRevision: head })
      .expect(409);
    expect(plain.body).not.toHaveProperty('erasedAt');
    expect(plain.body.message).toMatch(/^expected revision \d+ but the session's last event is at revision \d+: read the session and retry/);
    const log = await h.http().get(`${S}/events`).expect(200);
    expect((log.body.events as Array<{ eventId?: string }>).map((e) => e.eventId)).toEqual(['new1', 'new2']);
  });
});
