/**
 * Compaction ids in any letter case (newcomer ncaudit56 F3): `GET …/compactions/{compactionId}` and
 * its `/diff` looked the id up as sent, so the upper-case spelling of an existing compaction's id
 * (as some tools and spreadsheets paste a UUID) answered 404 compaction_not_found, while recall's
 * `compactionId` filter, which lower-cases it, found the compaction. UUIDs are case-insensitive on
 * input (RFC 9562 §4): every route now reads a compaction id in any case and answers it as stored,
 * in lower case. A path id that is not a UUID at all is still 404 compaction_not_found, its
 * message saying so, in the words recall's filter uses for it (400).
 */
import * as fs from 'node:fs';
import { startService, type Harness } from '../support/service-harness';

jest.setTimeout(60_000);

/** `id` with its letters alternately upper and lower case (a spelling no answer gives). */
const mixedCase = (id: string) =>
  id
    .split('')
    .map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c))
    .join('');

describe('compaction ids in any letter case', () => {
  let service: Harness;
  let compactionId: string;
  const http = () => service.http();
  beforeAll(async () => {
    service = await startService();
    await http()
      .post('/v1/sessions/case-s/events')
      .send({ events: [0, 1, 2, 3].map((i) => ({ id: `u${i}`, type: 'user', text: `zqcase turn ${i}` })) })
      .expect(201);
    const compacted = await http()
      .post('/v1/sessions/case-s/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 1 } })
      .expect(200);
    compactionId = compacted.body.compactionId;
    expect(compactionId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await service.projected(compacted.body.position);
  });
  afterAll(async () => {
    await service?.stop();
    if (service) fs.rmSync(service.dataDir, { recursive: true, force: true });
  });

  it.each([
    ['upper', (id: string) => id.toUpperCase()],
    ['mixed', mixedCase],
  ])(
    'given the %s-case spelling of a compaction id, then the compaction, its diff and recall’s filter all answer that compaction, its id in lower case',
    async (_, spell) => {
      const asAnswered = (await http().get(`/v1/sessions/case-s/compactions/${compactionId}`).expect(200)).body;
      const item = await http().get(`/v1/sessions/case-s/compactions/${spell(compactionId)}`);
      expect({ status: item.status, body: item.body }).toEqual({ status: 200, body: asAnswered });
      const diffAsAnswered = (await http().get(`/v1/sessions/case-s/compactions/${compactionId}/diff`).expect(200)).body;
      const diff = await http().get(`/v1/sessions/case-s/compactions/${spell(compactionId)}/diff`);
      expect({ status: diff.status, body: diff.body }).toEqual({ status: 200, body: diffAsAnswered });
      expect(diff.body.compactionId).toBe(compactionId);
      const recall = await http()
        .get('/v1/recall')
        .query({ q: 'zqcase', sessionId: 'case-s', compactionId: spell(compactionId) })
        .expect(200);
      expect(recall.body.items.length).toBeGreaterThan(0);
      expect(recall.body.items.every((hit: { compactionId?: string }) => hit.compactionId === compactionId)).toBe(true);
    },
  );

  it('given an id no compaction has, in any case, then 404 compaction_not_found naming it as sent', async () => {
    const other = compactionId.replace(/^./, (c) => (c === '0' ? '1' : '0')).toUpperCase();
    const res = await http().get(`/v1/sessions/case-s/compactions/${other}/diff`).expect(404);
    expect(res.body).toMatchObject({ code: 'compaction_not_found', message: `session "case-s" has no compaction "${other}"` });
  });

  // The path answered 404 as for any unknown id, recall's filter 400 saying ids are UUIDs (newcomer F4):
  // the 404 stays (documented), its message now says the id is not even a UUID.
  it.each([
    ['the compaction', '/v1/sessions/case-s/compactions/not-a-uuid'],
    ['its diff', '/v1/sessions/case-s/compactions/not-a-uuid/diff'],
    ['the compaction, a UUID one character short', `/v1/sessions/case-s/compactions/${'0'.repeat(8)}-0000-0000-0000-00000000000`],
  ])('given a path id that is not a UUID, then %s answers 404 compaction_not_found saying it is no compaction id', async (_name, path) => {
    const id = path.split('/')[5];
    const res = await http().get(path).expect(404);
    expect(res.body).toEqual({
      code: 'compaction_not_found',
      message:
        `session "case-s" has no compaction "${id}": it is not a compaction id: compaction ids are UUIDs such as ` +
        '"0f8e5e7a-3b1c-5d2e-9f4a-6b7c8d9e0f1a": take it from a compaction answer, the compaction history or a recall hit',
    });
    const filter = await http().get(`/v1/recall?q=zqcase&compactionId=${id}`).expect(400);
    expect(filter.body.message).toBe(`compactionId: is not a compaction id: ${res.body.message.split(': it is not a compaction id: ')[1]}`);
  });
});
