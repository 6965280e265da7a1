/**
 * The write deadline over HTTP (`WRITE_DEADLINE_MS`): an append queued behind a slow write to its
 * session, whose write cannot start within the deadline of its arrival, is answered 503
 * `request_expired` with `deadlineMs`, nothing written; the write ahead of it, started in time, is
 * written (newcomer finding F1 on one SQLite process: an append was written 22 s after its
 * session's erasure).
 */
import * as fs from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { EventStore } from '@lib/event-store';
import { COMMAND_EVENT_STORE } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';
import { holdAppends } from '../support/held-appends';
import { RawConnection, requestBytes } from '../support/raw-connection';

const user = (id: string) => ({ events: [{ id, type: 'user', text: `text of ${id}` }] });

describe('WRITE_DEADLINE_MS: a write that cannot start in time is refused, never written later', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startService({ env: { WRITE_DEADLINE_MS: '100' } });
  });
  afterAll(async () => {
    await h?.stop();
    if (h) fs.rmSync(h.dataDir, { recursive: true, force: true });
  });

  it('answers 503 request_expired (deadlineMs) to an append queued past the deadline, and writes it neither then nor later', async () => {
    await h.http().post('/v1/sessions/late/events').send(user('u1')).expect(201);
    const store = h.service.app.get<EventStore>(COMMAND_EVENT_STORE);
    const held = holdAppends(store, () => true);
    try {
      const slow = h
        .http()
        .post('/v1/sessions/late/events')
        .send(user('slow'))
        .then((res) => res);
      await held.reached;
      const late = h
        .http()
        .post('/v1/sessions/late/events')
        .send(user('late'))
        .then((res) => res);
      // well past the 100 ms deadline of the queued append (a wait for the deadline, not a timing assertion)
      await new Promise((resolve) => setTimeout(resolve, 500));
      held.open();
      expect((await slow).status).toBe(201);
      const refused = await late;
      expect({ status: refused.status, code: refused.body.code, deadlineMs: refused.body.deadlineMs }).toEqual({
        status: 503,
        code: 'request_expired',
        deadlineMs: 100,
      });
      expect(refused.body.message).toContain('WRITE_DEADLINE_MS');
    } finally {
      held.open();
    }
    const log = await h.http().get('/v1/sessions/late/events').expect(200);
    expect((log.body.events as { eventId?: string }[]).map((e) => e.eventId)).toEqual(['u1', 'slow']);
  });

  // It said "(the service is busy)" when the client's own slow upload had used the deadline up.
  it('counts the deadline from the head: a body arriving after it is refused 503 request_expired, the message saying so without naming a cause', async () => {
    const server = h.service.app.getHttpServer();
    if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const c = new RawConnection((server.address() as AddressInfo).port);
    try {
      const bytes = requestBytes('POST', '/v1/sessions/slow-upload/events', JSON.stringify(user('s1')));
      const cut = bytes.length - 10;
      c.send(bytes.slice(0, cut));
      // well past the 100 ms deadline (a wait for the deadline, not a timing assertion)
      await new Promise((resolve) => setTimeout(resolve, 500));
      c.send(bytes.slice(cut));
      const [refused] = await c.next(1);
      expect({ status: refused.status, code: refused.body.code, deadlineMs: refused.body.deadlineMs }).toEqual({
        status: 503,
        code: 'request_expired',
        deadlineMs: 100,
      });
      expect(refused.body.message).toMatch(
        /100 ms write deadline \(WRITE_DEADLINE_MS\), counted from when this replica received the request's head: the time its body took to arrive counts/,
      );
      expect(refused.body.message).not.toContain('busy');
    } finally {
      c.socket.destroy();
    }
    await h.http().get('/v1/sessions/slow-upload').expect(404);
  });
});
