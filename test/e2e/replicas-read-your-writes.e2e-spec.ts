/**
 * Read-your-writes across two replicas (in-process services) on one PostgreSQL database, when a
 * replica answers with a write it did not append itself (newcomer's report): a compaction
 * recorded by the other replica answered as a replay, a policy the other replica set answered as
 * unchanged, a compaction answered `noop` because the other replica had compacted already, a NATS
 * append redelivered to the other replica and answered from the log. A read
 * sent to that replica right after its answer, without `minPosition`, must show what it answered,
 * although its read models are behind (its projector is held: stopped, reported running); after a
 * 404 decided on the log (a session erased through the other replica), it must not show the session.
 * Runtime: about 12 s (two services start; the three cases about 1.5 s).
 */
import type { Response } from 'supertest';
import { CommandBus } from '@nestjs/cqrs';
import { EVENT_STORE, SessionProjector } from '@lib/session';
import { describeUnlessSkipped, postgresUnavailableReason } from '../../libs/event-store/test/postgres-test-database';
import { usePostgresReplicas } from '../support/postgres-replicas';
import { ControlledSummarizer, type Harness } from '../support/service-harness';
import { NatsCommandExecutor } from '../../apps/session-service/src/nats/nats-command-executor';
import { commandSubject } from '../../apps/session-service/src/nats/nats-names';
import { requestSchemas } from '../../apps/session-service/src/http/request-schemas';

const turn = (n: number) => [
  { id: `u${n}`, type: 'user', text: `question ${n} about ticket TK${n}` },
  { id: `a${n}`, type: 'assistant', text: `answer ${n}` },
];
/** Runs NATS commands on `replica` as its transport does (its command bus, the store its handlers use), without a NATS server. */
function natsCommands(replica: Harness) {
  const { app, config } = replica.service;
  const executor = new NatsCommandExecutor(app.get(CommandBus), app.get(EVENT_STORE), requestSchemas(config), {
    prefix: 'ryw',
    tenants: new Set(['default']),
    maxBodyBytes: 256 * 1024,
  });
  return (session: string, kind: string, body: unknown, commandId: string, redelivered: boolean) =>
    executor.execute({
      subject: commandSubject('ryw', 'default', session, kind),
      data: new TextEncoder().encode(JSON.stringify(body)),
      commandId,
      redelivered,
    });
}
const events = () => [{ id: 'sys', type: 'system', text: 'sys prompt' }, ...[0, 1, 2, 3, 4, 5, 6, 7].flatMap(turn)];

/**
 * Runs `scenario` with `replica`'s projector held (its read models stay where they are, and reads
 * wait as for a projector behind the log), then sends `reads` to it, lets the projector go on
 * after 300 ms and returns the reads' answers. A read that does not wait answers from the held
 * read models.
 */
async function withProjectorHeld<T>(replica: Harness, scenario: () => Promise<T>, reads: (t: T) => Array<PromiseLike<Response>>) {
  const projector = replica.service.app.get(SessionProjector);
  await projector.stop();
  const running = jest.spyOn(projector, 'state').mockReturnValue({ ...projector.state(), running: true });
  let restarted = false;
  try {
    const answer = await scenario();
    // .then() sends each request now (supertest sends on then), while the read models are behind.
    const pending = reads(answer).map((r) => Promise.resolve(r));
    await new Promise((resolve) => setTimeout(resolve, 300));
    running.mockRestore();
    projector.start(replica.service.store);
    restarted = true;
    return { answer, reads: await Promise.all(pending) };
  } finally {
    running.mockRestore();
    if (!restarted) projector.start(replica.service.store);
  }
}

