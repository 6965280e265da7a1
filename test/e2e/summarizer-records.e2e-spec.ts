/**
 * What a decision's summarizer records tell the person paying the bill and an auditor, against a
 * local OpenAI-compatible server (newcomer ncsummarizer A1, A2, A4, F6):
 * - A1: the model the endpoint answered with (the reply's `model`) beside the one configured, in
 *   the answer and the compaction history; a reply naming none, or an odd one, handled;
 * - A2: a summary over its token budget: the budget, its cost, that it exceeded it and that it was
 *   kept, in the answer and the history;
 * - A4: the calls of a failed pass count under `reply="failed"` in /metrics, not `reply="used"`;
 * - F6: the session summary (and the list) totals the summarizer figures of its decisions; an
 *   erasure takes them away, /metrics keeps its aggregate counters.
 * Runtime: a few seconds (in-process service, SQLite).
 */
import { summarizerFromEnv } from '@lib/session';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';

jest.setTimeout(60_000);

const STRATEGY = { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 0 };

function conversation(prefix: string) {
  const events: Array<Record<string, unknown>> = [];
  for (let n = 0; n < 6; n++) {
    events.push({ id: `${prefix}-u${n}-${Math.random().toString(36).slice(2, 6)}`, type: 'user', text: `turn ${n}: move booking ${n}` });
    events.push({ id: `${prefix}-a${n}-${Math.random().toString(36).slice(2, 6)}`, type: 'assistant', text: `booking ${n} moved` });
  }
  return events;
}

