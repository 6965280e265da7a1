/**
 * A summarizing pass of several model calls (chunks) stops between its calls once another decision
 * has landed that its plan cannot be rebased onto, and is planned again on the new window (newcomer
 * ncrecheck63 F7): before, it sent its remaining chunks to the model and then discarded every reply.
 * Turns appended meanwhile do not stop it (a rebase takes them in): it makes every planned call.
 * Over HTTP with an OpenAI-compatible summarizer (a local endpoint that holds the pass's first call).
 */
import { summarizerFromEnv } from '@lib/session';
import { CompactionAnswerSchema } from '../../apps/session-service/src/http/response-schemas';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';

/** The first call after `holdNext()` waits until `release()`; the others answer at once. */
let held: { index: number; release: () => void; released: Promise<void> } | null = null;
function holdNext(): () => void {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  held = { index: -1, release, released };
  return release;
}
const fake = new FakeOpenAiServer({
  defaultBehaviour: async (_request, n) => {
    if (held && (held.index === -1 || held.index === n)) {
      held.index = n;
      await held.released;
    }
    return { reply: `Recap ${n + 1}.`, usage: { prompt_tokens: 100, completion_tokens: 10 } };
  },
});
const SUMMARIZING = { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 };

describe('a pass of several model calls, when the session changes between its calls', () => {
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-superseded-0123456789',
      SUMMARIZER_MAX_RETRIES: '0',
      SUMMARIZER_MAX_INPUT_TOKENS: '700',
    }),
  }));
  afterAll(() => fake.close());
  beforeEach(() => {
    fake.reset();
    held = null;
  });

  /** A session of `n` user and assistant messages of about 60 tokens each; the calls a summarizing pass would make on it (dry run). */
  async function session(id: string, n: number): Promise<number> {
    const messages = Array.from({ length: n }, (_, i) => ({
      id: `${id}-${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i} of ${id}: ${'the order ORD-1234 shipped to the warehouse in Lyon '.repeat(6)}`,
    }));
    await harness.http().post(`/v1/sessions/${id}/messages`).send({ messages }).expect(201);
    const dry = await harness.http().post(`/v1/sessions/${id}/compactions`).send({ strategy: SUMMARIZING, dryRun: true }).expect(200);
    return CompactionAnswerSchema.parse(dry.body).pendingSummary!.modelCalls!.planned;
  }

  async function firstCallMade(): Promise<void> {
    while (fake.calls < 1) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  it('another compaction archives part of what it planned: it makes no further call of that plan, and is planned again on the new window', async () => {
    const planned = await session('superseded', 8);
    expect(planned).toBeGreaterThan(2);
    const release = holdNext();
    const pass = harness
      .http()
      .post('/v1/sessions/superseded/compactions')
      .send({ strategy: SUMMARIZING })
      .then((r) => r);
    await firstCallMade();
    // a pass without the model lands while the first chunk's call runs
    const sliding = await harness
      .http()
      .post('/v1/sessions/superseded/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 4 } })
      .expect(200);
    expect(CompactionAnswerSchema.parse(sliding.body)).toMatchObject({ outcome: 'compacted', recorded: true });
    // what the pass makes when planned again on the window the sliding window left
    const replanned = CompactionAnswerSchema.parse(
      (await harness.http().post('/v1/sessions/superseded/compactions').send({ strategy: SUMMARIZING, dryRun: true }).expect(200)).body,
    ).pendingSummary!.modelCalls!.planned;
    release();
    const answer = CompactionAnswerSchema.parse((await pass).body);

    expect(answer).toMatchObject({ outcome: 'compacted', recorded: true });
    // one call of the first plan (its reply discarded), then the new plan's: none of the first plan's other chunks was sent
    expect(fake.calls).toBe(1 + replanned);
    expect(answer.discardedSummarizerCalls).toMatchObject({ calls: 1 });
    expect(answer.summarizer).toMatchObject({ calls: 1 + replanned });
  });

  it('turns appended meanwhile: the pass goes on and makes every call it planned, nothing discarded', async () => {
    const planned = await session('appended', 8);
    expect(planned).toBeGreaterThan(1);
    const release = holdNext();
    const pass = harness
      .http()
      .post('/v1/sessions/appended/compactions')
      .send({ strategy: SUMMARIZING })
      .then((r) => r);
    await firstCallMade();
    const messages = [{ id: 'appended-late', role: 'user', content: 'one more question about ORD-1234' }];
    await harness.http().post('/v1/sessions/appended/messages').send({ messages }).expect(201);
    release();
    const answer = CompactionAnswerSchema.parse((await pass).body);

    expect(answer).toMatchObject({ outcome: 'compacted', recorded: true });
    expect(fake.calls).toBe(planned);
    expect(answer.discardedSummarizerCalls).toBeUndefined();
  });
});
