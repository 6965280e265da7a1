/**
 * Newcomer findings F1 and F2 on two replicas (in-process services) on one PostgreSQL database,
 * with a client that times out on one replica and retries on the other: the write it gave up on
 * stays held on the first replica (its store does not answer yet) while the client's retry is
 * acknowledged by the second, the session erased and written again there. Once the first replica
 * goes on, the held write must not land in the session's new life: an append (F1) is refused 409
 * `session_erased`; an erasure (F2) answers as the client's erasure did, erasing nothing more.
 * The same when the first replica's read of the session's life as the request arrives is what is
 * held (its store pool busy, newcomer ncrace74 F1: that read named the new life, so an erasure sent
 * before the other replica's erased the new life, acknowledged events included, and an append sent
 * before it was written in the new life).
 */
import type { EventStore } from '@lib/event-store';
import { AppendSessionEventsHandler, COMMAND_EVENT_STORE, EraseSessionHandler } from '@lib/session';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { usePostgresReplicas } from '../support/postgres-replicas';
import type { Harness } from '../support/service-harness';

const skipReason = postgresUnavailableReason();

/** The client's own timeout (ms): it then closes the connection and retries on the other replica. */
const CLIENT_TIMEOUT_MS = 500;

const user = (id: string) => ({ events: [{ id, type: 'user', text: `text of ${id}` }] });

