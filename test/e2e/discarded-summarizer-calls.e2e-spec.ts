/**
 * Every model call's cost shows somewhere, over HTTP with a model summarizer (a local
 * OpenAI-compatible endpoint that holds each call until the test lets it answer). A commanded
 * compaction with other parameters than the session's policy, sent while the automatic pass of
 * an append waits for the model, calls the model too; the automatic pass decides first, and the
 * commanded pass is planned again on the window it left: its model call shows in its answer
 * (`discardedSummarizerCalls`), in the decision it writes when it writes one (`summarizer` with
 * `discarded`, also in the compaction history) and in `/metrics` (`summarizer_calls_total`,
 * `summarizer_tokens_total` with `reply="discarded"`). A refusal after the call (the session erased
 * meanwhile: 404; by policy, the policy cleared meanwhile: 400) carries it too.
 */
import { AutoCompactionScheduler, summarizerFromEnv } from '@lib/session';
import { CompactionAnswerSchema, CompactionHistoryItemSchema, ErrorBodySchema } from '../../apps/session-service/src/http/response-schemas';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';

/** Model calls held until `answer(n)` (0-based); call n reports (n+1)×100 prompt and (n+1)×10 completion tokens. */
class HeldCalls {
  private readonly gates: Array<{ open: () => void; opened: Promise<void> }> = [];

  gate(n: number) {
    while (this.gates.length <= n) {
      let open: () => void = () => undefined;
      const opened = new Promise<void>((resolve) => (open = resolve));
      this.gates.push({ open, opened });
    }
    return this.gates[n];
  }

  answer(n: number): void {
    this.gate(n).open();
  }
}

const held = new HeldCalls();
const fake = new FakeOpenAiServer({
  defaultBehaviour: async (_request, n) => {
    await held.gate(n).opened;
    return { reply: `Recap number ${n + 1}.`, usage: { prompt_tokens: (n + 1) * 100, completion_tokens: (n + 1) * 10 } };
  },
});
const MODEL = 'spent-model';

