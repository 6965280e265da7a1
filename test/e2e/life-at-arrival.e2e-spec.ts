/**
 * A write request is written in the life its session was in when the request arrived, or refused
 * (`checkWriteAdmission`'s rule 3), also when it waited before its handler started: pipelined
 * behind a slow request on its connection, or its body still arriving (newcomer ncretry's F2: such
 * an append, or `DELETE`, was applied to a new life begun meanwhile on another connection). A
 * request pipelined behind an erasure of its own session on its connection is written in the new
 * life, as on separate round trips. A request pipelined behind a held request with a large body is
 * read as it arrives (newcomer ncpipeline's F1), not when the held one's turn comes.
 */
import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { EventStore } from '@lib/event-store';
import { COMMAND_EVENT_STORE } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';
import { holdAppends } from '../support/held-appends';
import { requestBytes, rawConnections } from '../support/raw-connection';

const user = (id: string) => JSON.stringify({ events: [{ id, type: 'user', text: `text of ${id}` }] });

describe('a write is written in the life its session was in when it arrived (pipelined, slow body)', () => {
  let h: Harness;
  let port: number;
  let store: EventStore;
  const { connect, closeAll } = rawConnections(() => port);

  beforeAll(async () => {
    h = await startService();
    await h.service.app.listen(0, '127.0.0.1');
    port = (h.service.app.getHttpServer().address() as AddressInfo).port;
    store = h.service.app.get<EventStore>(COMMAND_EVENT_STORE);
  });
  afterAll(async () => {
    closeAll();
    await h?.stop();
    if (h) fs.rmSync(h.dataDir, { recursive: true, force: true });
  });

  /** Holds every append to session `sessionId`'s stream until `open` is called; `reached` once one is held. */
  const holdAppendsTo = (sessionId: string) => holdAppends(store, (stream) => stream.endsWith(sessionId));

  /** Erases `sessionId` and writes `id` into its new life, on a connection of its own. */
  const eraseAndWriteAgain = async (sessionId: string, id: string): Promise<void> => {
    await h.http().delete(`/v1/sessions/${sessionId}`).expect(200);
    await h.http().post(`/v1/sessions/${sessionId}/events`).set('Content-Type', 'application/json').send(user(id)).expect(201);
  };

  /**
   * Appends `body` (an event over the projector's LARGE_BATCH_TEXT) to `sessionId` and waits (at most 40 s, within the test's 60 s) until its log
   * reads: that batch is projected in the worker thread for large batches, which under ts-node first compiles the
   * projector (seconds on a loaded machine: a read waiting for it answered 503 after 10 s in a CI run at load 8). Started
   * here, the worker stays up for the test's own large batch, so its reads wait for the projection alone.
   */
  const largeBatchWorkerStarted = async (sessionId: string, body: string): Promise<void> => {
    await h.http().post(`/v1/sessions/${sessionId}/events`).set('Content-Type', 'application/json').send(body).expect(201);
    for (const until = Date.now() + 40_000; (await h.http().get(`/v1/sessions/${sessionId}/events`)).status !== 200;)
      if (Date.now() > until) throw new Error(`the large event of ${sessionId} was not projected within 40 s`);
  };

  const loggedIds = async (sessionId: string): Promise<string[]> => {
    const log = await h.http().get(`/v1/sessions/${sessionId}/events`).expect(200);
    return (log.body.events as { eventId?: string }[]).map((e) => e.eventId ?? '');
  };

  const erasureCount = async (sessionId: string): Promise<number> => {
    const list = await h.http().get('/v1/erasures').expect(200);
    return (list.body.erasures as { sessionId: string }[]).filter((e) => e.sessionId === sessionId).length;
  };

  it('refuses 409 session_erased an append pipelined behind a slow request while its session was erased and written again', async () => {
    await h.http().post('/v1/sessions/p1/events').set('Content-Type', 'application/json').send(user('old')).expect(201);
    const held = holdAppendsTo('slow-1');
    const c = connect();
    c.send(requestBytes('POST', '/v1/sessions/slow-1/events', user('s1')) + requestBytes('POST', '/v1/sessions/p1/events', user('late')));
    await held.reached;
    // the pipelined append's head is in: erased and written again meanwhile, on another connection
    await new Promise((resolve) => setTimeout(resolve, 100));
    await eraseAndWriteAgain('p1', 'new');
    held.open();
    const [slow, late] = await c.next(2);
    expect(slow.status).toBe(201);
    expect({ status: late.status, code: late.body.code }).toEqual({ status: 409, code: 'session_erased' });
    expect(await loggedIds('p1')).toEqual(['new']);
  });

  it('refuses 409 session_erased an append whose body finished after its session was erased and written again', async () => {
    await h.http().post('/v1/sessions/p2/events').set('Content-Type', 'application/json').send(user('old')).expect(201);
    const c = connect();
    const bytes = requestBytes('POST', '/v1/sessions/p2/events', user('late'));
    const cut = bytes.length - 10;
    c.send(bytes.slice(0, cut));
    await new Promise((resolve) => setTimeout(resolve, 100));
    await eraseAndWriteAgain('p2', 'new');
    c.send(bytes.slice(cut));
    const [late] = await c.next(1);
    expect({ status: late.status, code: late.body.code }).toEqual({ status: 409, code: 'session_erased' });
    expect(await loggedIds('p2')).toEqual(['new']);
  });

  it('a DELETE pipelined behind a slow request answers the erasure of the life it arrived in, and leaves the new life alone', async () => {
    await h.http().post('/v1/sessions/p3/events').set('Content-Type', 'application/json').send(user('old')).expect(201);
    const held = holdAppendsTo('slow-3');
    const c = connect();
    c.send(requestBytes('POST', '/v1/sessions/slow-3/events', user('s3')) + requestBytes('DELETE', '/v1/sessions/p3'));
    await held.reached;
    await new Promise((resolve) => setTimeout(resolve, 100));
    await eraseAndWriteAgain('p3', 'new');
    held.open();
    const [slow, erased] = await c.next(2);
    expect(slow.status).toBe(201);
    expect(erased.status).toBe(200);
    expect(erased.body.erasedEvents).toBe(1);
    expect(await loggedIds('p3')).toEqual(['new']);
    expect(await erasureCount('p3')).toBe(1);
  });

  it('refuses 409 session_erased a policy pipelined behind a slow request while its session was erased and written again', async () => {
    await h.http().post('/v1/sessions/p4/events').set('Content-Type', 'application/json').send(user('old')).expect(201);
    const held = holdAppendsTo('slow-4');
    const c = connect();
    const policy = JSON.stringify({ strategy: { type: 'sliding-window', maxEvents: 5 } });
    c.send(requestBytes('POST', '/v1/sessions/slow-4/events', user('s4')) + requestBytes('PUT', '/v1/sessions/p4/policy', policy));
    await held.reached;
    await new Promise((resolve) => setTimeout(resolve, 100));
    await eraseAndWriteAgain('p4', 'new');
    held.open();
    const [slow, late] = await c.next(2);
    expect(slow.status).toBe(201);
    expect({ status: late.status, code: late.body.code }).toEqual({ status: 409, code: 'session_erased' });
    const current = await h.http().get('/v1/sessions/p4/policy').expect(200);
    expect(current.body.strategy).toBeNull();
  });

  it('writes a request pipelined behind an erasure of its own session in the new life, as on separate round trips', async () => {
    await h.http().post('/v1/sessions/p5/events').set('Content-Type', 'application/json').send(user('old')).expect(201);
    const c = connect();
    c.send(
      requestBytes('DELETE', '/v1/sessions/p5') + requestBytes('POST', '/v1/sessions/p5/events', user('next')) + requestBytes('DELETE', '/v1/sessions/p5'),
    );
    const [erased, written, erasedAgain] = await c.next(3);
    expect({ status: erased.status, erasedEvents: erased.body.erasedEvents }).toEqual({ status: 200, erasedEvents: 1 });
    expect(written.status).toBe(201);
    expect({ status: erasedAgain.status, erasedEvents: erasedAgain.body.erasedEvents }).toEqual({ status: 200, erasedEvents: 1 });
    expect(await erasureCount('p5')).toBe(2);
  });

  /** A request with a chunked body (two chunks), keeping the connection open. */
  const chunkedRequestBytes = (method: string, path: string, body: string): string => {
    const half = Math.floor(body.length / 2);
    const chunk = (part: string) => `${Buffer.byteLength(part).toString(16)}\r\n${part}\r\n`;
    return `${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunk(body.slice(0, half))}${chunk(body.slice(half))}0\r\n\r\n`;
  };

  // Newcomer ncpipeline's F1: Node stopped reading a connection at 16 KiB of a held body, so the heads behind it were read
  // (their life and deadline started) only when its turn came: this DELETE erased the life written after it was sent.
  it.each([
    ['Content-Length', (path: string, body: string) => requestBytes('POST', path, body)],
    ['chunked', (path: string, body: string) => chunkedRequestBytes('POST', path, body)],
  ])('reads a DELETE pipelined behind a held request with a large body (%s) as it arrives: it erases the life it arrived in', async (framing, bodyRequest) => {
    const id = `p6-${framing.toLowerCase()}`;
    await h.http().post(`/v1/sessions/${id}/events`).set('Content-Type', 'application/json').send(user('old')).expect(201);
    const large = JSON.stringify({ events: [{ id: 'large', type: 'user', text: 'word '.repeat(60_000) }] });
    await largeBatchWorkerStarted(`warm-${id}`, large);
    const held = holdAppendsTo(`slow-${id}`);
    const c = connect();
    c.send(
      requestBytes('POST', `/v1/sessions/slow-${id}/events`, user('s6')) +
        bodyRequest(`/v1/sessions/large-${id}/events`, large) +
        requestBytes('DELETE', `/v1/sessions/${id}`),
    );
    await held.reached;
    await new Promise((resolve) => setTimeout(resolve, 300));
    await eraseAndWriteAgain(id, 'new');
    held.open();
    const [slow, largeAnswer, erased] = await c.next(3);
    expect([slow.status, largeAnswer.status]).toEqual([201, 201]);
    expect({ status: erased.status, erasedEvents: erased.body.erasedEvents }).toEqual({ status: 200, erasedEvents: 1 });
    expect(await loggedIds(id)).toEqual(['new']);
    expect(await erasureCount(id)).toBe(1);
  });
});
