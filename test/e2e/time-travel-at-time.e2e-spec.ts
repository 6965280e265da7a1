/**
 * Time travel by time (`GET /v1/sessions/:id/window?atTime=`), on SQLite and on PostgreSQL (a
 * database of its own): the window right after the last event the store recorded at or before the
 * time, the same as `atRevision` of that event's revision, with `resolved` naming it; a time
 * before the session's first event is 400 `time_out_of_range` (naming when it was recorded), one
 * past its last the current window; `atTime` with `atRevision`, and times the date-time rule
 * refuses, are 400 with what to fix.
 * Runtime: a few seconds (in-process services; PostgreSQL skipped when none answers).
 */
import { Client } from 'pg';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { usePostgresService, useService, type Harness } from '../support/service-harness';

jest.setTimeout(60_000);

type Json = Record<string, unknown>;
const user = (id: string): Json => ({ id, type: 'user', text: `user ${id}` });
const reply = (id: string): Json => ({ id, type: 'assistant', text: `assistant ${id}` });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** `iso` moved by `ms` milliseconds, as `toISOString` writes it. */
const shifted = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString();

/** The examples, against the service `http` gives (its store: SQLite or PostgreSQL). */
function examples(service: () => Pick<Harness, 'http'>): void {
  const http = () => service().http();
  const window = async (session: string, query: Json) => (await http().get(`/v1/sessions/${session}/window`).query(query).expect(200)).body as Json;
  const ids = (w: Json) => (w.events as Json[]).map((e) => e.id);
  /** Revision → recordedAt of the session's log. */
  const recorded = async (session: string) =>
    new Map(
      ((await http().get(`/v1/sessions/${session}/events?limit=1000`).expect(200)).body.events as Json[]).map((e) => [
        e.revision as string,
        e.recordedAt as string,
      ]),
    );

  // Three appends 20 ms apart, then a compaction (one append: its archive, summary and completion).
  let times: Map<string, string>;
  let summaryId: string;
  beforeAll(async () => {
    await http()
      .post('/v1/sessions/at1/events')
      .send({ events: [user('u1'), reply('a1')] })
      .expect(201);
    await sleep(20);
    await http()
      .post('/v1/sessions/at1/events')
      .send({ events: [user('u2'), reply('a2')] })
      .expect(201);
    await sleep(20);
    await http()
      .post('/v1/sessions/at1/events')
      .send({ events: [user('u3'), reply('a3')] })
      .expect(201);
    await sleep(20);
    const pass = await http()
      .post('/v1/sessions/at1/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 } })
      .expect(200);
    expect(pass.body).toMatchObject({ outcome: 'compacted', archived: ['u1', 'a1', 'u2', 'a2'], revision: '8' });
    summaryId = pass.body.summary.id;
    times = await recorded('at1');
    expect(times.size).toBe(9);
  });

  it('a time between two appends answers the window after the first, as atRevision does, naming the event', async () => {
    expect(times.get('1')! < times.get('2')!).toBe(true);
    for (const at of [times.get('1')!, shifted(times.get('2')!, -1), `${times.get('1')!.slice(0, -1)}999Z`]) {
      const w = await window('at1', { atTime: at });
      expect({ at, ...w }).toEqual({ at, ...(await window('at1', { atRevision: '1' })), resolved: { revision: '1', recordedAt: times.get('1') } });
      expect(ids(w)).toEqual(['u1', 'a1']);
    }
    // The same instant with an offset (its + sent as %2B by the query encoder).
    const local = new Date(Date.parse(times.get('3')!) + 5.5 * 3_600_000).toISOString().replace('Z', '+05:30');
    expect(await window('at1', { atTime: local })).toMatchObject({ revision: '3', resolved: { revision: '3' } });
  });

  it('a time inside the compaction answers the window after the whole decision, as atRevision does', async () => {
    const w = await window('at1', { atTime: times.get('6')! });
    const resolved = w.resolved as Json;
    expect(['6', '7', '8']).toContain(resolved.revision);
    expect({ ...w, resolved: undefined }).toEqual(await window('at1', { atRevision: resolved.revision }));
    expect(w.revision).toBe('8');
    expect(ids(w)).toEqual([summaryId, 'u3', 'a3']);
  });

  it('a time at or after the last event answers the current window; format openai too', async () => {
    const current = await window('at1', {});
    for (const at of [times.get('8')!, '9999-12-31T23:59:59.999Z']) {
      expect(await window('at1', { atTime: at })).toEqual({ ...current, resolved: { revision: '8', recordedAt: times.get('8') } });
    }
    const openai = await window('at1', { atTime: times.get('3')!, format: 'openai' });
    expect(openai).toMatchObject({ revision: '3', resolved: { revision: '3', recordedAt: times.get('3') } });
    expect(openai.messages).toHaveLength(4);
  });

  it('a time before the first event is 400 time_out_of_range naming when it was recorded; an unknown session 404', async () => {
    // 1 ms before the log's earliest recorded time: revision 0's, unless the store's clock stepped
    // back after it was recorded (README, Clock jumps; see "a store clock stepping back" below).
    const earliest = Math.min(...[...times.values()].map((t) => Date.parse(t)));
    const before = new Date(earliest - 1).toISOString();
    const res = await http().get('/v1/sessions/at1/window').query({ atTime: before }).expect(400);
    expect(res.body).toMatchObject({ code: 'time_out_of_range', parameter: 'atTime' });
    expect(res.body.message).toBe(
      `atTime: the session's first event (revision 0) was recorded at ${times.get('0')}, after ${before}: no window existed yet; ask for a time at or after it`,
    );
    // A long time (up to 100 characters, so 73 fraction digits here, is read) is cut where the message repeats it.
    const long = `${before.slice(0, -1)}${'0'.repeat(70)}Z`;
    expect(long.length).toBeGreaterThan(64);
    const cut = await http().get('/v1/sessions/at1/window').query({ atTime: long }).expect(400);
    expect(cut.body.code).toBe('time_out_of_range');
    expect(cut.body.message).toContain(`… (${long.length} characters): no window existed yet`);
    // Under 1 ms into the earliest recorded time's second (or the one before), written with 12
    // fraction digits that start with 0: before the first event (Date.parse read it as .999).
    const second = new Date(Math.floor((earliest - 1) / 1000) * 1000).toISOString().slice(0, -4);
    const zeroLed = `${second}000999999999Z`;
    const led = await http().get('/v1/sessions/at1/window').query({ atTime: zeroLed }).expect(400);
    expect(led.body.code).toBe('time_out_of_range');
    const missing = await http().get('/v1/sessions/at-none/window').query({ atTime: '2026-01-01T00:00:00Z' }).expect(404);
    expect(missing.body.code).toBe('session_not_found');
  });

  it('a time inside an erased life of a session id written again says that life was erased, and when', async () => {
    await http()
      .post('/v1/sessions/at-erased/events')
      .send({ events: [user('e1'), reply('e2')] })
      .expect(201);
    const oldLife = await recorded('at-erased');
    const erasure = await http().delete('/v1/sessions/at-erased').expect(200);
    await sleep(5);
    await http()
      .post('/v1/sessions/at-erased/events')
      .send({ events: [user('n1')] })
      .expect(201);
    const newLife = await recorded('at-erased');
    expect([...newLife.keys()]).toEqual(['2']);
    // A time inside the erased life: a window existed then, and was erased.
    const inside = oldLife.get('1')!;
    const res = await http().get('/v1/sessions/at-erased/window').query({ atTime: inside }).expect(400);
    expect(res.body).toMatchObject({ code: 'time_out_of_range', parameter: 'atTime' });
    expect(res.body.message).toBe(
      `atTime: the session's current life began with revision 2, recorded at ${newLife.get('2')}, after ${inside}; an earlier life of this session id (revisions 0–1) was erased at ${erasure.body.erasedAt}, and an erased life's windows are not kept: ask for a time at or after ${newLife.get('2')}`,
    );
    expect(res.body.message).not.toContain('no window existed yet');
    // A revision inside the erased life says so too (newcomer ncevaleng A2); one past the last does not.
    const byRevision = await http().get('/v1/sessions/at-erased/window').query({ atRevision: '0' }).expect(400);
    expect(byRevision.body).toMatchObject({ code: 'revision_out_of_range', parameter: 'atRevision' });
    expect(byRevision.body.message).toBe(
      `atRevision: the session's revisions run from 2 to 2: its current life began with revision 2; an earlier life of this session id (revisions 0–1) was erased at ${erasure.body.erasedAt}, and an erased life's windows are not kept: ask for a revision from 2 to 2`,
    );
    const past = await http().get('/v1/sessions/at-erased/window').query({ atRevision: '3' }).expect(400);
    expect(past.body.message).toBe("atRevision: the session's revisions run from 2 to 2; ask for a revision in that range");
  });

  it('of a session id erased twice, a revision or a time of the first life names that life and its erasure, not the later one (newcomer ncaudit72 F1)', async () => {
    const write = (ids: string[]) =>
      http()
        .post('/v1/sessions/at-twice/events')
        .send({ events: ids.map((id, i) => (i % 2 ? reply(id) : user(id))) })
        .expect(201);
    await write(['f1', 'f2', 'f3']);
    const firstLife = await recorded('at-twice');
    const firstErasure = await http().delete('/v1/sessions/at-twice').expect(200);
    await sleep(5);
    await write(['s1', 's2']);
    const secondLife = await recorded('at-twice');
    const secondErasure = await http().delete('/v1/sessions/at-twice').expect(200);
    await sleep(5);
    await write(['t1']);
    const current = await recorded('at-twice');
    expect([[...secondLife.keys()], [...current.keys()]]).toEqual([['3', '4'], ['5']]);
    const lifeMessage = (erasedAt: string, range: string) => `an earlier life of this session id (revisions ${range}) was erased at ${erasedAt}`;
    const byRevision = async (atRevision: string) => (await http().get('/v1/sessions/at-twice/window').query({ atRevision }).expect(400)).body.message;
    const byTime = async (atTime: string) => (await http().get('/v1/sessions/at-twice/window').query({ atTime }).expect(400)).body.message;
    for (const revision of ['0', '2']) expect(await byRevision(revision)).toContain(lifeMessage(firstErasure.body.erasedAt, '0–2'));
    for (const revision of ['3', '4']) expect(await byRevision(revision)).toContain(lifeMessage(secondErasure.body.erasedAt, '3–4'));
    expect(await byTime(firstLife.get('1')!)).toContain(lifeMessage(firstErasure.body.erasedAt, '0–2'));
    expect(await byTime(secondLife.get('4')!)).toContain(lifeMessage(secondErasure.body.erasedAt, '3–4'));
  });

  it('atTime with atRevision, and times the date-time rule refuses, are 400 validation_failed saying what to fix', async () => {
    const cases: Array<[Json, string]> = [
      [
        { atTime: times.get('1')!, atRevision: '1' },
        'atTime: give atRevision or atTime, not both: atRevision=N answers the window right after revision N, atTime=T the window right after the last event recorded at or before T (its revision is in the answer)',
      ],
      [{ atTime: '2026-01-01T00:00:00' }, 'atTime: must be an ISO-8601 date-time: add its zone'],
      [{ atTime: '1767225600000' }, 'atTime: must be an ISO-8601 date-time as text, not a number'],
      [{ atTime: 'yesterday' }, 'atTime: must be an ISO-8601 date-time such as 2026-01-31T12:00:00Z'],
      [{ atTime: '10000-01-01T00:00:00Z' }, 'atTime: '],
    ];
    for (const [query, message] of cases) {
      const res = await http().get('/v1/sessions/at1/window').query(query).expect(400);
      expect({ query, code: res.body.code, parameter: res.body.parameter }).toEqual({ query, code: 'validation_failed', parameter: 'atTime' });
      expect(res.body.message).toContain(message);
    }
    // An unencoded + arrives as a space: the message says to send it as %2B.
    const plus = await http().get('/v1/sessions/at1/window?atTime=2026-01-01T00:00:00+01:00').expect(400);
    expect(plus.body.message).toContain('send the + as %2B');
  });
}

describe('time travel by time (SQLite)', () => {
  const service = useService();
  examples(() => service);
});

describeUnlessSkipped(postgresUnavailableReason(), 'time travel by time (PostgreSQL)', () => {
  const service = usePostgresService('window_at_time');
  examples(() => service);

  // The server's clock stepping back 1 s between two appends, as `created`'s default gives it
  // (README, Clock jumps): revision 1 is recorded before revision 0. A time 1 ms before revision
  // 0's recordedAt then resolves to revision 1 (the last one recorded at or before it), so only a
  // time before the log's earliest recorded time is 400, still naming revision 0's.
  it('a store clock stepping back: a time before revision 0 but after a later event resolves to it; before both is 400', async () => {
    const http = () => service.http();
    const recorded = async (session: string) =>
      ((await http().get(`/v1/sessions/${session}/events`).expect(200)).body.events as Array<{ recordedAt: string }>).map((e) => e.recordedAt);
    await http()
      .post('/v1/sessions/at-step/events')
      .send({ events: [user('s1')] })
      .expect(201);
    const sql = new Client({ connectionString: service.db.url });
    await sql.connect();
    try {
      await sql.query(`ALTER TABLE es_events ALTER COLUMN created SET DEFAULT clock_timestamp() - interval '1 second'`);
      await http()
        .post('/v1/sessions/at-step/events')
        .send({ events: [reply('s2')] })
        .expect(201);
    } finally {
      await sql.query('ALTER TABLE es_events ALTER COLUMN created SET DEFAULT clock_timestamp()');
      await sql.end();
    }
    const [first, stepped] = await recorded('at-step');
    expect(Date.parse(stepped)).toBeLessThan(Date.parse(first) - 1);
    const afterStep = await http()
      .get('/v1/sessions/at-step/window')
      .query({ atTime: shifted(first, -1) })
      .expect(200);
    expect(afterStep.body).toMatchObject({ revision: '1', resolved: { revision: '1', recordedAt: stepped } });
    const before = shifted(stepped, -1);
    const res = await http().get('/v1/sessions/at-step/window').query({ atTime: before }).expect(400);
    expect(res.body.message).toBe(
      `atTime: the session's first event (revision 0) was recorded at ${first}, after ${before}: no window existed yet; ask for a time at or after it`,
    );
  });
});
