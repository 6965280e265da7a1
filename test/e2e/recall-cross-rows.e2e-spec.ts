/**
 * Recall over HTTP finds the words of a query spread over a long event's index rows (read models
 * 22): a 600 KB tool result with `alpha…` at its head and `omega…` at its tail is found by both
 * words together, on the embedded store, with the projector in its worker thread, and on
 * PostgreSQL (a throwaway cluster; skipped where none can be made). Runtime: about 10 s.
 */
import { useService } from '../support/service-harness';
import { ThrowawayPostgres, throwawayPostgresUnavailableReason } from '../support/throwaway-postgres';

/** About `length` characters of spaced words none of the queries holds. */
function filler(length: number): string {
  return Array.from({ length: Math.ceil(length / 8) }, (_, i) => `fw${i % 9973}`).join(' ');
}

function crossRowsSuite(env: () => Record<string, string>): void {
  const harness = useService(() => ({ env: env() }));

  it('given a 600 KB tool result with one word at its head and one at its tail, when recall searches both, then it answers that event once', async () => {
    const http = () => harness.http();
    const text = `alphazq ${filler(600_000)} omegazq`;
    await http()
      .post('/v1/sessions/cross/events')
      .send({ events: [{ id: 'a1', type: 'assistant', text: null, toolCalls: [{ id: 'call_1', name: 'dump', arguments: '{}' }] }] })
      .expect(201);
    const appended = await http()
      .post('/v1/sessions/cross/events')
      .send({ events: [{ id: 't1', type: 'tool', responses: [{ toolCallId: 'call_1', name: 'dump', data: text }] }] })
      .expect(201);
    await http()
      .post('/v1/sessions/cross/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'omegazq alone' }] })
      .expect(201);
    await harness.projected(appended.body.position);
    const found = await http().get('/v1/recall').query({ q: 'alphazq omegazq', minPosition: appended.body.position }).expect(200);
    expect(found.body.items.map((h: { eventId: string }) => h.eventId)).toEqual(['t1']);
    expect(found.body.items[0].snippet).toMatch(/<mark>(alphazq|omegazq)<\/mark>/);
    const paged = await http().get('/v1/recall').query({ q: 'omegazq', limit: 1 }).expect(200);
    const next = await http().get('/v1/recall').query({ q: 'omegazq', limit: 1, cursor: paged.body.nextCursor }).expect(200);
    expect([...paged.body.items, ...next.body.items].map((h: { eventId: string }) => h.eventId).sort()).toEqual(['t1', 'u1']);
    expect(next.body.nextCursor).toBeUndefined();
  });
}

describe('recall across the rows of a long event (embedded store)', () => crossRowsSuite(() => ({})));

describe('recall across the rows of a long event (PROJECTOR_WORKER=true)', () => crossRowsSuite(() => ({ PROJECTOR_WORKER: 'true' })));

const noPostgres = throwawayPostgresUnavailableReason();
(noPostgres ? describe.skip : describe)('recall across the rows of a long event (PostgreSQL store)', () => {
  let pg: ThrowawayPostgres | undefined;
  beforeAll(async () => {
    pg = await ThrowawayPostgres.create();
  }, 60_000);
  afterAll(() => pg?.destroy());
  crossRowsSuite(() => ({ DATABASE_URL: pg!.url }));
});