describe('summarizer records', () => {
  const fake = new FakeOpenAiServer();
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-records-test',
      SUMMARIZER_MODEL: 'gpt-4o',
      SUMMARIZER_TIMEOUT_MS: '2000',
      SUMMARIZER_MAX_RETRIES: '2',
    }),
  }));
  afterAll(() => fake.close());
  beforeEach(() => fake.reset());

  /** Appends a conversation to `session`, compacts it, and returns the answer with the decision's history item. */
  async function compact(session: string) {
    await harness
      .http()
      .post(`/v1/sessions/${session}/events`)
      .send({ events: conversation(session) })
      .expect(201);
    const answer = (await harness.http().post(`/v1/sessions/${session}/compactions`).send({ strategy: STRATEGY }).expect(200)).body;
    const history = (await harness.http().get(`/v1/sessions/${session}/compactions?minPosition=${answer.position}`).expect(200)).body;
    return { answer, item: history.compactions.find((c: { compactionId: string }) => c.compactionId === answer.compactionId) };
  }

  async function metric(name: string, labels: string): Promise<number> {
    const text = (await harness.http().get('/metrics').expect(200)).text;
    const line = text.split('\n').find((l) => l.startsWith(`${name}{`) && l.includes(labels));
    return line ? Number(line.split(' ').pop()) : 0;
  }

  it('A1: the model the endpoint answered with is recorded beside the configured one, in the answer and the history', async () => {
    fake.setDefault({ reply: 'A recap of the bookings.', model: 'gpt-4o-2024-08-06' });
    const { answer, item } = await compact('a1');
    expect(fake.requests[0].model).toBe('gpt-4o');
    expect(answer.summarizer).toMatchObject({ kind: 'openai-compatible', model: 'gpt-4o', answeredModels: ['gpt-4o-2024-08-06'] });
    expect(item.summarizer).toMatchObject({ model: 'gpt-4o', answeredModels: ['gpt-4o-2024-08-06'], discarded: null });
  });

  it.each([
    ['absent', null, []],
    ['not a string', 12345, []],
    ['empty', '', []],
    ['huge', 'x'.repeat(10_000), ['x'.repeat(200) + '…']],
  ])('A1: a reply whose model is %s is used, and its answered models say what it named', async (name, rawModel, expected) => {
    fake.setDefault({ reply: 'A recap of the bookings.', rawModel });
    const { answer, item } = await compact(`a1-${name.replace(/\W+/g, '-')}`);
    expect(answer.outcome).toBe('compacted');
    expect(answer.summarizer).toMatchObject({ model: 'gpt-4o', answeredModels: expected });
    expect(item.summarizer.answeredModels).toEqual(expected);
  });

  it('A2: a summary over its budget records the budget, its cost, that it exceeded it and that it was kept whole', async () => {
    const recap = 'The traveller moved every booking to a later flight and asked for receipts. '.repeat(30).trim();
    fake.setDefault({ reply: recap });
    const { answer, item } = await compact('a2-over');
    expect(answer.outcome).toBe('compacted');
    expect(answer.summary.text).toBe(recap);
    expect(answer.summaryBudget).toEqual({ tokens: expect.any(Number), summaryTokens: answer.summary.tokens, exceeded: true, overBudget: 'kept' });
    expect(answer.summaryBudget.summaryTokens).toBeGreaterThan(answer.summaryBudget.tokens);
    expect(item.summaryBudget).toEqual(answer.summaryBudget);
  });

  it('A2: a summary within its budget says so; a failed pass has none', async () => {
    fake.setDefault({ reply: 'Bookings moved.' });
    const { answer, item } = await compact('a2-within');
    expect(answer.summaryBudget).toMatchObject({ summaryTokens: answer.summary.tokens, exceeded: false, overBudget: null });
    expect(item.summaryBudget).toEqual(answer.summaryBudget);
    fake.setDefault({ fault: 'status500' });
    const failed = await compact('a2-failed');
    expect(failed.answer.outcome).toBe('failed');
    expect(failed.answer.summaryBudget).toBeUndefined();
    expect(failed.item.summaryBudget).toBeNull();
  });

  it('A4: the calls of a failed pass count under reply="failed", not reply="used"', async () => {
    const failedLabels = 'origin="command",outcome="failed",reply="failed"';
    const usedLabels = 'origin="command",outcome="failed",reply="used"';
    const names = ['summarizer_calls_total', 'summarizer_retries_total', 'summarizer_unreported_usage_calls_total'];
    const before = await Promise.all(names.map((m) => metric(m, failedLabels)));
    const usedBefore = await metric('summarizer_calls_total', usedLabels);
    fake.setDefault({ fault: 'status500' });
    const { answer } = await compact('a4');
    expect(answer.outcome).toBe('failed');
    expect(fake.calls).toBe(3);
    const after = await Promise.all(names.map((m) => metric(m, failedLabels)));
    expect(after.map((v, i) => v - before[i])).toEqual([3, 2, 3]);
    expect(await metric('summarizer_calls_total', usedLabels)).toBe(usedBefore);
  });

  it("F6: the session summary totals its decisions' summarizer figures; an erasure takes them away, /metrics keeps its totals", async () => {
    const session = 'f6';
    fake.setDefault({ fault: 'status500' });
    const failed = await compact(session);
    expect(failed.answer.outcome).toBe('failed');
    fake.setDefault({ reply: 'A recap of the bookings.', usage: { prompt_tokens: 700, completion_tokens: 70 } });
    const done = await compact(session);
    expect(done.answer.outcome).toBe('compacted');
    const history = (await harness.http().get(`/v1/sessions/${session}/compactions?minPosition=${done.answer.position}`).expect(200)).body;
    const sum = (
      pick: (s: { calls: number; retries: number; unreportedUsageCalls: number; usage: { promptTokens: number; completionTokens: number } }) => number,
    ) => history.compactions.reduce((n: number, c: { summarizer: Parameters<typeof pick>[0] | null }) => n + (c.summarizer ? pick(c.summarizer) : 0), 0);
    const expected = {
      calls: sum((s) => s.calls),
      retries: sum((s) => s.retries),
      unreportedUsageCalls: sum((s) => s.unreportedUsageCalls),
      usage: { promptTokens: sum((s) => s.usage.promptTokens), completionTokens: sum((s) => s.usage.completionTokens) },
      discarded: { calls: 0, retries: 0, unreportedUsageCalls: 0, usage: { promptTokens: 0, completionTokens: 0 } },
    };
    expect(expected).toMatchObject({ calls: 4, retries: 2, unreportedUsageCalls: 3, usage: { promptTokens: 700, completionTokens: 70 } });
    const summary = (await harness.http().get(`/v1/sessions/${session}?minPosition=${done.answer.position}`).expect(200)).body;
    expect(summary.summarizerSpend).toEqual(expected);
    const list = (await harness.http().get(`/v1/sessions?minPosition=${done.answer.position}&limit=100`).expect(200)).body;
    expect(list.sessions.find((s: { sessionId: string }) => s.sessionId === session).summarizerSpend).toEqual(expected);
    const counted = await metric('summarizer_calls_total', 'origin="command",outcome="compacted",reply="used"');
    await harness.http().delete(`/v1/sessions/${session}`).expect(200);
    await harness.http().get(`/v1/sessions/${session}`).expect(404);
    expect(await metric('summarizer_calls_total', 'origin="command",outcome="compacted",reply="used"')).toBe(counted);
  });
});
