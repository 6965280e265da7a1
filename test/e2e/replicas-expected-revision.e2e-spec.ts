/**
 * The same append, with the client's `expectedRevision`, sent to two replicas at once after a
 * compaction (newcomer's report: one replica answered 409 `wrong_expected_revision` naming the
 * revision its twin had just written). README "Optimistic concurrency": a resend of a request that
 * was written answers its original `{ revision, position }`; the service's own compaction decisions
 * do not count against the client's revision. So both replicas answer 201 with the one write, and
 * a resend afterwards answers it too. On one shared SQLite file, and on one PostgreSQL database
 * (unless none is available). Runtime: about 10 s (four services start; 20 rounds each).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createTestDatabase, postgresUnavailableReason, type TestDatabase } from '../../libs/event-store/test/postgres-test-database';
import { startService, type Harness } from '../support/service-harness';

const ROUNDS = 20;

/** Rounds on replicas `a` and `b` of one store: per round a new session, a compaction after revision 2, then the same append to both at once. */
async function sameAppendOnBothReplicas(a: Harness, b: Harness, prefix: string) {
  const outcomes: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const session = `/v1/sessions/${prefix}-${round}`;
    await a
      .http()
      .post(`${session}/events`)
      .send({
        events: [
          { id: 'u1', type: 'user', text: 'first question' },
          { id: 'a1', type: 'assistant', text: 'first answer' },
          { id: 'u2', type: 'user', text: 'second question' },
        ],
      })
      .expect(201);
    const compacted = await a
      .http()
      .post(`${session}/compactions`)
      .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
      .expect(200);
    expect(compacted.body).toMatchObject({ outcome: 'compacted', revision: '4' });
    const body = { expectedRevision: 2, events: [{ id: 'a2', type: 'assistant', text: 'second answer' }] };
    const [fromA, fromB] = await Promise.all([a, b].map((replica) => replica.http().post(`${session}/events`).send(body)));
    const resent = await b.http().post(`${session}/events`).send(body);
    // Each answer's status and body, with the write's position named `p` (it differs per round).
    const written = fromA.status === 201 ? fromA.body : fromB.body;
    const shown = (res: { status: number; body: { revision?: string; position?: string; code?: string } }) =>
      `${res.status} ${res.body.code ?? `${res.body.revision}@${res.body.position === written.position ? 'p' : res.body.position}`}`;
    outcomes.push([fromA, fromB, resent].map(shown).join(', '));
  }
  // Every round: both copies and the resend answered with the one write, at revision 5.
  expect(outcomes).toEqual(Array<string>(ROUNDS).fill('201 5@p, 201 5@p, 201 5@p'));
}

describe('the same append with expectedRevision sent to two replicas at once after a compaction', () => {
  it(`on one shared SQLite file: both answer the one write, ${ROUNDS} rounds out of ${ROUNDS}`, async () => {
    const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'session-e2e-shared-'));
    const env = { SQLITE_EVENTS_FILE: path.join(shared, 'events.sqlite') };
    const replicas: Harness[] = [];
    try {
      replicas.push(await startService({ env }), await startService({ env }));
      await sameAppendOnBothReplicas(replicas[0], replicas[1], 'sqlite');
    } finally {
      for (const r of replicas) {
        await r.stop();
        fs.rmSync(r.dataDir, { recursive: true, force: true });
      }
      fs.rmSync(shared, { recursive: true, force: true });
    }
  });

  const skipReason = postgresUnavailableReason();
  (skipReason ? it.skip : it)(
    `on one PostgreSQL database: both answer the one write, ${ROUNDS} rounds out of ${ROUNDS}${skipReason ? ` (${skipReason})` : ''}`,
    async () => {
      const db: TestDatabase = await createTestDatabase('twin');
      const replicas: Harness[] = [];
      try {
        replicas.push(await startService({ env: { DATABASE_URL: db.url } }), await startService({ env: { DATABASE_URL: db.url } }));
        await sameAppendOnBothReplicas(replicas[0], replicas[1], 'pg');
      } finally {
        for (const r of replicas) {
          await r.stop();
          fs.rmSync(r.dataDir, { recursive: true, force: true });
        }
        await db.drop();
      }
    },
  );
});