/** Makes `method` of replica `h`'s command store wait, once armed, until released; returns the controls. */
function holdStore(h: Harness, method: 'appendToStream' | 'deleteStream' | 'streamIncarnation') {
  const store = h.service.app.get<EventStore>(COMMAND_EVENT_STORE);
  const original = (store[method] as (...args: unknown[]) => Promise<unknown>).bind(store);
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  let entered: () => void = () => undefined;
  const reached = new Promise<void>((resolve) => (entered = resolve));
  (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    if (gate) {
      entered();
      await gate;
    }
    return original(...args);
  };
  return {
    arm: () => {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    reached,
    release: () => {
      gate = null;
      open();
    },
    restore: () => ((store as unknown as Record<string, unknown>)[method] = original),
  };
}

/** Collects the outcomes of every command replica `h`'s handler of that kind runs, to wait for them all. */
function watchHandler(h: Harness, kind: typeof AppendSessionEventsHandler | typeof EraseSessionHandler) {
  const handler: { execute: (c: unknown) => Promise<unknown> } = h.service.app.get(kind);
  const original = handler.execute.bind(handler);
  const runs: Promise<unknown>[] = [];
  handler.execute = (command: unknown) => {
    const run = original(command);
    runs.push(run.catch((err: unknown) => err));
    return run;
  };
  return { settled: () => Promise.all(runs), restore: () => (handler.execute = original) };
}

describeUnlessSkipped(skipReason, 'two PostgreSQL replicas: a write its client gave up on never lands in the session written again after its erasure', () => {
  const replicas = usePostgresReplicas('erasefence_stale');
  let a: Harness;
  let b: Harness;
  beforeAll(() => ({ a, b } = replicas));

  const logIds = async (sessionId: string, minPosition: string) => {
    const res = await b.http().get(`/v1/sessions/${sessionId}/events`).query({ minPosition }).expect(200);
    return (res.body.events as { eventId?: string }[]).flatMap((e) => (e.eventId !== undefined ? [e.eventId] : []));
  };

  it('F1: an append held on replica A behind a slow write is not applied to the life begun after the client erased the session on B', async () => {
    await a.http().post('/v1/sessions/f1/events').send(user('u1')).expect(201);
    const hold = holdStore(a, 'appendToStream');
    const runs = watchHandler(a, AppendSessionEventsHandler);
    try {
      hold.arm();
      // another client's slow write to the session on A, and this client's append queued behind it
      const slow = a
        .http()
        .post('/v1/sessions/f1/events')
        .send(user('slow'))
        .then((res) => res);
      await hold.reached;
      const gaveUp = await a
        .http()
        .post('/v1/sessions/f1/events')
        .send(user('x'))
        .timeout(CLIENT_TIMEOUT_MS)
        .then(
          () => null,
          (err: Error) => err,
        );
      expect(gaveUp?.message).toMatch(/timeout/i);
      // the client retries on B (acknowledged), erases the session there and writes its new life
      await b.http().post('/v1/sessions/f1/events').send(user('x')).expect(201);
      await b.http().delete('/v1/sessions/f1').expect(200);
      const n1 = await b.http().post('/v1/sessions/f1/events').send(user('n1')).expect(201);
      hold.release();
      const slowAnswer = await slow;
      await runs.settled();
      // nothing of the erased life is in the new one (before: ['n1', 'slow', 'x'], the erased life's 'x' written again after 'n1')
      expect(await logIds('f1', n1.body.position)).toEqual(['n1']);
      expect(slowAnswer.status).toBe(409);
      expect(slowAnswer.body.code).toBe('session_erased');
    } finally {
      hold.restore();
      runs.restore();
    }
  });

  it("F2: an erasure held on replica A, retried by its client on B, answers as B's did and leaves the session's new life alone", async () => {
    for (const id of ['u1', 'u2']) await b.http().post('/v1/sessions/f2/events').send(user(id)).expect(201);
    const hold = holdStore(a, 'deleteStream');
    const runs = watchHandler(a, EraseSessionHandler);
    try {
      hold.arm();
      const gaveUp = a
        .http()
        .delete('/v1/sessions/f2')
        .timeout(CLIENT_TIMEOUT_MS)
        .then(
          () => null,
          (err: Error) => err,
        );
      await hold.reached;
      expect((await gaveUp)?.message).toMatch(/timeout/i);
      const erased = await b.http().delete('/v1/sessions/f2').expect(200);
      const n1 = await b.http().post('/v1/sessions/f2/events').send(user('n1')).expect(201);
      hold.release();
      const [answered] = await runs.settled();
      expect(answered).toEqual(erased.body);
      expect(await logIds('f2', n1.body.position)).toEqual(['n1']);
      const erasures = await b.http().get('/v1/erasures').expect(200);
      expect((erasures.body.erasures as { sessionId: string }[]).filter((e) => e.sessionId === 'f2')).toHaveLength(1);
    } finally {
      hold.restore();
      runs.restore();
    }
  });

  it.each(['erasure', 'append'] as const)(
    "ncrace74 F1: an %s sent to replica A before B's erasure, whose read of the session's life ends only after B erased the session and wrote it again, leaves the new life alone",
    async (kind) => {
      const sessionId = `late-life-${kind}`;
      for (const id of ['u1', 'u2']) await b.http().post(`/v1/sessions/${sessionId}/events`).send(user(id)).expect(201);
      const hold = holdStore(a, 'streamIncarnation');
      try {
        hold.arm();
        const sent = (
          kind === 'erasure' ? a.http().delete(`/v1/sessions/${sessionId}`) : a.http().post(`/v1/sessions/${sessionId}/events`).send(user('late'))
        ).then((res) => res);
        await hold.reached;
        // B's erasure comes after A received its request (by the clocks both read), then the new life is written and acknowledged.
        await new Promise((resolve) => setTimeout(resolve, 20));
        const erased = await b.http().delete(`/v1/sessions/${sessionId}`).expect(200);
        const n1 = await b.http().post(`/v1/sessions/${sessionId}/events`).send(user('n1')).expect(201);
        hold.release();
        const answer = await sent;
        if (kind === 'erasure') {
          // before: 200 with a record of its own, erasing the new life ('n1' gone)
          expect(answer.status).toBe(200);
          expect(answer.body).toEqual(erased.body);
        } else {
          // before: 201, 'late' written in the new life after 'n1'
          expect(answer.status).toBe(409);
          expect(answer.body.code).toBe('session_erased');
        }
        expect(await logIds(sessionId, n1.body.position)).toEqual(['n1']);
        const erasures = await b.http().get('/v1/erasures').expect(200);
        expect((erasures.body.erasures as { sessionId: string }[]).filter((e) => e.sessionId === sessionId)).toHaveLength(1);
      } finally {
        hold.restore();
      }
    },
  );
});
