/**
 * The newcomer's `repro-recall-cursor.sh` over HTTP: six hits paged by three; after one more
 * matching append elsewhere, page 2 repeated e3 (`e3 e4 e5`: the cursor keyed the next page on
 * the last hit's absolute BM25 value, which every append moves). Page 2 is now `e4 e5 e6`, and the
 * event appended after page 1 is left to a new search. Also with the projector in its worker
 * thread (another connection writes while a page is answered), and the answers to cursors of the
 * earlier release. Runtime: about 3 s.
 */
import { useService } from '../support/service-harness';

async function repro(
  harness: ReturnType<typeof useService>,
  session: string,
  word: string,
): Promise<{ all: string[]; page1: string[]; page2: string[]; page2Cursor?: string }> {
  const http = () => harness.http();
  let position = '0';
  for (let i = 1; i <= 6; i++) {
    const appended = await http()
      .post(`/v1/sessions/${session}/events`)
      .send({ events: [{ id: `e${i}`, type: 'user', text: `${word} ${'filler '.repeat(i)}` }] })
      .expect(201);
    position = appended.body.position;
  }
  // The projector has started (its worker thread can take longer than a read's MAX_WAIT_MS to: see `projected`).
  await harness.projected(position);
  const ids = (body: { items: Array<{ eventId: string }> }) => body.items.map((h) => h.eventId);
  const all = await http().get('/v1/recall').query({ q: word, limit: 100 }).expect(200);
  const page1 = await http().get('/v1/recall').query({ q: word, limit: 3 }).expect(200);
  await http()
    .post(`/v1/sessions/${session}-other/events`)
    .send({ events: [{ type: 'user', text: `${word} again` }] })
    .expect(201);
  const page2 = await http().get('/v1/recall').query({ q: word, limit: 3, cursor: page1.body.nextCursor }).expect(200);
  expect([page1.body.order, page2.body.order]).toEqual(['relevance', 'relevance']);
  return { all: ids(all.body), page1: ids(page1.body), page2: ids(page2.body), page2Cursor: page2.body.nextCursor };
}

describe('recall paging over HTTP while events are appended (repro-recall-cursor.sh)', () => {
  const harness = useService();

  it('given six hits paged by three, when one more matching event is appended elsewhere, then page 2 is e4 e5 e6 (it was e3 e4 e5)', async () => {
    const answer = await repro(harness, 'rc-1', 'zqwordone');
    expect(answer).toEqual({ all: ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'], page1: ['e1', 'e2', 'e3'], page2: ['e4', 'e5', 'e6'], page2Cursor: undefined });
    const fresh = await harness.http().get('/v1/recall').query({ q: 'zqwordone', limit: 100 }).expect(200);
    expect(fresh.body.items).toHaveLength(7);
  });

  it("gives each hit its event's revision, the one the session's log gives it, archived and summary hits too (newcomer ncrecall69 F3)", async () => {
    const http = () => harness.http();
    for (let i = 1; i <= 4; i++)
      await http()
        .post('/v1/sessions/rev-1/events')
        .send({
          events: [
            { id: `r${i}`, type: 'user', text: `zqrevword turn ${i}` },
            { id: `a${i}`, type: 'assistant', text: `noted ${i}` },
          ],
        })
        .expect(201);
    const pass = await http()
      .post('/v1/sessions/rev-1/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2 } })
      .expect(200);
    expect(pass.body.outcome).toBe('compacted');
    const log = await http().get(`/v1/sessions/rev-1/events?limit=100&minPosition=${pass.body.position}`).expect(200);
    const revisionOf = new Map((log.body.events as Array<{ eventId?: string; revision: string }>).map((e) => [e.eventId, e.revision]));
    const hits = (await http().get('/v1/recall').query({ q: 'zqrevword', sessionId: 'rev-1', limit: 100 }).expect(200)).body.items as Array<{
      eventId: string;
      revision: string;
      archived: boolean;
      type: string;
    }>;
    expect(hits.some((h) => h.archived)).toBe(true);
    expect(hits.some((h) => h.type === 'summary')).toBe(true);
    for (const hit of hits) expect({ id: hit.eventId, revision: hit.revision }).toEqual({ id: hit.eventId, revision: revisionOf.get(hit.eventId) });
  });

  it('answers a cursor of the earlier release 400 cursor_expired, saying to search again', async () => {
    const v1 = Buffer.from(JSON.stringify({ v: 1, r: -0.5, p: '3', f: 'AAAAAAAAAAAAAAAA' })).toString('base64url');
    const res = await harness.http().get('/v1/recall').query({ q: 'zqwordone', cursor: v1 }).expect(400);
    expect(res.body).toMatchObject({ code: 'cursor_expired', parameter: 'cursor' });
    expect(res.body.message).toMatch(/earlier release.*search again without cursor/);
  });

  it('answers a recall or list cursor of a later release (a rollback, or replicas of two versions) 400 cursor_expired, not "is not a cursor"', async () => {
    const text = (fields: object) => Buffer.from(JSON.stringify(fields)).toString('base64url');
    const recall = await harness
      .http()
      .get('/v1/recall')
      .query({ q: 'zqwordone', cursor: text({ v: 3, f: 'AAAAAAAAAAAAAAAA', a: '9' }) })
      .expect(400);
    expect(recall.body).toMatchObject({ code: 'cursor_expired', parameter: 'cursor' });
    expect(recall.body.message).toMatch(
      /^cursor: was made by a later release of the service \(cursor version 3; this release reads version 2\); search again without cursor/,
    );
    const list = await harness
      .http()
      .get('/v1/sessions')
      .query({ cursor: text({ v: 2, l: 'sessions', k: '5' }) })
      .expect(400);
    expect(list.body).toMatchObject({ code: 'cursor_expired', parameter: 'cursor' });
    expect(list.body.message).toMatch(/later release.*list again without cursor/);
  });
});

describe('recall paging over HTTP with PROJECTOR_WORKER=true', () => {
  const harness = useService({ env: { PROJECTOR_WORKER: 'true' } });

  it('given six hits paged by three, when one more matching event is appended elsewhere, then page 2 is e4 e5 e6', async () => {
    const answer = await repro(harness, 'rc-2', 'zqwordtwo');
    expect(answer).toEqual({ all: ['e1', 'e2', 'e3', 'e4', 'e5', 'e6'], page1: ['e1', 'e2', 'e3'], page2: ['e4', 'e5', 'e6'], page2Cursor: undefined });
  });
});
