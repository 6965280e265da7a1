/**
 * An erasure interrupted between its two writes (newcomer ncrace71 F1): its replica killed after
 * the session's stream was deleted and before the erasure record was appended. Nothing told the
 * read models, so every replica served the deleted events (session, window, recall) and merged them
 * into the session's next life until a client sent the DELETE again. The sweep every replica runs
 * (`InterruptedErasureSweep`, at start and every minute) writes the missing record. The kill is
 * simulated by deleting the stream through the store, as the erasure's first write does.
 */
import * as fs from 'node:fs';
import { COMMAND_EVENT_STORE, EraseSessionHandler, InterruptedErasureSweep, sessionKey, sessionStream } from '@lib/session';
import type { EventStore } from '@lib/event-store';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { usePostgresReplicas } from '../support/postgres-replicas';
import { startService, useService, type Harness } from '../support/service-harness';

const events = (ids: string[], text: string) => ({ events: ids.map((id) => ({ id, type: 'user', text: `${text} ${id}` })) });

/** Deletes the session's stream as an erasure's first write does, and writes no record: the erasure's replica "killed" between the two. */
async function deleteWithoutRecord(h: Harness, sessionId: string): Promise<void> {
  await h.service.app.get<EventStore>(COMMAND_EVENT_STORE).deleteStream(sessionStream(sessionKey('default', sessionId)));
}

/**
 * Writes `ids` (user events whose text holds `word`) to `sessionId` through `writer`, waits until
 * `reader` has projected them, then deletes the stream as an interrupted erasure leaves it ({@link deleteWithoutRecord}).
 */
async function writtenThenDeleted(writer: Harness, reader: Harness, sessionId: string, ids: string[], word: string): Promise<void> {
  const written = await writer
    .http()
    .post(`/v1/sessions/${sessionId}/events`)
    .send(events(ids, `${word} old`))
    .expect(201);
  await reader
    .http()
    .get(`/v1/sessions/${sessionId}?minPosition=${written.body.position as string}`)
    .expect(200);
  await deleteWithoutRecord(writer, sessionId);
}

/**
 * Makes replica `h` write new lives as builds before 2026-12-07 did: one whose read models hold no
 * row of the deleted life leaves its missing record to the other replicas' sweeps.
 */
function asBuildBeforeRecordingUnheldLives(h: Harness): void {
  jest.spyOn(h.service.app.get(EraseSessionHandler), 'finishInterruptedNotHeld').mockResolvedValue(null);
}

/** The ids of the session's active window on `h`, read at `minPosition` (decimal text). */
async function windowIds(h: Harness, sessionId: string, minPosition: string): Promise<string[]> {
  const res = await h.http().get(`/v1/sessions/${sessionId}/window?minPosition=${minPosition}`).expect(200);
  return (res.body as { events: Array<{ id: string }> }).events.map((e) => e.id);
}

/** The ids of recall's hits of `q` on `h`. */
async function recallIds(h: Harness, q: string, minPosition: string): Promise<string[]> {
  const res = await h.http().get(`/v1/recall?q=${q}&minPosition=${minPosition}`).expect(200);
  return (res.body as { items: Array<{ eventId: string }> }).items.map((hit) => hit.eventId);
}

