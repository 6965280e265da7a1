/**
 * Long sessions and the event loop (newcomer ncnoisy F1): one request on a session of thousands of
 * events held the event loop for its whole work (seconds at 30,000 events), so no other request,
 * `/health` included, ran meanwhile. Now a window read (every format, now and at a past revision)
 * and a compaction's diff give the event loop turns while they build their answer, and serialize it
 * in pieces (no `JSON.stringify` of the whole answer in one stretch), and the read models' erasure of a session
 * runs in the projector's worker thread. Asserted by order, not time: how many turns of the event
 * loop ran between the start and the end of the work, the longest text one `JSON.stringify` call
 * made during a request, and on which thread the erasure ran.
 */
import * as fs from 'node:fs';
import { SessionHistoryReads } from '../../libs/session/src/queries/session-history-reads';
import { SessionReads } from '../../libs/session/src/queries/session-reads';
import { SessionReadModelWriter } from '../../libs/session/src/read-side/session-read-model-writer';
import { startService, type Harness } from '../support/service-harness';

const EVENTS = 10_000;

/** Turns of the event loop (setImmediate callbacks) that ran between each call of `method` and its settling. */
function turnsDuring<T extends object>(prototype: T, method: keyof T & string): number[] {
  const turns: number[] = [];
  const original = prototype[method] as (...args: unknown[]) => unknown;
  jest.spyOn(prototype, method as never).mockImplementation(function (this: unknown, ...args: unknown[]) {
    let count = 0;
    let settled = false;
    const tick = (): void => {
      if (settled) return;
      count++;
      setImmediate(tick);
    };
    setImmediate(tick);
    const done = (): void => {
      settled = true;
      turns.push(count);
    };
    const result = original.apply(this, args);
    void Promise.resolve(result).then(done, done);
    return result as never;
  });
  return turns;
}

/**
 * Records the length of the longest text one `JSON.stringify` call returned while `request` ran
 * (Fastify serializes an answer object with one call; the service serializes a large one in pieces).
 */
async function longestStringifyDuring<T>(request: () => PromiseLike<T>): Promise<{ result: T; longest: number }> {
  const original = JSON.stringify;
  let longest = 0;
  const spy = jest.spyOn(JSON, 'stringify').mockImplementation(((...args: Parameters<typeof JSON.stringify>) => {
    const text = original(...args);
    if (typeof text === 'string' && text.length > longest) longest = text.length;
    return text;
  }) as typeof JSON.stringify);
  try {
    return { result: await request(), longest };
  } finally {
    spy.mockRestore();
  }
}

describe('a long session does not hold the event loop for a whole request', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startService();
    for (let b = 0; b < EVENTS / 1000; b++)
      await harness
        .http()
        .post('/v1/sessions/long/events')
        .send({
          events: Array.from({ length: 1000 }, (_, i) => ({
            id: `l${b}-${i}`,
            type: i % 2 ? 'assistant' : 'user',
            text: `turn ${b * 1000 + i} about the invoice and refund number ${(i * 31) % 997}`,
          })),
        })
        .expect(201);
    const last = await harness
      .http()
      .post('/v1/sessions/long/events')
      .send({ events: [{ id: 'last', type: 'user', text: 'the last one, about a parcel' }] })
      .expect(201);
    await harness.projected(last.body.position);
  });
  afterAll(async () => {
    await harness.stop();
    fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });
  afterEach(() => jest.restoreAllMocks());

  it.each([
    ['the window', ''],
    ['the window in format openai', '?format=openai'],
    ['the window at a past revision', `?atRevision=${EVENTS - 1000}`],
  ])('%s: the event loop gets turns while the answer of 10,000 events is built', async (_label, query) => {
    const turns = turnsDuring(SessionReads.prototype, 'windowJson');
    const answer = await harness.http().get(`/v1/sessions/long/window${query}`).expect(200);
    expect((answer.body.events ?? answer.body.messages).length).toBeGreaterThanOrEqual(EVENTS - 1000);
    expect(turns).toHaveLength(1);
    // One turn at least every few thousand events: more than the two or three a request's own awaits give.
    expect(turns[0]).toBeGreaterThanOrEqual(3);
  });

  it.each([
    ['the window in format openai', '?format=openai'],
    ['the window at a past revision', `?atRevision=${EVENTS - 1000}`],
  ])('%s: the answer (MBs) is not serialized by one JSON.stringify; its bytes are its JSON, HEAD answers its length', async (_label, query) => {
    const { result: answer, longest } = await longestStringifyDuring(() => harness.http().get(`/v1/sessions/long/window${query}`).expect(200));
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(Number(answer.headers['content-length'])).toBe(Buffer.byteLength(answer.text));
    expect(answer.text.length).toBeGreaterThan(500_000);
    expect(answer.text).toBe(JSON.stringify(answer.body));
    // The old answer was one JSON.stringify of the whole body; now no piece is over a tenth of it.
    expect(longest).toBeLessThan(answer.text.length / 10);
    const head = await harness.http().head(`/v1/sessions/long/window${query}`).expect(200);
    expect(head.headers['content-length']).toBe(answer.headers['content-length']);
    expect(head.text ?? '').toBe('');
  });

  it('an error of a large-answer route is answered before any byte, as before: 404 session_not_found, 400 for a bad revision', async () => {
    expect((await harness.http().get('/v1/sessions/nope/window?format=openai').expect(404)).body.code).toBe('session_not_found');
    expect(
      (
        await harness
          .http()
          .get(`/v1/sessions/long/window?atRevision=${10 * EVENTS}`)
          .expect(400)
      ).body.code,
    ).toBe('revision_out_of_range');
  });

  it('the compaction diff: the event loop gets turns while the two windows of 10,000 events are folded', async () => {
    const compaction = await harness
      .http()
      .post('/v1/sessions/long/compactions')
      .send({ strategy: { type: 'token-count', maxTokens: 2000 } })
      .expect(200);
    const turns = turnsDuring(SessionHistoryReads.prototype, 'diff');
    const { result: diff, longest } = await longestStringifyDuring(() =>
      harness.http().get(`/v1/sessions/long/compactions/${compaction.body.compactionId}/diff`).expect(200),
    );
    expect(diff.body.before.events.length).toBeGreaterThan(EVENTS);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toBeGreaterThanOrEqual(3);
    // Serialized in pieces, not by one JSON.stringify of the whole diff; the bytes are its JSON.
    expect(diff.text).toBe(JSON.stringify(diff.body));
    expect(Number(diff.headers['content-length'])).toBe(Buffer.byteLength(diff.text));
    expect(longest).toBeLessThan(diff.text.length / 10);
  });

  it('the erasure: the read models lose the session in the projector worker thread, not on the event loop; then nothing of it is read', async () => {
    // The worker thread starts on this first need (under ts-node it may take seconds): the erasure waits for it.
    const onTheEventLoop = jest.spyOn(SessionReadModelWriter.prototype, 'eraseSession');
    const erased = await harness.http().delete('/v1/sessions/long').expect(200);
    expect(erased.body.erasedEvents).toBeGreaterThan(EVENTS);
    expect(onTheEventLoop).not.toHaveBeenCalled();
    await harness.http().get('/v1/sessions/long/window').expect(404);
    expect((await harness.http().get('/v1/recall?q=invoice').expect(200)).body.items).toEqual([]);
    expect((await harness.http().get('/v1/recall?q=parcel').expect(200)).body.items).toEqual([]);
  });
});
