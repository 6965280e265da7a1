/**
 * Erasure (issue 7 item 6): DELETE /v1/sessions/:sessionId removes the session's content from the
 * store and every read model; afterwards reads answer 404 and recall finds nothing of it; the
 * deletion itself is recorded (stream `erasure-<tenant>`) without content. Other sessions stay.
 */
import * as fs from 'node:fs';
import { dumpReadModels, erasureStream } from '@lib/session';
import { startService, useService } from '../support/service-harness';
import { streamOf } from '../support/log-checks';

const SECRET = 'TAMARIND-COMET-3302';

function conversation(prefix: string, secret: string) {
  const events: Array<Record<string, unknown>> = [{ id: `${prefix}-s`, type: 'system', text: 'You are an agent.' }];
  for (let n = 0; n < 4; n++) {
    events.push({ id: `${prefix}-u${n}`, type: 'user', text: `turn ${n}: ${secret}` });
    events.push({ id: `${prefix}-c${n}`, type: 'assistant', text: null, toolCalls: [{ id: `${prefix}-k${n}`, name: 'note', arguments: `{"v":"${secret}"}` }] });
    events.push({ id: `${prefix}-t${n}`, type: 'tool', responses: [{ toolCallId: `${prefix}-k${n}`, name: 'note', data: `{"saved":"${secret}"}` }] });
    events.push({ id: `${prefix}-a${n}`, type: 'assistant', text: `noted ${secret}` });
  }
  return events;
}

