/**
 * Compaction ids in any letter case (newcomer ncaudit56 F3): `GET …/compactions/{compactionId}` and
 * its `/diff` looked the id up as sent, so the upper-case spelling of an existing compaction's id
 * (as some tools and spreadsheets paste a UUID) answered 404 compaction_not_found, while recall's
 * `compactionId` filter, which lower-cases it, found the compaction. UUIDs are case-insensitive on
 * input (RFC 9562 §4): every route now reads a compaction id in any case and answers it as stored,
 * in lower case.
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
});
