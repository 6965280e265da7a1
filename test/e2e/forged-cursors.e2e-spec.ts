/**
 * Forged cursors on every paging route over HTTP (newcomer ncbounds, finding 1): a recall cursor
 * whose position `p` was 2^53 to 2^63 − 1 answered 500 `internal` ("may be retried") in `newest`
 * and `oldest` order, on SQLite and PostgreSQL (an unhandled RangeError binding a row id). For
 * arbitrary forged cursors (a real `nextCursor`'s fields set to random numbers, decimal text far
 * past 2^63, negatives, floats, strings, nulls, or left out), `GET /v1/recall` (every order),
 * `GET /v1/sessions`, `GET …/compactions` and `GET /v1/erasures` answer 200 or 400 `invalid_query`
 * / `cursor_expired` naming `cursor`, never 5xx; `GET …/events` (paged by `fromRevision`, its
 * `nextRevision`) 200 or 400 `validation_failed`. A list cursor past the end of what it pages (a
 * position past the log's head, a revision past the session's last) answers 400 `invalid_query`
 * (newcomer ncaudit56 F2: it answered 200). On both stores. Runtime: about 20 s.
 */
import * as fs from 'node:fs';
import fc from 'fast-check';
import type request from 'supertest';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { cursorJson, cursorText, forgedFields, forgedValue } from '../../libs/session/src/read-side/testing/forged-cursors';
import { startService, usePostgresService, type Harness } from '../support/service-harness';

jest.setTimeout(120_000);

/** Property runs per route (and per recall order). */
const RUNS = Number(process.env.FC_RUNS ?? 40);
/** Events holding `common`: more than recall ranks (2,000), so its pagings are `newest`. */
const COMMON_EVENTS = 2001;

/** Expects `res` to be 200, or a 400 with one of `codes` naming `parameter`; shows `sent` when not. */
function expectPageOrRefusal(res: request.Response, sent: unknown, codes: readonly string[], parameter = 'cursor'): void {
  const ok = res.status === 200 || (res.status === 400 && codes.includes(res.body.code) && res.body.parameter === parameter);
  expect({ sent, ok, status: res.status, body: ok ? undefined : res.body }).toEqual({ sent, ok: true, status: res.status, body: undefined });
}

/** Writes what every paging route pages (each with a second page), and waits for the read models to hold it. */
async function seed(h: Harness): Promise<void> {
  const http = () => h.http();
  let position = '0';
  for (let from = 0; from < COMMON_EVENTS; from += 500) {
    const events = Array.from({ length: Math.min(500, COMMON_EVENTS - from) }, (_, j) => {
      const i = from + j;
      return { id: `e${i}`, type: 'user', text: `common ${i % 50 === 0 ? 'zqalpha 你 ' : ''}filler ${i}` };
    });
    position = (await http().post('/v1/sessions/fc-a/events').send({ events }).expect(201)).body.position;
  }
  for (let n = 0; n < 2; n++) {
    await http()
      .post('/v1/sessions/fc-b/events')
      .send({ events: [0, 1, 2].map((i) => ({ id: `b${n}-${i}`, type: 'user', text: `turn ${n}.${i}` })) })
      .expect(201);
    position = (
      await http()
        .post('/v1/sessions/fc-b/compactions')
        .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
        .expect(200)
    ).body.position;
  }
  for (const id of ['fc-x1', 'fc-x2']) {
    await http()
      .post(`/v1/sessions/${id}/events`)
      .send({ events: [{ id: 'x', type: 'user', text: 'to be erased' }] })
      .expect(201);
    position = (await http().delete(`/v1/sessions/${id}`).expect(200)).body.position;
  }
  await h.projected(position);
}