describe('erasing a session', () => {
  const harness = useService();

  it('removes its content from the store and every read model, answers 404 afterwards, and records the deletion without content', async () => {
    const http = harness.http;
    await http()
      .post('/v1/sessions/doomed/events')
      .send({ events: conversation('doomed', SECRET), userId: 'alice' })
      .expect(201);
    await http()
      .post('/v1/sessions/keeper/events')
      .send({ events: conversation('keeper', 'KEEPER-WORD') })
      .expect(201);
    const c = await http()
      .post('/v1/sessions/doomed/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 } })
      .expect(200);
    expect(c.body.outcome).toBe('compacted');
    await http()
      .put('/v1/sessions/doomed/policy')
      .send({ strategy: { type: 'sliding-window', maxEvents: 50 } })
      .expect(200);
    const last = await http()
      .post('/v1/sessions/doomed/events')
      .send({ events: [{ id: 'doomed-late', type: 'user', text: `late ${SECRET}` }] })
      .expect(201);
    await http().get(`/v1/sessions/doomed/window?minPosition=${last.body.position}`).expect(200);
    const found = await http().get(`/v1/recall?q=${SECRET}&archived=true`).expect(200);
    expect(found.body.items.length).toBeGreaterThan(0);
    expect(JSON.stringify(dumpReadModels(harness.service.readModels))).toContain(SECRET);

    const erased = await http().delete('/v1/sessions/doomed').expect(200);
    expect(erased.body).toMatchObject({ sessionId: 'doomed', erasedEvents: expect.any(Number) });
    // the projector passes the erasure record's position too: waiting for the head answers at once, /health is caught up
    const head = await harness.service.store.headPosition();
    const startedWaiting = Date.now();
    await http().get(`/v1/sessions/keeper/window?minPosition=${head}`).expect(200);
    expect(Date.now() - startedWaiting).toBeLessThan(2000);
    const health = await http().get('/health').expect(200);
    expect(health.body.projector).toMatchObject({ checkpoint: head.toString(), lag: 'caught-up' });
    const marker = await http()
      .post('/v1/sessions/keeper/events')
      .send({ events: [{ id: 'keeper-after', type: 'user', text: 'still here' }] })
      .expect(201);
    await http().get(`/v1/sessions/keeper/window?minPosition=${marker.body.position}`).expect(200);

    // reads answer 404
    for (const path of ['window', 'window?format=openai', 'window?atRevision=2', 'events', 'compactions', `compactions/${c.body.compactionId}`]) {
      const res = await http().get(`/v1/sessions/doomed/${path}`);
      expect({ path, status: res.status, code: res.body.code }).toEqual({ path, status: 404, code: 'session_not_found' });
    }
    expect(
      (
        await http()
          .post('/v1/sessions/doomed/compactions')
          .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
      ).status,
    ).toBe(404);
    // a resend of the erasure (its answer lost) answers as it did, writing nothing; a session never written is 404
    const logHead = await harness.service.store.headPosition();
    const resent = await http().delete('/v1/sessions/doomed').expect(200);
    expect(resent.body).toEqual(erased.body);
    expect(await harness.service.store.headPosition()).toBe(logHead);
    expect((await http().delete('/v1/sessions/never-written')).body.code).toBe('session_not_found');
    // recall finds nothing of it, whatever the filters
    for (const q of [
      `q=${SECRET}`,
      `q=${SECRET}&archived=true`,
      `q=${SECRET}&sessionId=doomed`,
      'q=noted&sessionId=doomed',
      'q=agent&userId=alice',
      `q=note&compactionId=${c.body.compactionId}`,
    ]) {
      const res = await http().get(`/v1/recall?${q}`).expect(200);
      expect({ q, items: res.body.items }).toEqual({ q, items: [] });
    }
    // the store: no event of the session, nothing anywhere in the log that carries its content
    expect(await harness.service.store.readStream(streamOf('doomed'))).toEqual([]);
    const all = await harness.service.store.readAll({ fromPosition: 0n, maxCount: 100_000 });
    expect(
      all.filter((e) => JSON.stringify(e, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)).includes(SECRET)).map((e) => [e.streamId, e.type]),
    ).toEqual([]);
    // every read model: no row of it
    const dump = JSON.stringify(dumpReadModels(harness.service.readModels));
    expect(dump).not.toContain(SECRET);
    expect(dump).not.toContain('doomed-u0');
    expect(dump).not.toContain(c.body.compactionId);
    // the deletion is recorded, without content
    const records = await harness.service.store.readStream(erasureStream('default'));
    expect(records).toHaveLength(1);
    expect(records[0].data).toMatchObject({ sessionId: 'doomed', erasedEvents: erased.body.erasedEvents });
    expect(JSON.stringify([records[0].data, records[0].metadata ?? null])).not.toContain(SECRET);
    expect(Object.keys(records[0].data as object).sort()).toEqual(['erasedAt', 'erasedEvents', 'lastPosition', 'lastRevision', 'requestedBy', 'sessionId']);
    // who ordered it: the key's label and the request id, never a key's text or any content
    expect(Object.keys((records[0].data as { requestedBy: object }).requestedBy).sort()).toEqual(expect.arrayContaining(['via']));
    expect(
      Object.keys((records[0].data as { requestedBy: object }).requestedBy).every((k) => ['keyLabel', 'requestId', 'requestIdFrom', 'via'].includes(k)),
    ).toBe(true);
    // the other session is intact
    const keeper = await http().get('/v1/sessions/keeper/window').expect(200);
    expect(keeper.body.events).toHaveLength(conversation('keeper', 'KEEPER-WORD').length + 1);
    expect((await http().get('/v1/recall?q=KEEPER-WORD').expect(200)).body.items.length).toBeGreaterThan(0);
  });

  it('lets the erased session id start afresh, and a restart does not bring the erased content back', async () => {
    const http = harness.http;
    await http()
      .post('/v1/sessions/reborn/events')
      .send({ events: conversation('reborn', SECRET) })
      .expect(201);
    await http().delete('/v1/sessions/reborn').expect(200);
    const fresh = await http()
      .post('/v1/sessions/reborn/events')
      .send({ events: [{ id: 'new-1', type: 'user', text: 'a new start' }] })
      .expect(201);
    const w = await http().get(`/v1/sessions/reborn/window?minPosition=${fresh.body.position}`).expect(200);
    expect(w.body.events.map((e: { id: string }) => e.id)).toEqual(['new-1']);

    await harness.restart();
    const after = await harness.http().get(`/v1/sessions/reborn/window?minPosition=${fresh.body.position}`).expect(200);
    expect(after.body.events.map((e: { id: string }) => e.id)).toEqual(['new-1']);
    expect((await harness.http().get(`/v1/recall?q=${SECRET}&archived=true`).expect(200)).body.items).toEqual([]);
    expect(JSON.stringify(dumpReadModels(harness.service.readModels))).not.toContain(SECRET);
  });

  it("never reuses an erased session's revisions: the new session continues after them, and its reads and a second erasure count only its own events", async () => {
    const http = harness.http;
    const first = await http()
      .post('/v1/sessions/again/events')
      .send({ events: conversation('again', SECRET) })
      .expect(201);
    expect(first.body.revision).toBe('16');
    expect((await http().delete('/v1/sessions/again').expect(200)).body.erasedEvents).toBe(17);
    // A writer that still holds the erased session's revision is refused, though the id is free.
    const stale = await http()
      .post('/v1/sessions/again/events')
      .send({ expectedRevision: '16', events: [{ id: 'stale', type: 'user', text: 'decided on the erased session' }] })
      .expect(409);
    expect(stale.body).toMatchObject({ code: 'wrong_expected_revision', actual: 'no_stream' });
    const fresh = await http()
      .post('/v1/sessions/again/events')
      .send({
        expectedRevision: 'no_stream',
        events: [
          { id: 'n1', type: 'user', text: 'new' },
          { id: 'n2', type: 'user', text: 'session' },
        ],
      })
      .expect(201);
    expect(fresh.body.revision).toBe('18');
    const w = await http().get(`/v1/sessions/again/window?minPosition=${fresh.body.position}`).expect(200);
    expect({ revision: w.body.revision, ids: w.body.events.map((e: { id: string }) => e.id) }).toEqual({ revision: '18', ids: ['n1', 'n2'] });
    const at = await http().get('/v1/sessions/again/window?atRevision=17').expect(200);
    expect(at.body.events.map((e: { id: string }) => e.id)).toEqual(['n1']);
    const before = await http().get('/v1/sessions/again/window?atRevision=16').expect(400);
    expect(before.body).toMatchObject({ code: 'revision_out_of_range', message: expect.stringMatching(/from 17 to 18/) });
    expect((await http().delete('/v1/sessions/again').expect(200)).body.erasedEvents).toBe(2);
  });
});