describe.each([
  ['SQLite, the default mode', {}],
  ['SQLite, transactions on the event loop', { SQLITE_WRITER_THREAD: 'false' }],
  ['SQLite, the writer thread and the projector worker', { SQLITE_WRITER_THREAD: 'true', PROJECTOR_WORKER: 'true' }],
])('an erasure interrupted after its deletion, before its record (%s)', (_mode, env: Record<string, string>) => {
  const service = useService({ env });

  it('is finished by the sweep: the record is written, and the deleted life leaves the read models', async () => {
    const h: Harness = service;
    const written = await h
      .http()
      .post('/v1/sessions/cut/events')
      .send(events(['o1', 'o2', 'o3'], 'zebraword old'))
      .expect(201);
    await h.projected(written.body.position as string);
    await deleteWithoutRecord(h, 'cut');
    // the state the probe found: the deleted events still served
    expect((await h.http().get('/v1/sessions/cut').expect(200)).body).toMatchObject({ eventCount: 3 });

    const finished = await h.service.app.get(InterruptedErasureSweep).sweep();
    expect(finished).toEqual([{ tenantId: 'default', sessionId: 'cut', lastRevision: '2', position: expect.any(String) }]);
    const at = finished[0].position;
    expect((await h.http().get(`/v1/sessions/cut?minPosition=${at}`).expect(404)).body.code).toBe('session_not_found');
    expect(await recallIds(h, 'zebraword', at)).toEqual([]);
    const erasures = await h.http().get(`/v1/erasures?minPosition=${at}`).expect(200);
    expect(erasures.body.erasures).toEqual([
      expect.objectContaining({ sessionId: 'cut', erasedEvents: 3, firstRevision: '0', lastRevision: '2', position: at }),
    ]);
    expect(erasures.body.erasures[0].requestedBy).toBeNull(); // no client ordered it
    // once: a second sweep finds nothing left
    expect(await h.service.app.get(InterruptedErasureSweep).sweep()).toEqual([]);
  });

  it('is finished before the first event of a life written since: the new life never shows the deleted one', async () => {
    const h: Harness = service;
    const written = await h
      .http()
      .post('/v1/sessions/anew/events')
      .send(events(['o1', 'o2'], 'quokkaword old'))
      .expect(201);
    await h.projected(written.body.position as string);
    await deleteWithoutRecord(h, 'anew');
    const next = await h
      .http()
      .post('/v1/sessions/anew/events')
      .send(events(['n1'], 'new'))
      .expect(201);
    expect(await windowIds(h, 'anew', next.body.position as string)).toEqual(['n1']);
    expect(await recallIds(h, 'quokkaword', next.body.position as string)).toEqual([]);
    const erasures = await h
      .http()
      .get(`/v1/erasures?minPosition=${next.body.position as string}`)
      .expect(200);
    expect(erasures.body.erasures).toContainEqual(expect.objectContaining({ sessionId: 'anew', erasedEvents: 2, lastRevision: '1' }));
    expect(await h.service.app.get(InterruptedErasureSweep).sweep()).toEqual([]);
  });

  it('is finished before a policy set on the session begins its new life (the policy is its first event)', async () => {
    const h: Harness = service;
    const written = await h
      .http()
      .post('/v1/sessions/ruled/events')
      .send(events(['o1', 'o2'], 'ibexword old'))
      .expect(201);
    await h.projected(written.body.position as string);
    await deleteWithoutRecord(h, 'ruled');
    const set = await h
      .http()
      .put('/v1/sessions/ruled/policy')
      .send({ strategy: { type: 'sliding-window', maxEvents: 5 } })
      .expect(200);
    const at = set.body.position as string;
    const session = await h.http().get(`/v1/sessions/ruled?minPosition=${at}`).expect(200);
    expect(session.body).toMatchObject({ eventCount: 0 });
    expect(await windowIds(h, 'ruled', at)).toEqual([]);
    expect(await recallIds(h, 'ibexword', at)).toEqual([]);
    const erasures = await h.http().get(`/v1/erasures?minPosition=${at}`).expect(200);
    expect(erasures.body.erasures).toContainEqual(expect.objectContaining({ sessionId: 'ruled', erasedEvents: 2, firstRevision: '0', lastRevision: '1' }));
    expect(await h.service.app.get(InterruptedErasureSweep).sweep()).toEqual([]);
  });

  it('is finished by the restarted replica by itself, without a DELETE sent again', async () => {
    await service
      .http()
      .post('/v1/sessions/boot/events')
      .send(events(['b1'], 'zebraword boot'))
      .expect(201);
    await deleteWithoutRecord(service, 'boot');
    await service.restart();
    const deadline = Date.now() + 15_000;
    let status = 200;
    while (status !== 404 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await service.http().get('/v1/sessions/boot')).status;
    }
    expect(status).toBe(404);
    const erasures = await service.http().get('/v1/erasures').expect(200);
    expect(erasures.body.erasures).toContainEqual(expect.objectContaining({ sessionId: 'boot', erasedEvents: 1, lastRevision: '0' }));
  });

  it('leaves an erasure that wrote its record alone, and a session never erased', async () => {
    const h: Harness = service;
    await h
      .http()
      .post('/v1/sessions/whole/events')
      .send(events(['w1'], 'kept'))
      .expect(201);
    await h
      .http()
      .post('/v1/sessions/done/events')
      .send(events(['d1'], 'gone'))
      .expect(201);
    await h.http().delete('/v1/sessions/done').expect(200);
    expect(await h.service.app.get(InterruptedErasureSweep).sweep()).toEqual([]);
    const res = await h.http().get('/v1/sessions/whole').expect(200);
    expect(res.body).toMatchObject({ sessionId: 'whole', eventCount: 1 });
  });
});