/** The properties, on the service `harness()` answers once `seed` ran. */
function forgedCursorProperties(harness: () => Harness): void {
  const http = () => harness().http();
  /** The `nextCursor` of the first page of `path` with `query`, as fields. */
  const firstCursor = async (path: string, query: Record<string, string>): Promise<Record<string, unknown>> => {
    const res = await http().get(path).query(query).expect(200);
    expect(res.body.nextCursor).toEqual(expect.any(String));
    return cursorJson(res.body.nextCursor);
  };

  const recallPagings = [
    { order: 'relevance', q: 'zqalpha' },
    { order: 'newest', q: 'common' },
    { order: 'oldest', q: '你' },
  ];

  it.each(recallPagings)('GET /v1/recall in $order order answers 200 or a cursor refusal for arbitrary forged cursors', async ({ order, q }) => {
    const query = { q, limit: '5' };
    const res = await http().get('/v1/recall').query(query).expect(200);
    expect(res.body.order).toBe(order);
    const real = cursorJson(res.body.nextCursor);
    const asked = async (fields: Record<string, unknown>) =>
      expectPageOrRefusal(
        await http()
          .get('/v1/recall')
          .query({ ...query, cursor: cursorText(fields) }),
        fields,
        ['invalid_query', 'cursor_expired'],
      );
    await fc.assert(fc.asyncProperty(forgedFields(real, ['v', 'f', 'o', 'a', 'p', 'r', 's', 'l']), asked), { numRuns: RUNS });
    // The positions alone, near the real ones or at the edges: mostly well-formed cursors that reach the read models.
    const near = fc
      .oneof(
        { weight: 3, arbitrary: fc.bigInt({ min: 0n, max: BigInt(real.a as string) + 5n }) },
        { weight: 1, arbitrary: fc.constantFrom(2n ** 49n - 1n, 2n ** 49n, 2n ** 53n, 2n ** 63n - 1n) },
      )
      .map(String);
    await fc.assert(
      fc.asyncProperty(fc.record({ a: near, p: near }, { requiredKeys: [] }), (forged) => asked({ ...real, ...forged })),
      { numRuns: RUNS },
    );
  });

  it.each(['newest', 'oldest'])(
    'GET /v1/recall answers a %s cursor whose position is 2^53 to 2^63 − 1, or past its paging, 400 invalid_query: search again without cursor (it was 500)',
    async (order) => {
      const query = { q: order === 'newest' ? 'common' : '你', limit: '5' };
      const real = await firstCursor('/v1/recall', query);
      for (const p of [2n ** 53n, 2n ** 62n, 2n ** 63n - 1n, BigInt(real.a as string) + 1n]) {
        const res = await http()
          .get('/v1/recall')
          .query({ ...query, cursor: cursorText({ ...real, p: String(p) }) })
          .expect(400);
        expect(res.body).toMatchObject({ code: 'invalid_query', parameter: 'cursor' });
        expect(res.body.message).toBe(
          `cursor: is not a cursor this service made: its last position ${p} is past its paging's position (${real.a as string}); search again without cursor (the first page) and pass its nextCursor unchanged`,
        );
      }
    },
  );

  const lists = [
    { route: 'GET /v1/sessions', path: '/v1/sessions' },
    { route: 'GET /v1/sessions/{id}/compactions', path: '/v1/sessions/fc-b/compactions' },
    { route: 'GET /v1/erasures', path: '/v1/erasures' },
  ];

  it.each(lists)('$route answers 200 or a cursor refusal for arbitrary forged cursors', async ({ path }) => {
    const real = await firstCursor(path, { limit: '1' });
    await fc.assert(
      fc.asyncProperty(forgedFields(real, ['v', 'l', 'k', 's', 'h', 'f']), async (fields) =>
        expectPageOrRefusal(
          await http()
            .get(path)
            .query({ limit: '1', cursor: cursorText(fields) }),
          fields,
          ['invalid_query', 'cursor_expired'],
        ),
      ),
      { numRuns: RUNS },
    );
  });

  it('each list answers a well-formed cursor past its end (the log’s head, the session’s last revision) 400 invalid_query, as recall does (it answered 200: the first page again, the whole list, an empty page)', async () => {
    const head = BigInt((await http().get('/health').expect(200)).body.store.headPosition);
    const last = BigInt((await http().get('/v1/sessions/fc-b').expect(200)).body.revision);
    const pastEnd = [
      {
        path: '/v1/sessions',
        fields: { v: 1, l: 'sessions' },
        what: `its last position ${head + 1n} is past the end of this service's log (${head})`,
        key: head + 1n,
      },
      {
        path: '/v1/erasures',
        fields: { v: 1, l: 'erasures' },
        what: `its last position 99999999 is past the end of this service's log (${head})`,
        key: 99999999n,
      },
      {
        path: '/v1/sessions/fc-b/compactions',
        fields: { v: 1, l: 'compactions', s: 'fc-b' },
        what: `its last revision ${last + 1n} is past the session's last revision (${last})`,
        key: last + 1n,
      },
    ];
    for (const { path, fields, what, key } of pastEnd) {
      const res = await http()
        .get(path)
        .query({ cursor: cursorText({ ...fields, k: String(key) }) });
      expect({ path, status: res.status, body: res.body }).toMatchObject({
        path,
        status: 400,
        body: {
          code: 'invalid_query',
          parameter: 'cursor',
          message: `cursor: is not a cursor this service made: ${what}; list again without cursor (the first page) and pass its nextCursor unchanged`,
        },
      });
    }
    // The cursors the pages give are followed.
    for (const path of ['/v1/sessions', '/v1/erasures', '/v1/sessions/fc-b/compactions']) {
      const first = await http().get(path).query({ limit: '1' }).expect(200);
      await http().get(path).query({ limit: '1', cursor: first.body.nextCursor }).expect(200);
    }
  });

  it('GET /v1/sessions/{id}/events answers 200 or 400 validation_failed for arbitrary fromRevision values (its nextRevision)', async () => {
    const res = await http().get('/v1/sessions/fc-b/events').query({ limit: '1' }).expect(200);
    expect(res.body.nextRevision).toEqual(expect.any(String));
    await fc.assert(
      fc.asyncProperty(forgedValue, async (value) => {
        const fromRevision = typeof value === 'string' ? value : JSON.stringify(value);
        expectPageOrRefusal(await http().get('/v1/sessions/fc-b/events').query({ limit: '1', fromRevision }), value, ['validation_failed'], 'fromRevision');
      }),
      { numRuns: RUNS },
    );
  });
}

describe('forged cursors on every paging route (SQLite)', () => {
  let service: Harness;
  beforeAll(async () => {
    service = await startService();
    await seed(service);
  });
  afterAll(async () => {
    await service?.stop();
    if (service) fs.rmSync(service.dataDir, { recursive: true, force: true });
  });
  forgedCursorProperties(() => service);
});

describeUnlessSkipped(postgresUnavailableReason(), 'forged cursors on every paging route (PostgreSQL)', () => {
  const service = usePostgresService('forged_cursors');
  beforeAll(() => seed(service));
  forgedCursorProperties(() => service);
});