describe('erasure on disk', () => {
  // Held by: secure_delete on both databases, a WAL checkpoint (TRUNCATE) after a stream deletion
  // and after a read-model erasure, and the FTS5 `secure-delete` option of the recall index.
  // files only: not the claims' directory (events-claims: empty lock files named by a hash, an erased session's deleted)
  const inFiles = (dir: string, text: string) =>
    fs
      .readdirSync(dir)
      .filter((file) => fs.statSync(`${dir}/${file}`).isFile())
      .map((file) => ({ file, found: fs.readFileSync(`${dir}/${file}`).includes(text) }));

  it('leaves no byte of the erased content in the data files, while the service runs and after it stops', async () => {
    const harness = await startService();
    const files = () => inFiles(harness.dataDir, SECRET);
    try {
      await harness
        .http()
        .post('/v1/sessions/gone/events')
        .send({ events: conversation('gone', SECRET) })
        .expect(201);
      await harness
        .http()
        .post('/v1/sessions/stays/events')
        .send({ events: conversation('stays', 'KEEPER-WORD') })
        .expect(201);
      const late = await harness
        .http()
        .post('/v1/sessions/gone/events')
        .send({ events: [{ id: 'gone-late', type: 'user', text: `late ${SECRET}` }] })
        .expect(201);
      await harness.http().get(`/v1/sessions/gone/window?minPosition=${late.body.position}`).expect(200);
      expect(files().some((f) => f.found)).toBe(true);
      await harness.http().delete('/v1/sessions/gone').expect(200);
      // while running: neither database nor WAL holds it
      for (const entry of files()) expect(entry).toEqual({ file: entry.file, found: false });
    } finally {
      await harness.stop();
    }
    for (const entry of files()) expect(entry).toEqual({ file: entry.file, found: false });
    // the other session's content is still there (the check can see content)
    expect(
      inFiles(harness.dataDir, 'KEEPER-WORD')
        .filter((f) => f.found)
        .map((f) => f.file)
        .sort(),
    ).toEqual(['events.sqlite', 'read-models.sqlite']);
    fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });
});
