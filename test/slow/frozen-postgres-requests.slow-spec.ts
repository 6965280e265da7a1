/**
 * Requests on a frozen PostgreSQL are answered within a bound (pgfrozen): a throwaway cluster of its own (on a
 * free port: a fixed one, 56340, lay in the ephemeral range and was taken by a parallel test's connection in CI,
 * stop 52), frozen by SIGSTOP with the service's pooled connections open (a hung host, a network
 * partition dropping packets), so the server never applies its own `statement_timeout`. With
 * DATABASE_STATEMENT_TIMEOUT_MS=2000 the service's client-side bound on an answer is 7 s
 * (`answerTimeoutMs`): appends (some in flight when the server froze), a read of the log and an erasure each
 * answer 503 `store_unavailable` within it (a read: the 10 s connect wait + the bound; a write: the bound, the
 * re-run window of the lost answer, 10 s, and one re-run's bound), the message naming the bound; `/health`
 * says `unavailable`. After SIGCONT the same process recovers without a restart: the refused writes, sent again
 * unchanged, are answered (as the original when the lost run had committed), and the log holds every
 * acknowledged id once, nothing twice; the projector caught up; the erased session is gone.
 * Before the bound (main at 8ed6239) the append, the read and the erasure got no answer at all (a client
 * limit of 90 s ran out).
 * Runtime: about 90 s (initdb, one service start-up, the freeze).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { SessionEvent } from '@lib/compaction';
import { ANSWER_MARGIN_MS } from '@lib/event-store';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { CONVERSATION_EVENT } from '@lib/session';
import { spawnService, type ServiceProcess } from '../support/service-process';
import { streamOf } from '../support/log-checks';
import { ThrowawayPostgres, throwawayPostgresUnavailableReason } from '../support/throwaway-postgres';
import { describeUnlessSkipped } from '../../libs/event-store/test/postgres-test-database';

jest.setTimeout(400_000);

const STATEMENT_TIMEOUT_MS = 2000;
/** The service's bound on one answer with that statement timeout. */
const ANSWER_BOUND_MS = STATEMENT_TIMEOUT_MS + ANSWER_MARGIN_MS;
/** The store's wait for a connection (and the re-run window of a lost answer). */
const CONNECT_MS = 10_000;
/** Scheduling slack on a shared, loaded machine. */
const SLACK_MS = 5000;
/** A read: a connection (at most CONNECT_MS) and one answer. */
const READ_LIMIT_MS = CONNECT_MS + ANSWER_BOUND_MS + SLACK_MS;
/** A write whose answer is lost: its run, the re-run window, one re-run's connection and answer. */
const WRITE_LIMIT_MS = 2 * ANSWER_BOUND_MS + 2 * CONNECT_MS + SLACK_MS;
/** How long the client waits before giving up (then status 0): well past every limit. */
const CLIENT_LIMIT_MS = 90_000;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const turn = (client: string, n: number): SessionEvent[] => [
  { id: `${client}-u${n}`, type: 'user', text: `frozen question ${n} from ${client}` },
  { id: `${client}-a${n}`, type: 'assistant', text: `frozen answer ${n} to ${client}` },
];

interface Timed {
  status: number;
  body: { code?: string; message?: string; mayHaveBeenWritten?: boolean; [k: string]: unknown } | null;
  ms: number;
}

/** A request with a client-side limit: its status (0 when no answer came within CLIENT_LIMIT_MS), JSON body and time taken. */
async function timed(base: string, method: string, route: string, body?: unknown): Promise<Timed> {
  const started = Date.now();
  try {
    const res = await fetch(base + route, {
      method,
      headers: body !== undefined ? { 'content-type': 'application/json' } : {},
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(CLIENT_LIMIT_MS),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Timed['body']) : null, ms: Date.now() - started };
  } catch {
    return { status: 0, body: null, ms: Date.now() - started };
  }
}

