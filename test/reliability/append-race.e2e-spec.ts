/**
 * The append race (issue 11): tool-call consistency is checked against the state at revision R and
 * the append is written at expected revision R, so two concurrent answers to one open call can
 * never both land. A conflict reloads, re-checks and retries; a client's own expectedRevision wins.
 */
import type { EventStore } from '@lib/event-store';
import { EVENT_STORE, sessionKey, sessionStream } from '@lib/session';
import { useService, type Harness } from '../support/service-harness';

/** Tool events in the stream of `sessionId` (open mode, tenant `default`), read from the store itself. */
async function toolEventsInLog(h: Harness, sessionId: string): Promise<number> {
  const store = h.service.app.get<EventStore>(EVENT_STORE);
  const events = await store.readStream(sessionStream(sessionKey('default', sessionId)));
  return events.filter((e) => (e.data as { event?: { type?: string } }).event?.type === 'tool').length;
}

const ROUNDS = 50;

describe('concurrent appends', () => {
  const h = useService();
  beforeAll(() => {
    // Widen the window between the state load and the append, as a slow disk or a busy event loop
    // would: both requests of a round then check the same state before either writes.
    const store = h.service.app.get<EventStore>(EVENT_STORE);
    const append = store.appendToStream.bind(store);
    store.appendToStream = async (...args) => {
      await new Promise((resolve) => setTimeout(resolve, 15));
      return append(...args);
    };
  });

  it(`accepts exactly one of two concurrent answers to one open call, ${ROUNDS} rounds out of ${ROUNDS}`, async () => {
    const outcomes: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const path = `/v1/sessions/race-${round}/events`;
      const opened = await h
        .http()
        .post(path)
        .send({
          events: [
            { id: 'u1', type: 'user', text: 'look it up' },
            { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }] },
          ],
        });
      expect(opened.status).toBe(201);
      const answer = (id: string) =>
        h
          .http()
          .post(path)
          .send({ events: [{ id, type: 'tool', responses: [{ toolCallId: 'call_1', name: 'lookup', data: `{"by":"${id}"}` }] }] });
      const [a, b] = await Promise.all([answer('t-a'), answer('t-b')]);
      const statuses = [a.status, b.status].sort();
      outcomes.push(statuses.join('/'));
      const tools = await toolEventsInLog(h, `race-${round}`);
      expect({ round, statuses, tools }).toEqual({ round, statuses: [201, 422], tools: 1 });
      const loser = a.status === 422 ? a : b;
      expect(loser.body.code).toBe('tool_call_conflict');
    }
    expect(outcomes.filter((o) => o === '201/422')).toHaveLength(ROUNDS);
  });

  it('answers a retried tool response with its original result and writes nothing', async () => {
    const path = '/v1/sessions/retry-tool/events';
    await h
      .http()
      .post(path)
      .send({
        events: [
          { id: 'u1', type: 'user', text: 'go' },
          { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'k', name: 'f', arguments: '{}' }] },
        ],
      })
      .expect(201);
    const body = { events: [{ id: 't1', type: 'tool', responses: [{ toolCallId: 'k', name: 'f', data: 'ok' }] }] };
    const first = await h.http().post(path).send(body).expect(201);
    const again = await h.http().post(path).send(body);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
  });

  it('keeps a client expectedRevision authoritative: a stale one is 409, never retried', async () => {
    const path = '/v1/sessions/client-revision/events';
    await h
      .http()
      .post(path)
      .send({ events: [{ id: 'u1', type: 'user', text: 'one' }] })
      .expect(201);
    await h
      .http()
      .post(path)
      .send({ events: [{ id: 'u2', type: 'user', text: 'two' }] })
      .expect(201);
    const stale = await h
      .http()
      .post(path)
      .send({ events: [{ id: 'u3', type: 'user', text: 'three' }], expectedRevision: 0 });
    expect(stale.status).toBe(409);
    expect(stale.body.code).toBe('wrong_expected_revision');
  });

  // Newcomer, stop 24: with an auto-compaction policy, every other append of a lone writer chaining
  // the revisions it was answered got 409 (the service's own decisions had moved the revision).
  it("does not count the service's own compactions against a client's expectedRevision: a lone writer chaining its revisions under auto-compaction is never refused", async () => {
    const session = '/v1/sessions/chained-under-auto';
    let revision = (
      await h
        .http()
        .put(`${session}/policy`)
        .send({ strategy: { type: 'sliding-window', maxEvents: 2 } })
        .expect(200)
    ).body.revision as string;
    const statuses: number[] = [];
    for (let turn = 0; turn < 8; turn++) {
      const r = await h
        .http()
        .post(`${session}/events`)
        .send({
          expectedRevision: revision,
          events: [
            { id: `u${turn}`, type: 'user', text: `question ${turn}` },
            { id: `a${turn}`, type: 'assistant', text: `answer ${turn}` },
          ],
        });
      statuses.push(r.status);
      revision = r.status === 201 ? (r.body.revision as string) : (r.body.actual as string);
      // Time for the background pass to write its decisions after the answer.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(statuses).toEqual(Array(8).fill(201));
    const compactions = await h.http().get(`${session}/compactions`).expect(200);
    // The race happened: passes ran between the appends.
    expect(compactions.body.compactions.length).toBeGreaterThan(2);
  });

  // The keywords as the README's "Optimistic concurrency" says.
  it('takes the expectedRevision keywords any, no_stream and stream_exists; a resend answers its original result', async () => {
    const append = (sessionId: string, id: string, expectedRevision: unknown) =>
      h
        .http()
        .post(`/v1/sessions/${sessionId}/events`)
        .send({ events: [{ id, type: 'user', text: id }], expectedRevision });
    const created = await append('keywords', 'k1', 'no_stream');
    expect([created.status, created.body.revision]).toEqual([201, '0']);
    expect((await append('keywords', 'k1', 'no_stream')).body).toEqual(created.body);
    const exists = await append('keywords', 'k2', 'no_stream');
    expect([exists.status, exists.body]).toMatchObject([409, { code: 'wrong_expected_revision', expected: 'no_stream', actual: '0' }]);
    const more = await append('keywords', 'k2', 'stream_exists');
    expect([more.status, more.body.revision]).toEqual([201, '1']);
    expect((await append('keywords', 'k2', 'stream_exists')).body).toEqual(more.body);
    const missing = await append('keywords-none', 'k1', 'stream_exists');
    expect([missing.status, missing.body]).toMatchObject([409, { code: 'wrong_expected_revision', expected: 'stream_exists', actual: 'no_stream' }]);
    expect((await append('keywords', 'k3', 'any')).body.revision).toBe('2');
    expect((await append('keywords-any', 'k1', 'any')).body.revision).toBe('0');
    expect((await append('keywords', 'k4', '2')).body.revision).toBe('3');
    // A session created by setting a policy exists.
    await h
      .http()
      .put('/v1/sessions/keywords-policy/policy')
      .send({ strategy: { type: 'sliding-window', maxEvents: 10 } })
      .expect(200);
    expect((await append('keywords-policy', 'k1', 'no_stream')).status).toBe(409);
    expect((await append('keywords-policy', 'k1', 'stream_exists')).status).toBe(201);
  });
});