/** The value of the `/metrics` sample of `name` whose labels include every one of `labels`, or 0. */
function sample(metrics: string, name: string, labels: Record<string, string>): number {
  const line = metrics.split('\n').find((l) => l.startsWith(`${name}{`) && Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

/** Resolves once the endpoint has received `n` calls. */
async function callsMade(n: number): Promise<void> {
  while (fake.calls < n) await new Promise((resolve) => setTimeout(resolve, 5));
}

/** The `discardedSummarizerCalls` of one answered call: the fake's `nth` call (from 1) reports nth × 100 prompt and nth × 10 completion tokens. */
const oneCallOf = (nth: number) => ({
  kind: 'openai-compatible',
  model: MODEL,
  calls: 1,
  promptTokens: nth * 100,
  completionTokens: nth * 10,
  retries: 0,
  unreportedUsageCalls: 0,
  answeredModels: [MODEL],
});

describe('a model call whose reply a compaction pass does not use (HTTP, OpenAI-compatible summarizer)', () => {
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({ OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-spent-0123456789', SUMMARIZER_MODEL: MODEL, SUMMARIZER_MAX_RETRIES: '0' }),
  }));
  afterAll(() => fake.close());

  const policy = {
    strategy: { type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 },
    trigger: { type: 'turn-count', maxTurns: 5 },
    estimator: 'chars',
  };
  const turns = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `u${i}`, type: 'user', text: `question ${i}` }));

  it('planned again after the automatic pass: not-triggered, and the answer and /metrics show the model call; then planned again and compacting: the decision records both calls', async () => {
    const http = () => harness.http();
    const scheduler = harness.service.app.get(AutoCompactionScheduler);
    await http().put('/v1/sessions/spent/policy').send(policy).expect(200);
    await http()
      .post('/v1/sessions/spent/events')
      .send({ events: turns(8) })
      .expect(201);
    await callsMade(1); // the automatic pass waits for the model

    const other = {
      strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 },
      trigger: { type: 'turn-count', maxTurns: 4 },
      estimator: 'chars',
    };
    const commanded = http()
      .post('/v1/sessions/spent/compactions')
      .send(other)
      .then((r) => r);
    await callsMade(2);
    held.answer(0);
    await scheduler.whenIdle();
    held.answer(1);
    const answer = (await commanded).body as Record<string, unknown>;
    CompactionAnswerSchema.parse(answer);
    expect(answer).toMatchObject({ outcome: 'not-triggered', recorded: false });
    expect(answer.discardedSummarizerCalls).toEqual({
      kind: 'openai-compatible',
      model: MODEL,
      calls: 1,
      promptTokens: 200,
      completionTokens: 20,
      retries: 0,
      unreportedUsageCalls: 0,
      answeredModels: [MODEL],
    });

    let metrics = (await http().get('/metrics').expect(200)).text;
    expect(sample(metrics, 'summarizer_calls_total', { origin: 'auto', outcome: 'compacted', reply: 'used' })).toBe(1);
    expect(sample(metrics, 'summarizer_calls_total', { origin: 'command', outcome: 'not-triggered', reply: 'discarded' })).toBe(1);
    expect(sample(metrics, 'summarizer_tokens_total', { origin: 'command', outcome: 'not-triggered', reply: 'discarded', type: 'prompt' })).toBe(200);
    expect(sample(metrics, 'summarizer_tokens_total', { origin: 'command', outcome: 'not-triggered', reply: 'discarded', type: 'completion' })).toBe(20);

    // More turns: the automatic pass runs again; a commanded compaction that keeps fewer events
    // than it is planned again after it, calls the model again, and compacts.
    await http()
      .post('/v1/sessions/spent/events')
      .send({ events: turns(14).slice(8) })
      .expect(201);
    await callsMade(3);
    const fewer = { strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 }, estimator: 'chars' };
    const compacting = http()
      .post('/v1/sessions/spent/compactions')
      .send(fewer)
      .then((r) => r);
    await callsMade(4);
    // the commanded pass started before its first call reached the endpoint: it waits for that call, which it then discards
    const heldFrom = Date.now();
    held.answer(2);
    await scheduler.whenIdle();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const heldMs = Date.now() - heldFrom;
    held.answer(3);
    held.answer(4);
    const compacted = (await compacting).body as Record<string, unknown>;
    CompactionAnswerSchema.parse(compacted);
    const recorded = {
      kind: 'openai-compatible',
      model: MODEL,
      calls: 2,
      promptTokens: 900,
      completionTokens: 90,
      retries: 0,
      unreportedUsageCalls: 0,
      answeredModels: [MODEL],
      discarded: { calls: 1, promptTokens: 400, completionTokens: 40, retries: 0, unreportedUsageCalls: 0, answeredModels: [MODEL] },
    };
    expect(compacted).toMatchObject({ outcome: 'compacted', recorded: true, summarizer: recorded });
    // durationMs is the wall time from the pass's start (ncsummarizer F3): the discarded call's wait is in it
    const decisionItem = (
      await http()
        .get(`/v1/sessions/spent/compactions/${String(compacted.compactionId)}?minPosition=${String(compacted.position)}`)
        .expect(200)
    ).body as { durationMs: number };
    expect(decisionItem.durationMs).toBeGreaterThanOrEqual(heldMs);
    expect(compacted.discardedSummarizerCalls).toEqual({
      kind: 'openai-compatible',
      model: MODEL,
      calls: 1,
      promptTokens: 400,
      completionTokens: 40,
      retries: 0,
      unreportedUsageCalls: 0,
      answeredModels: [MODEL],
    });
    expect(fake.calls).toBe(5);

    const item = (
      await http()
        .get(`/v1/sessions/spent/compactions/${String(compacted.compactionId)}?minPosition=${String(compacted.position)}`)
        .expect(200)
    ).body as Record<string, unknown>;
    CompactionHistoryItemSchema.parse(item);
    expect(item.summarizer).toEqual({
      kind: 'openai-compatible',
      model: MODEL,
      calls: 2,
      retries: 0,
      unreportedUsageCalls: 0,
      usage: { promptTokens: 900, completionTokens: 90 },
      answeredModels: [MODEL],
      discarded: { calls: 1, retries: 0, unreportedUsageCalls: 0, usage: { promptTokens: 400, completionTokens: 40 }, answeredModels: [MODEL] },
    });
    // the session's totals (ncsummarizer F6): its decisions' figures summed, the discarded part apart
    const history = (
      await http()
        .get(`/v1/sessions/spent/compactions?minPosition=${String(compacted.position)}`)
        .expect(200)
    ).body as {
      compactions: Array<{ summarizer: { calls: number; usage: { promptTokens: number; completionTokens: number } } | null }>;
    };
    const spent = history.compactions.map((c) => c.summarizer!);
    const summary = (
      await http()
        .get(`/v1/sessions/spent?minPosition=${String(compacted.position)}`)
        .expect(200)
    ).body as Record<string, unknown>;
    expect(summary.summarizerSpend).toEqual({
      calls: spent.reduce((n, s) => n + s.calls, 0),
      retries: 0,
      unreportedUsageCalls: 0,
      usage: { promptTokens: spent.reduce((n, s) => n + s.usage.promptTokens, 0), completionTokens: spent.reduce((n, s) => n + s.usage.completionTokens, 0) },
      discarded: { calls: 1, retries: 0, unreportedUsageCalls: 0, usage: { promptTokens: 400, completionTokens: 40 } },
    });
    metrics = (await http().get('/metrics').expect(200)).text;
    expect(sample(metrics, 'summarizer_calls_total', { origin: 'command', outcome: 'compacted', reply: 'discarded' })).toBe(1);
    expect(sample(metrics, 'summarizer_calls_total', { origin: 'command', outcome: 'compacted', reply: 'used' })).toBe(1);
    expect(sample(metrics, 'summarizer_calls_total', { origin: 'auto', outcome: 'compacted', reply: 'used' })).toBe(2);
  });
  // ncauditor F2: two writers commanding a compaction of one session at once; the loser, planned again, found nothing
  // to archive and answered an unrecorded noop: its model call was in its answer and /metrics only, not in the audit
  it('two compactions commanded at once: the one planned again answers a recorded noop, and the compaction history lists it with its model call', async () => {
    const http = () => harness.http();
    await http()
      .post('/v1/sessions/two-writers/events')
      .send({ events: turns(8) })
      .expect(201);
    const n = fake.calls;
    const compaction = (maxEventsToKeep: number) =>
      http()
        .post('/v1/sessions/two-writers/compactions')
        .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep, overlapSize: 1 }, estimator: 'chars' })
        .then((r) => r);
    // both plan and call the model before either answers
    const first = compaction(3);
    await callsMade(n + 1);
    const second = compaction(4);
    await callsMade(n + 2);
    held.answer(n);
    const won = (await first).body as Record<string, unknown>;
    expect(won).toMatchObject({ outcome: 'compacted', recorded: true });
    held.answer(n + 1);
    const lost = (await second).body as Record<string, unknown>;
    CompactionAnswerSchema.parse(lost);
    const call = { calls: 1, retries: 0, unreportedUsageCalls: 0, promptTokens: (n + 2) * 100, completionTokens: (n + 2) * 10, answeredModels: [MODEL] };
    expect(lost).toMatchObject({
      outcome: 'noop',
      reason: 'within-limit',
      recorded: true,
      compactionId: expect.any(String),
      summarizer: { kind: 'openai-compatible', model: MODEL, ...call, discarded: call },
      discardedSummarizerCalls: { kind: 'openai-compatible', model: MODEL, ...call },
    });
    expect(fake.calls).toBe(n + 2);

    const history = (
      await http()
        .get(`/v1/sessions/two-writers/compactions?minPosition=${String(lost.position)}`)
        .expect(200)
    ).body as { compactions: Array<Record<string, unknown>> };
    for (const item of history.compactions) CompactionHistoryItemSchema.parse(item);
    const figures = {
      calls: 1,
      retries: 0,
      unreportedUsageCalls: 0,
      usage: { promptTokens: (n + 2) * 100, completionTokens: (n + 2) * 10 },
      answeredModels: [MODEL],
    };
    expect(history.compactions.map((c) => [c.compactionId, c.outcome, c.origin])).toEqual(
      expect.arrayContaining([
        [won.compactionId, 'compacted', 'command'],
        [lost.compactionId, 'noop', 'command'],
      ]),
    );
    expect(history.compactions.find((c) => c.compactionId === lost.compactionId)).toMatchObject({
      reason: 'within-limit',
      archivedIds: [],
      summarizer: { kind: 'openai-compatible', model: MODEL, ...figures, discarded: figures },
    });
    const summary = (
      await http()
        .get(`/v1/sessions/two-writers?minPosition=${String(lost.position)}`)
        .expect(200)
    ).body as { summarizerSpend: { calls: number; discarded: { calls: number } }; noopCompactionCount: number };
    expect(summary).toMatchObject({ noopCompactionCount: 1, summarizerSpend: { calls: 2, discarded: { calls: 1 } } });
  });
  // ncaudit2 F2: the session erased while the model call ran answered a bare 404 ("may never have existed"), the billed call dropped
  it('the session erased while the model call runs: the call is aborted, and the erased-session 404 (erasedAt) carries it in discardedSummarizerCalls', async () => {
    const http = () => harness.http();
    await http()
      .post('/v1/sessions/erased-mid/events')
      .send({ events: turns(8) })
      .expect(201);
    const n = fake.calls;
    const pass = http()
      .post('/v1/sessions/erased-mid/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 1 }, estimator: 'chars' })
      .then((r) => r);
    await callsMade(n + 1);
    const erased = (await http().delete('/v1/sessions/erased-mid').expect(200)).body as { erasedAt: string };
    held.answer(n);
    const answer = await pass;
    expect(answer.status).toBe(404);
    const body = ErrorBodySchema.parse(answer.body);
    expect(body).toMatchObject({ code: 'session_not_found', erasedAt: erased.erasedAt });
    expect(body.message).toContain(`was erased at ${erased.erasedAt}`);
    // The erasure aborted the call in flight (newcomer nccost63 F2): it reached the endpoint (it may be billed), its tokens unknown,
    // and no other call of the pass was sent.
    expect(body.discardedSummarizerCalls).toEqual({
      kind: 'openai-compatible',
      model: MODEL,
      calls: 1,
      promptTokens: 0,
      completionTokens: 0,
      retries: 0,
      unreportedUsageCalls: 1,
      answeredModels: [],
    });
    expect(fake.calls).toBe(n + 1);
  });
  it('the policy cleared while a compaction by policy waits for the model: the 400 naming strategy carries the call in discardedSummarizerCalls', async () => {
    const http = () => harness.http();
    await http()
      .post('/v1/sessions/cleared-mid/events')
      .send({ events: turns(8) })
      .expect(201);
    // set after the appends: no automatic pass runs (they follow appends)
    await http().put('/v1/sessions/cleared-mid/policy').send(policy).expect(200);
    const n = fake.calls;
    const pass = http()
      .post('/v1/sessions/cleared-mid/compactions')
      .send({})
      .then((r) => r);
    await callsMade(n + 1);
    await http().put('/v1/sessions/cleared-mid/policy').send({ strategy: null }).expect(200);
    held.answer(n);
    const answer = await pass;
    expect(answer.status).toBe(400);
    const body = ErrorBodySchema.parse(answer.body);
    expect(body).toMatchObject({ code: 'invalid_parameter', parameter: 'strategy' });
    expect(body.message).toContain('summarizer call(s) made before were spent all the same (discardedSummarizerCalls)');
    expect(body.discardedSummarizerCalls).toEqual(oneCallOf(n + 1));
    expect(fake.calls).toBe(n + 1);
  });
});