describeUnlessSkipped(throwawayPostgresUnavailableReason(), 'requests on a frozen PostgreSQL', () => {
  let cluster: ThrowawayPostgres | undefined;
  let svc: ServiceProcess | undefined;
  let frozen = false;
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'frozen-requests-'));
  afterAll(async () => {
    if (frozen) cluster?.signalAll('SIGCONT');
    await svc?.kill();
    cluster?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answer 503 store_unavailable within the bound, and after SIGCONT every acknowledged id is in the log once', async () => {
    cluster = await ThrowawayPostgres.create();
    svc = await spawnService({ dataDir, env: { DATABASE_URL: cluster.url, DATABASE_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS) } });
    const base = svc.url;
    const append = (session: string, client: string, n: number) => timed(base, 'POST', `/v1/sessions/${session}/events`, { events: turn(client, n) });
    const acked: string[] = [];
    /** Requests refused while frozen, sent again unchanged after the thaw. */
    const refused: Array<{ session: string; client: string; n: number }> = [];

    // Pooled connections to the server, as a replica that served requests has; a session to erase later.
    const warm = await Promise.all([0, 1, 2, 3, 4, 5].map((n) => append('frozen', 'warm', n)));
    expect(warm.map((a) => a.status)).toEqual([201, 201, 201, 201, 201, 201]);
    for (let n = 0; n < 6; n++) acked.push(...turn('warm', n).map((e) => e.id));
    expect((await append('doomed', 'doomed', 0)).status).toBe(201);
    // Idle pooled connections when the server freezes, more than the background work (projector, subscriptions,
    // health) can hold: appends to one session may share a connection or two, so these go to sessions of their
    // own at once. Without them a request sent while frozen may find every pooled connection hung and wait for a
    // new one, answering "no connection within the connect timeout" instead of the statement bound (CI, stop 42).
    const pooled = await Promise.all(Array.from({ length: 12 }, (_, n) => append(`pool-${n}`, 'pool', n)));
    expect(pooled.map((a) => a.status)).toEqual(pooled.map(() => 201));

    // Appends in flight when the server freezes: each is answered, 201 or 503, within the bound.
    let appending = true;
    const inFlight = (async () => {
      const answers: Timed[] = [];
      for (let n = 0; appending; n++) {
        const res = await append('frozen', 'during', n);
        answers.push(res);
        if (res.status === 201) acked.push(...turn('during', n).map((e) => e.id));
        else refused.push({ session: 'frozen', client: 'during', n });
      }
      return answers;
    })();
    await sleep(300);
    cluster.signalAll('SIGSTOP');
    frozen = true;
    let during: Timed[];
    let write: Timed, read: Timed, readAhead: Timed, erasure: Timed, health: Timed;
    const headBefore = BigInt(String(warm[5].body!.position));
    try {
      await sleep(200);
      appending = false;
      // While frozen: an append, a read of the log (from the store) and an erasure, at once.
      [write, read, readAhead, erasure] = await Promise.all([
        append('frozen', 'down', 0),
        timed(base, 'GET', '/v1/sessions/frozen/events?limit=1000'),
        timed(base, 'GET', `/v1/sessions/frozen/events?limit=1000&minPosition=${headBefore + 1000n}`),
        timed(base, 'DELETE', '/v1/sessions/doomed'),
      ]);
      during = await inFlight;
      health = await timed(base, 'GET', '/health');
    } finally {
      cluster.signalAll('SIGCONT');
      frozen = false;
    }
    const last = during[during.length - 1];
    process.stderr.write(
      `frozen: append ${write.status} in ${write.ms} ms, read ${read.status} in ${read.ms} ms, read ahead ${readAhead.status} ${readAhead.body?.code} in ${readAhead.ms} ms, erasure ${erasure.status} in ${erasure.ms} ms; in flight: ${during
        .map((a) => `${a.status}/${a.ms}ms`)
        .join(' ')}\n${[last, write, readAhead, erasure].map((a) => `  ${a.status} ${JSON.stringify(a.body)}`).join('\n')}\n`,
    );
    refused.push({ session: 'frozen', client: 'down', n: 0 });

    expect({ status: last.status, code: last.body?.code }).toEqual({ status: 503, code: 'store_unavailable' });
    for (const answer of during)
      expect({ status: answer.status, fast: answer.ms < WRITE_LIMIT_MS }).toEqual({ status: answer.status === 201 ? 201 : 503, fast: true });
    expect({ status: write.status, code: write.body?.code, fast: write.ms < WRITE_LIMIT_MS }).toEqual({ status: 503, code: 'store_unavailable', fast: true });
    expect({ status: erasure.status, code: erasure.body?.code, fast: erasure.ms < WRITE_LIMIT_MS }).toEqual({
      status: 503,
      code: 'store_unavailable',
      fast: true,
    });
    // A read of the read models is served from the replica's SQLite (200 at once, as in postgres-outage.slow-spec.ts);
    // one that must wait for a position the projector has not reached asks the store's head: answered within the bound too.
    if (read.status !== 200)
      expect({ status: read.status, code: read.body?.code, fast: read.ms < READ_LIMIT_MS }).toEqual({ status: 503, code: 'store_unavailable', fast: true });
    expect({ status: readAhead.status, fast: readAhead.ms < READ_LIMIT_MS }).toEqual({ status: 503, fast: true });
    expect(['projection_behind', 'store_unavailable']).toContain(readAhead.body?.code);
    // The 503s that met the bound name it: a read or a write refused before it was sent says nothing was written;
    // a write whose answer did not come may have been written.
    const bound = new RegExp(`PostgreSQL did not answer (this write )?within ${ANSWER_BOUND_MS} ms`);
    const boundNamed = [last, write, read, erasure].filter((a) => a.status === 503 && bound.test(a.body?.message ?? ''));
    expect(boundNamed.length).toBeGreaterThan(0);
    for (const answer of boundNamed) expect(answer.body?.mayHaveBeenWritten).toBe(/this write/.test(answer.body!.message!));
    expect(health.status).toBe(200);
    expect(health.body?.status).toBe('unavailable');
    process.stderr.write(`health while frozen: ${JSON.stringify({ store: health.body?.store, projector: health.body?.projector })}\n`);

    // Thawed: the same process serves again; the refused writes, sent again unchanged, are answered.
    let healthAfter: Timed = health;
    for (let i = 0; i < 200 && healthAfter.body?.status !== 'ok'; i++) {
      await sleep(100);
      healthAfter = await timed(base, 'GET', '/health');
    }
    for (const { session, client, n } of refused) {
      let again = await append(session, client, n);
      for (let i = 0; i < 50 && again.status === 503; i++) {
        await sleep(200);
        again = await append(session, client, n);
      }
      expect({ request: `${client}-${n}`, status: again.status }).toEqual({ request: `${client}-${n}`, status: 201 });
      acked.push(...turn(client, n).map((e) => e.id));
    }
    const erasedAgain = await timed(base, 'DELETE', '/v1/sessions/doomed');
    expect(erasedAgain.status).toBe(200);
    const after = await append('frozen', 'after', 0);
    expect(after.status).toBe(201);
    acked.push(...turn('after', 0).map((e) => e.id));
    expect({ status: healthAfter.status, said: healthAfter.body?.status }).toEqual({ status: 200, said: 'ok' });

    // The projector resumed: the window shows every acknowledged event, each once.
    const window = await timed(base, 'GET', `/v1/sessions/frozen/window?minPosition=${String(after.body!.position)}`);
    expect(window.status).toBe(200);
    const windowIds = (window.body!.events as Array<{ id: string }>).map((e) => e.id);
    expect([...windowIds].sort()).toEqual([...acked].sort());
    expect((await timed(base, 'GET', '/v1/sessions/doomed/window')).status).toBe(404);

    // The log itself: every acknowledged id once, nothing else; the erased session's events gone.
    const store = PostgresEventStore.connect(cluster.url);
    try {
      const ids = (await store.readStream(streamOf('frozen')))
        .filter((e) => e.type === CONVERSATION_EVENT)
        .map((e) => (e.data as { event: { id: string } }).event.id);
      expect([...ids].sort()).toEqual([...acked].sort());
      const doomed = (await store.readStream(streamOf('doomed'))).filter((e) => e.type === CONVERSATION_EVENT);
      expect(doomed).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
