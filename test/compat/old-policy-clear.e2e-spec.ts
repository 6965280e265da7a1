/**
 * Old logs keep their meaning (newcomer ncaudit56 F4): builds before 2026-12-05 wrote a cleared
 * policy's event with the estimator its PUT defaulted to (`"estimator":"cl100k_base"`); current
 * builds write `null`. A log holding such a clear, written into a fresh store as those builds
 * wrote it, still reads as a clear: the log shows the event as written, the API answers no policy,
 * a clear sent again writes nothing, and a compaction without a strategy is refused.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, POLICY_SET, computeEventCosts, type ConversationEventData, type PolicySetData } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';

const SESSION = 'old-clear';
const metadata = { tenantId: 'default', sessionId: SESSION };
const userEvent = (id: string, text: string) => {
  const event = { id, type: 'user' as const, text };
  return { id: randomUUID(), type: CONVERSATION_EVENT, data: { event, costs: computeEventCosts(event) } satisfies ConversationEventData, metadata };
};
const set: PolicySetData = {
  strategy: { type: 'sliding-window', maxEvents: 4 },
  trigger: { type: 'turn-count', maxTurns: 2 },
  estimator: 'chars',
  setAt: '2026-12-04T10:00:00.000Z',
};
/** The clear as builds before 2026-12-05 wrote it. */
const oldClear: PolicySetData = { strategy: null, trigger: null, estimator: 'cl100k_base', setAt: '2026-12-04T11:00:00.000Z' };
const log = [
  userEvent('u1', 'Book a table for two.'),
  { id: randomUUID(), type: POLICY_SET, data: set, metadata },
  { id: randomUUID(), type: POLICY_SET, data: oldClear, metadata },
  userEvent('u2', 'At eight, please.'),
];

describe('a log holding a clear written with an estimator (builds before 2026-12-05)', () => {
  let h: Harness;
  /** Global position of the log's last event (for minPosition). */
  const last = String(log.length);

  beforeAll(async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'old-policy-clear-'));
    const store = SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
    for (const [i, e] of log.entries())
      await store.appendToStream(`session-default.${SESSION}`, [e], { expectedRevision: i === 0 ? 'no_stream' : BigInt(i - 1) });
    await store.close();
    h = await startService({ dataDir });
  });
  afterAll(async () => {
    await h.stop();
  });

  it('shows the event as written in the log, and answers no policy', async () => {
    const events = await h.http().get(`/v1/sessions/${SESSION}/events?minPosition=${last}`).expect(200);
    expect((events.body.events as Array<{ type: string; data: unknown }>).map((e) => [e.type, e.data])).toEqual(log.map((e) => [e.type, e.data]));
    const policy = await h.http().get(`/v1/sessions/${SESSION}/policy`).expect(200);
    // Written before policy events named who wrote them (newcomer ncui74 F1): requestedBy null.
    expect(policy.body).toEqual({
      sessionId: SESSION,
      strategy: null,
      trigger: null,
      estimator: null,
      setAt: oldClear.setAt,
      revision: '2',
      position: '3',
      requestedBy: null,
    });
    const session = await h.http().get(`/v1/sessions/${SESSION}`).expect(200);
    expect(session.body.policy).toBeNull();
  });

  it('answers a clear sent again with that event, writing nothing, and refuses a compaction by policy', async () => {
    const before = await h.service.store.headPosition();
    const clear = await h.http().put(`/v1/sessions/${SESSION}/policy`).send({ strategy: null }).expect(200);
    expect(clear.body).toMatchObject({
      strategy: null,
      trigger: null,
      estimator: null,
      setAt: oldClear.setAt,
      revision: '2',
      position: '3',
      requestedBy: null,
    });
    expect(await h.service.store.headPosition()).toBe(before);
    const compact = await h.http().post(`/v1/sessions/${SESSION}/compactions`).send({}).expect(400);
    expect(compact.body).toMatchObject({ code: 'invalid_parameter', parameter: 'strategy' });
  });
});
