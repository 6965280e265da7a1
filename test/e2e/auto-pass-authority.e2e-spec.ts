/**
 * An automatic (policy-triggered) compaction whose authority ends while it waits for the model is
 * abandoned (`passAuthority`, DESIGN §4; README "Automatic compaction"): over HTTP with a model
 * summarizer held until the test lets it answer, on SQLite.
 * - F1: its policy is turned off (`PUT …/policy {"strategy": null}`) or replaced meanwhile: no
 *   decision after the policy event; the model call shows as discarded in `/metrics`.
 * - F2: its session is erased and written again with the same ids meanwhile: the new life (no
 *   policy) gets no automatic compaction, and no spend of a call made on the erased text.
 */
import { AutoCompactionScheduler, summarizerFromEnv } from '@lib/session';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';

const gates: Array<{ open: () => void; opened: Promise<void> }> = [];
function gate(n: number) {
  while (gates.length <= n) {
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    gates.push({ open, opened });
  }
  return gates[n];
}
const fake = new FakeOpenAiServer({
  defaultBehaviour: async (_request, n) => {
    await gate(n).opened;
    return { reply: `Recap number ${n + 1}.`, usage: { prompt_tokens: 100, completion_tokens: 10 } };
  },
});

/** Resolves once the endpoint has received `n` calls. */
async function callsMade(n: number): Promise<void> {
  while (fake.calls < n) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** The value of the `/metrics` sample of `name` whose labels include every one of `labels`, or 0. */
function sample(metrics: string, name: string, labels: Record<string, string>): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('an automatic compaction whose policy or session life ends while the model runs (HTTP, SQLite)', () => {
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-authority-0123456789', SUMMARIZER_MODEL: 'm', SUMMARIZER_MAX_RETRIES: '0' }),
  }));
  afterAll(() => fake.close());

  const policy = {
    strategy: { type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 },
    trigger: { type: 'turn-count', maxTurns: 2 },
    estimator: 'chars',
  };
  const turns = (text: string) => Array.from({ length: 7 }, (_, i) => ({ id: `m${i}`, type: 'user', text: `${text} ${i}` }));
  /** The types of the session's log, in order. */
  const logTypes = async (id: string) => (await harness.service.store.readStream(`session-default.${id}`)).map((e) => e.type);
  let calls = 0;

  it.each([
    ['turned off', { strategy: null }],
    ['replaced', { ...policy, strategy: { type: 'sliding-window', maxEvents: 4 } }],
  ])('policy %s while the pass waits for the model: no decision of the old policy after the policy event, the call discarded (F1)', async (_case, next) => {
    const id = `f1-${calls}`;
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    await harness.http().put(`/v1/sessions/${id}/policy`).send(policy).expect(200);
    await harness
      .http()
      .post(`/v1/sessions/${id}/events`)
      .send({ events: turns('question') })
      .expect(201);
    await callsMade(++calls);
    await harness.http().put(`/v1/sessions/${id}/policy`).send(next).expect(200);
    gate(calls - 1).open();
    await scheduler.whenIdle();
    const log = await harness.service.store.readStream(`session-default.${id}`);
    const policyAt = log.map((e) => e.type).lastIndexOf('AutoCompactionPolicySet');
    // after the policy event that ended the pass's authority: no decision of the old policy (a
    // replacing policy that fires gets a fresh pass of its own, without a model call: sliding-window)
    const decided = log.slice(policyAt + 1).filter((e) => e.type === 'CompactionCompleted' || e.type === 'CompactionFailed');
    expect(decided.map((e) => (e.data as { strategy: { type: string } }).strategy.type)).toEqual(next.strategy ? ['sliding-window'] : []);
    expect(fake.calls).toBe(calls);
    const metrics = (await harness.http().get('/metrics').expect(200)).text;
    expect(sample(metrics, 'summarizer_calls_total', { origin: 'auto', reply: 'discarded' })).toBeGreaterThanOrEqual(calls);
  });

  it('session erased and written again with the same ids while the pass waits for the model: the new life gets no automatic compaction (F2)', async () => {
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    await harness.http().put('/v1/sessions/f2/policy').send(policy).expect(200);
    await harness
      .http()
      .post('/v1/sessions/f2/events')
      .send({ events: turns('erased') })
      .expect(201);
    await callsMade(++calls);
    await harness.http().delete('/v1/sessions/f2').expect(200);
    await harness
      .http()
      .post('/v1/sessions/f2/events')
      .send({ events: turns('new') })
      .expect(201);
    gate(calls - 1).open();
    await scheduler.whenIdle();
    expect(fake.calls).toBe(calls);
    expect(await logTypes('f2')).toEqual(Array.from({ length: 7 }, () => 'ConversationEventAppended'));
    const answered = (await harness.http().get('/v1/sessions/f2/policy').expect(200)).body as { strategy: unknown };
    expect(answered.strategy).toBeNull();
  });
});
