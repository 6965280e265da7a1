/**
 * The session list's `updatedSince` sync on PostgreSQL (newcomer nctime, F1): a client keeps T, the
 * newest `lastActivityAt` it has seen, and asks `GET /v1/sessions?updatedSince=T` (at or after T)
 * again and again, reading every page, while 10 writers create sessions at once. Every session must
 * show up in some answer. Before the store stamped `recordedAt` under its head lock (the column
 * default was `now()`, the transaction's start), times went back in position order and such a
 * sync missed sessions whose time was already older than T when they became visible.
 * Runtime: about 10 s (one service starts; 300 appends and the polls).
 */
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { usePostgresService } from '../support/service-harness';

const SESSIONS = 300;
const WRITERS = 10;

interface ListAnswer {
  sessions: { sessionId: string; lastActivityAt: string }[];
  nextCursor?: string;
}

describeUnlessSkipped(postgresUnavailableReason(), 'an updatedSince sync on PostgreSQL', () => {
  const service = usePostgresService('updated_since');
  beforeAll(async () => {
    await service.http().get('/v1/sessions').expect(200);
  });

  /** Every page of `GET /v1/sessions?userId=…&updatedSince=since`, newest activity first. */
  async function sessionsSince(userId: string, since: string): Promise<ListAnswer['sessions']> {
    const all: ListAnswer['sessions'] = [];
    let cursor: string | undefined;
    do {
      const query = { userId, updatedSince: since, limit: '100', ...(cursor ? { cursor } : {}) };
      const page = (await service.http().get('/v1/sessions').query(query).expect(200)).body as ListAnswer;
      all.push(...page.sessions);
      cursor = page.nextCursor;
    } while (cursor);
    return all;
  }

  it('a client that asks again from the newest lastActivityAt it saw sees every session written meanwhile', async () => {
    const userId = 'sync-user';
    let since = new Date(Date.now() - 60_000).toISOString();
    const seen = new Set<string>();
    let writing = true;
    const poller = (async () => {
      for (;;) {
        const last = !writing;
        for (const s of await sessionsSince(userId, since)) {
          seen.add(s.sessionId);
          if (s.lastActivityAt > since) since = s.lastActivityAt;
        }
        if (last) return;
      }
    })();
    let next = 0;
    await Promise.all(
      Array.from({ length: WRITERS }, async () => {
        while (next < SESSIONS) {
          const id = `sync-${next++}`;
          await service
            .http()
            .post(`/v1/sessions/${id}/events`)
            .send({ userId, events: [{ id: 'e', type: 'user', text: 'x' }] })
            .expect(201);
        }
      }),
    );
    writing = false;
    await poller;
    const written = Array.from({ length: SESSIONS }, (_, i) => `sync-${i}`);
    expect(written.filter((id) => !seen.has(id))).toEqual([]);
  }, 120_000);
});