const skipReason = postgresUnavailableReason();

describeUnlessSkipped(skipReason, 'an erasure interrupted after its deletion, before its record (PostgreSQL, two replicas)', () => {
  const replicas = usePostgresReplicas('erasure_interrupted');

  it("is finished by the other replica's sweep, and both replicas' read models drop the deleted life", async () => {
    const { a, b } = replicas;
    await writtenThenDeleted(a, b, 'cut', ['o1', 'o2'], 'zebraword');
    // replica A is "dead": B finds the deletion and writes its record
    const finished = await b.service.app.get(InterruptedErasureSweep).sweep();
    expect(finished).toEqual([{ tenantId: 'default', sessionId: 'cut', lastRevision: '1', position: expect.any(String) }]);
    for (const h of [a, b]) {
      const res = await h.http().get(`/v1/sessions/cut?minPosition=${finished[0].position}`).expect(404);
      expect(res.body.code).toBe('session_not_found');
      expect(await recallIds(h, 'zebraword', finished[0].position)).toEqual([]);
    }
    expect(await a.service.app.get(InterruptedErasureSweep).sweep()).toEqual([]);
  });

  it('is finished before the first event of a life written since, so the new life never shows the deleted one (PostgreSQL no longer marks such a stream deleted)', async () => {
    const { a, b } = replicas;
    await writtenThenDeleted(a, b, 'again', ['o1', 'o2'], 'yakword');
    const next = await b
      .http()
      .post('/v1/sessions/again/events')
      .send(events(['n1'], 'new'))
      .expect(201);
    for (const h of [a, b]) {
      expect(await windowIds(h, 'again', next.body.position as string)).toEqual(['n1']);
      expect(await recallIds(h, 'yakword', next.body.position as string)).toEqual([]);
    }
    const erasures = await b
      .http()
      .get(`/v1/erasures?minPosition=${next.body.position as string}`)
      .expect(200);
    expect(erasures.body.erasures).toContainEqual(expect.objectContaining({ sessionId: 'again', erasedEvents: 2, firstRevision: '0', lastRevision: '1' }));
  });

  it('is finished by a replica restarted after the life written since (through a replica of an earlier build that never held the deleted one): its sweep looks from its last sweep before the restart (newcomer ncsweep72 F2)', async () => {
    const { a, db } = replicas;
    const env = { DATABASE_URL: db.url };
    let d = await startService({ env });
    let c: Harness | undefined;
    try {
      // D's sweep has looked at every session active so far (its checkpoint in its read models)
      await d.service.app.get(InterruptedErasureSweep).sweep();
      await writtenThenDeleted(a, d, 'fourth', ['o1', 'o2'], 'quokkaword');
      c = await startService({ env });
      asBuildBeforeRecordingUnheldLives(c);
      const next = await c
        .http()
        .post('/v1/sessions/fourth/events')
        .send(events(['n1'], 'new'))
        .expect(201);
      const at = next.body.position as string;
      // D projects the new life over the deleted one it holds, then restarts before its next sweep (a replaced pod, A never back)
      await d.http().get(`/v1/sessions/fourth?minPosition=${at}`).expect(200);
      await d.stop();
      d = await startService({ env, dataDir: d.dataDir });
      await d.service.app.get(InterruptedErasureSweep).sweep();
      let record: { sessionId: string; position: string } | undefined;
      for (const until = Date.now() + 15_000; !record && Date.now() < until; await new Promise((resolve) => setTimeout(resolve, 100))) {
        const res = await d.http().get('/v1/erasures').expect(200);
        record = (res.body.erasures as Array<{ sessionId: string; position: string }>).find((e) => e.sessionId === 'fourth');
      }
      expect(record).toBeDefined();
      for (const h of [a, c, d]) {
        expect(await windowIds(h, 'fourth', record!.position)).toEqual(['n1']);
        expect(await recallIds(h, 'quokkaword', record!.position)).toEqual([]);
      }
    } finally {
      for (const h of [c, d]) {
        await h?.stop();
        if (h) fs.rmSync(h.dataDir, { recursive: true, force: true });
      }
    }
  });

  it("is finished by a replica's sweep when the life written since went through a replica of an earlier build that never held the deleted one (newcomer ncrecheck71 R1)", async () => {
    const { a, b, db } = replicas;
    await writtenThenDeleted(a, b, 'third', ['o1', 'o2'], 'wombatword');
    // a replica started after the deletion (a replaced pod): its read models never held the deleted life
    const c = await startService({ env: { DATABASE_URL: db.url } });
    asBuildBeforeRecordingUnheldLives(c);
    try {
      const next = await c
        .http()
        .post('/v1/sessions/third/events')
        .send(events(['n1'], 'new'))
        .expect(201);
      const at = next.body.position as string;
      // B saw the new life arrive: its next sweep looks at the session (PostgreSQL no longer marks the stream deleted)
      await b.http().get(`/v1/sessions/third?minPosition=${at}`).expect(200);
      const finished = await b.service.app.get(InterruptedErasureSweep).sweep();
      expect(finished).toEqual([{ tenantId: 'default', sessionId: 'third', lastRevision: '1', position: expect.any(String) }]);
      for (const h of [a, b, c]) {
        expect(await windowIds(h, 'third', finished[0].position)).toEqual(['n1']);
        expect(await recallIds(h, 'wombatword', finished[0].position)).toEqual([]);
      }
    } finally {
      await c.stop();
      fs.rmSync(c.dataDir, { recursive: true, force: true });
    }
  });
  it('is finished before the first event of a life written through a replica that never held the deleted one, so no replica shows them merged (newcomer ncsweep72 F1)', async () => {
    const { a, b, db } = replicas;
    // a first life erased as it should be, then a second one deleted without its record
    await a
      .http()
      .post('/v1/sessions/fifth/events')
      .send(events(['f1'], 'first'))
      .expect(201);
    await a.http().delete('/v1/sessions/fifth').expect(200);
    await writtenThenDeleted(a, b, 'fifth', ['o1', 'o2'], 'tapirword');
    // a replica started after the deletion (a replaced pod): its read models never held the deleted life
    const c = await startService({ env: { DATABASE_URL: db.url } });
    try {
      const next = await c
        .http()
        .post('/v1/sessions/fifth/events')
        .send(events(['n1'], 'new'))
        .expect(201);
      const at = next.body.position as string;
      // no sweep: B, which held the deleted life, reads the new one alone as soon as it has projected it
      for (const h of [a, b, c]) {
        expect(await windowIds(h, 'fifth', at)).toEqual(['n1']);
        expect(await recallIds(h, 'tapirword', at)).toEqual([]);
      }
      const erasures = await c.http().get(`/v1/erasures?minPosition=${at}`).expect(200);
      const lives = (erasures.body.erasures as Array<{ sessionId: string }>).filter((e) => e.sessionId === 'fifth');
      expect(lives).toEqual([
        expect.objectContaining({ erasedEvents: 2, firstRevision: '1', lastRevision: '2', requestedBy: null }),
        expect.objectContaining({ erasedEvents: 1, firstRevision: '0', lastRevision: '0' }),
      ]);
      for (const h of [a, b, c]) expect(await h.service.app.get(InterruptedErasureSweep).sweep()).toEqual([]);
    } finally {
      await c.stop();
      fs.rmSync(c.dataDir, { recursive: true, force: true });
    }
  });

  it('is finished by the DELETE sent again through a replica that never held the deleted life: 200 with its record, and no replica shows the life (newcomer ncrecheck73 F2)', async () => {
    const { a, b, db } = replicas;
    // an earlier life erased as it should be, then the next one deleted without its record
    await a
      .http()
      .post('/v1/sessions/seventh/events')
      .send(events(['f1'], 'first'))
      .expect(201);
    await a.http().delete('/v1/sessions/seventh').expect(200);
    await writtenThenDeleted(a, b, 'seventh', ['o1', 'o2', 'o3'], 'okapiword');
    const c = await startService({ env: { DATABASE_URL: db.url } });
    try {
      const erased = await c.http().delete('/v1/sessions/seventh').set('X-Request-Id', 'resent-7').expect(200);
      expect(erased.body).toMatchObject({ sessionId: 'seventh', erasedEvents: 3 });
      const at = erased.body.position as string;
      for (const h of [a, b, c]) {
        const res = await h.http().get(`/v1/sessions/seventh?minPosition=${at}`).expect(404);
        expect(res.body.code).toBe('session_not_found');
        expect(await recallIds(h, 'okapiword', at)).toEqual([]);
      }
      const erasures = await c.http().get(`/v1/erasures?minPosition=${at}`).expect(200);
      const lives = (erasures.body.erasures as Array<{ sessionId: string }>).filter((e) => e.sessionId === 'seventh');
      expect(lives).toEqual([
        expect.objectContaining({ erasedEvents: 3, firstRevision: '1', lastRevision: '3', requestedBy: expect.objectContaining({ requestId: 'resent-7' }) }),
        expect.objectContaining({ erasedEvents: 1, firstRevision: '0', lastRevision: '0' }),
      ]);
      // sent again: the same record, nothing more written
      const again = await c.http().delete('/v1/sessions/seventh').set('X-Request-Id', 'resent-7').expect(200);
      expect(again.body).toEqual(erased.body);
    } finally {
      await c.stop();
      fs.rmSync(c.dataDir, { recursive: true, force: true });
    }
  });

  it('writes no record when the erasure wrote its own, for a life written again through a replica that never held the erased one', async () => {
    const { a, db } = replicas;
    await a
      .http()
      .post('/v1/sessions/sixth/events')
      .send(events(['s1', 's2'], 'old'))
      .expect(201);
    await a.http().delete('/v1/sessions/sixth').expect(200);
    const c = await startService({ env: { DATABASE_URL: db.url } });
    try {
      const next = await c
        .http()
        .post('/v1/sessions/sixth/events')
        .send(events(['n1'], 'new'))
        .expect(201);
      const erasures = await c
        .http()
        .get(`/v1/erasures?minPosition=${next.body.position as string}`)
        .expect(200);
      expect((erasures.body.erasures as Array<{ sessionId: string }>).filter((e) => e.sessionId === 'sixth')).toEqual([
        expect.objectContaining({ erasedEvents: 2, firstRevision: '0', lastRevision: '1' }),
      ]);
      expect(await windowIds(c, 'sixth', next.body.position as string)).toEqual(['n1']);
    } finally {
      await c.stop();
      fs.rmSync(c.dataDir, { recursive: true, force: true });
    }
  });
});