const skipReason = postgresUnavailableReason();
describeUnlessSkipped(skipReason, 'two replicas on one PostgreSQL database: a read right after an answer shows what it answered', () => {
  let a: Harness;
  let b: Harness;
  const summarizerB = new ControlledSummarizer();
  const replicas = usePostgresReplicas('ryw', { summarizerB });

  beforeAll(async () => {
    ({ a, b } = replicas);
    // Both replicas past their start-up catch-up (a first read waits for the log's head).
    await a.http().get('/v1/sessions').expect(200);
    await b.http().get('/v1/sessions').expect(200);
  });

  it('a) a compaction answered as a replay of the decision the other replica recorded: its record, history and window', async () => {
    const appended = await a.http().post('/v1/sessions/replayed/events').send({ events: events() }).expect(201);
    // B's read models hold the session before its projector is held: a stale read shows the old window, not 404.
    await b.http().get(`/v1/sessions/replayed/window?minPosition=${appended.body.position}`).expect(200);
    const compaction = { strategy: { type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 50 } };
    const { answer, reads } = await withProjectorHeld(
      b,
      async () => {
        // B plans on the same revision as A and waits in its summarizer while A records the decision.
        const held = summarizerB.hold();
        const pendingB = b
          .http()
          .post('/v1/sessions/replayed/compactions')
          .send(compaction)
          .then((res) => res);
        await held;
        const fromA = await a.http().post('/v1/sessions/replayed/compactions').send(compaction).expect(200);
        expect(fromA.body.outcome).toBe('compacted');
        summarizerB.release();
        const fromB = await pendingB;
        expect(fromB.status).toBe(200);
        expect(fromB.body).toMatchObject({ outcome: 'compacted', replayed: true, compactionId: fromA.body.compactionId, position: fromA.body.position });
        return fromB.body as { compactionId: string };
      },
      ({ compactionId }) => [
        b.http().get(`/v1/sessions/replayed/compactions/${compactionId}`),
        b.http().get('/v1/sessions/replayed/compactions'),
        b.http().get('/v1/sessions/replayed/window'),
      ],
    );
    const [one, history, window] = reads;
    expect(one.status).toBe(200);
    expect(history.body.compactions?.map((c: { compactionId: string }) => c.compactionId)).toEqual([answer.compactionId]);
    expect(window.body.events?.some((e: { type: string }) => e.type === 'summary')).toBe(true);
  });

  it('b) a policy PUT retried on the other replica, answered unchanged: GET …/policy right after shows it', async () => {
    const policy = { strategy: { type: 'turn-window', maxTurns: 3 } };
    const { answer, reads } = await withProjectorHeld(
      b,
      async () => {
        const fromA = await a.http().put('/v1/sessions/retried-policy/policy').send(policy).expect(200);
        const fromB = await b.http().put('/v1/sessions/retried-policy/policy').send(policy).expect(200);
        expect(fromB.body).toEqual(fromA.body);
        return fromB.body;
      },
      () => [b.http().get('/v1/sessions/retried-policy/policy')],
    );
    expect(reads[0].status).toBe(200);
    expect(reads[0].body).toEqual(answer);
  });

  it('c) a compaction answered noop because the other replica compacted first: the window right after is the compacted one', async () => {
    const appended = await a.http().post('/v1/sessions/compacted-elsewhere/events').send({ events: events() }).expect(201);
    // B's read models hold the session before its projector is held: a stale read shows the old window, not 404.
    await b.http().get(`/v1/sessions/compacted-elsewhere/window?minPosition=${appended.body.position}`).expect(200);
    const compaction = { strategy: { type: 'turn-window', maxTurns: 2 } };
    const { answer, reads } = await withProjectorHeld(
      b,
      async () => {
        const fromA = await a.http().post('/v1/sessions/compacted-elsewhere/compactions').send(compaction).expect(200);
        expect(fromA.body.outcome).toBe('compacted');
        const fromB = await b.http().post('/v1/sessions/compacted-elsewhere/compactions').send(compaction).expect(200);
        // decided on A's decision: its position is the one to pass as minPosition to read that window through any replica
        expect(fromB.body).toMatchObject({ outcome: 'noop', reason: 'within-limit', revision: fromA.body.revision, position: fromA.body.position });
        return { fromA: fromA.body, fromB: fromB.body };
      },
      () => [b.http().get('/v1/sessions/compacted-elsewhere/window')],
    );
    const [window] = reads;
    expect(window.status).toBe(200);
    const ids = window.body.events.map((e: { id: string }) => e.id);
    for (const archived of answer.fromA.archived as string[]) expect(ids).not.toContain(archived);
    expect(ids).toEqual(answer.fromB.kept);
  });

  it('d) over NATS, an append redelivered to the other replica, answered from the log: the window and log right after show it', async () => {
    const body = { events: [0, 1].flatMap(turn).map(({ id: _id, ...e }) => e) };
    const { answer, reads } = await withProjectorHeld(
      b,
      async () => {
        const fromA = await natsCommands(a)('redelivered-append', 'append', body, 'cmd-append', false);
        expect(fromA.status).toBe(201);
        // JetStream gave the command to B too (A's ack was lost): B answers A's append, writes nothing.
        const fromB = await natsCommands(b)('redelivered-append', 'append', body, 'cmd-append', true);
        // The status and body; what each was decided on (`basis`) is read before each run.
        expect({ status: fromB.status, body: fromB.body }).toEqual({ status: fromA.status, body: fromA.body });
        return fromB;
      },
      () => [b.http().get('/v1/sessions/redelivered-append/window'), b.http().get('/v1/sessions/redelivered-append/events')],
    );
    const [window, log] = reads;
    expect(window.status).toBe(200);
    expect(window.body.events).toHaveLength(4);
    expect(log.body.events?.at(-1)).toMatchObject({ revision: (answer.body as { revision: string }).revision });
  });

  it('e) an erasure through one replica answers the position of its record: the other replica, with it as minPosition, no longer shows the session nor finds its text', async () => {
    const appended = await a.http().post('/v1/sessions/erased-elsewhere/events').send({ events: events() }).expect(201);
    await b.http().get(`/v1/sessions/erased-elsewhere?minPosition=${appended.body.position}`).expect(200);
    const { answer, reads } = await withProjectorHeld(
      b,
      async () => {
        const erased = await a.http().delete('/v1/sessions/erased-elsewhere').expect(200);
        expect(BigInt(erased.body.position)).toBeGreaterThan(BigInt(appended.body.position));
        return erased.body as { position: string };
      },
      ({ position }) => [
        b.http().get(`/v1/sessions/erased-elsewhere?minPosition=${position}`),
        b.http().get(`/v1/recall?q=TK3&sessionId=erased-elsewhere&minPosition=${position}`),
      ],
    );
    const [session, recall] = reads;
    expect(answer.position).toMatch(/^\d+$/);
    expect(session.status).toBe(404);
    expect(recall.status).toBe(200);
    expect(recall.body.items).toEqual([]);
  });

  it('f) a session erased through one replica: a compaction or a policy clear through the other answers 404, and its reads right after no longer show the session', async () => {
    for (const [session, command] of [
      [
        'erased-then-compacted',
        (id: string) =>
          b
            .http()
            .post(`/v1/sessions/${id}/compactions`)
            .send({ strategy: { type: 'turn-window', maxTurns: 2 } }),
      ],
      ['erased-then-cleared', (id: string) => b.http().put(`/v1/sessions/${id}/policy`).send({ strategy: null })],
    ] as const) {
      const appended = await a.http().post(`/v1/sessions/${session}/events`).send({ events: events() }).expect(201);
      await b.http().get(`/v1/sessions/${session}?minPosition=${appended.body.position}`).expect(200);
      const { reads } = await withProjectorHeld(
        b,
        async () => {
          await a.http().delete(`/v1/sessions/${session}`).expect(200);
          // decided on the log, which no longer holds the session, while B's read models still do
          const refused = await command(session);
          expect(refused.status).toBe(404);
          expect(refused.body.code).toBe('session_not_found');
        },
        () => [b.http().get(`/v1/sessions/${session}`), b.http().get(`/v1/sessions/${session}/window`)],
      );
      // they waited for the erasure record instead of answering from the held read models
      expect(reads.map((r) => r.status)).toEqual([404, 404]);
    }
  });
});