describe('policy PUT', () => {
  const h = useService();

  const policyEvents = async (sessionId: string) => {
    const store = h.service.app.get<EventStore>(EVENT_STORE);
    return (await store.readStream(sessionStream(sessionKey('default', sessionId)))).filter((e) => e.type === 'AutoCompactionPolicySet');
  };

  it('records the same body sent twice once, and the retry answers the original', async () => {
    const body = { strategy: { type: 'sliding-window', maxEvents: 30 }, trigger: { type: 'turn-count', maxTurns: 5 } };
    const first = await h.http().put('/v1/sessions/policy-retry/policy').send(body).expect(200);
    const again = await h.http().put('/v1/sessions/policy-retry/policy').send(body).expect(200);
    expect(again.body).toEqual(first.body);
    expect(await policyEvents('policy-retry')).toHaveLength(1);
  });

  it('records one event for two identical PUTs sent at once, and a change after it', async () => {
    const body = { strategy: { type: 'turn-window', maxTurns: 3 } };
    const [a, b] = await Promise.all([0, 1].map(() => h.http().put('/v1/sessions/policy-race/policy').send(body)));
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.revision).toBe(b.body.revision);
    await h.http().put('/v1/sessions/policy-race/policy').send({ strategy: null }).expect(200);
    await h.http().put('/v1/sessions/policy-race/policy').send(body).expect(200);
    expect(await policyEvents('policy-race')).toHaveLength(3);
  });
});

describe('many concurrent appends to one session, without expectedRevision', () => {
  const h = useService();
  const REQUESTS = 480;
  const CONCURRENCY = 32;

  it(`accepts all ${REQUESTS} (${CONCURRENCY} at a time) and writes each event once, at contiguous revisions`, async () => {
    const path = '/v1/sessions/hot-session/events';
    const statuses: number[] = [];
    const conflicts: unknown[] = [];
    let next = 0;
    const worker = async () => {
      while (next < REQUESTS) {
        const i = next++;
        const res = await h
          .http()
          .post(path)
          .send({ events: [{ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `message ${i}` }] });
        statuses.push(res.status);
        if (res.status !== 201) conflicts.push(res.body);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    expect(conflicts.slice(0, 3)).toEqual([]);
    expect(statuses.filter((s) => s === 201)).toHaveLength(REQUESTS);
    const store = h.service.app.get<EventStore>(EVENT_STORE);
    const events = await store.readStream(sessionStream(sessionKey('default', 'hot-session')));
    expect(events.map((e) => e.revision)).toEqual(events.map((_, i) => BigInt(i)));
    const ids = events.map((e) => (e.data as { event: { id: string } }).event.id);
    expect(new Set(ids).size).toBe(REQUESTS);
  });
});
