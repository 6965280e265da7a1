/**
 * A pass's cost in model calls, previewed and bounded over HTTP (newcomer nccost63 F3): a dry run of a summarizing
 * strategy with a model summarizer answers `pendingSummary.modelCalls` (the calls the pass would make as planned
 * now, and SUMMARIZER_MAX_CALLS_PER_PASS); the real pass then makes exactly those calls when they are within the
 * bound, and fails `call_limit` before its first call when they are not, naming the number the dry run gave.
 */
import { summarizerFromEnv } from '@lib/session';
import { CompactionAnswerSchema } from '../../apps/session-service/src/http/response-schemas';
import { useService } from '../support/service-harness';
import { FakeOpenAiServer } from '../support/fake-openai-server';

const fake = new FakeOpenAiServer({ defaultBehaviour: 'A short recap.' });
const BOUND = 5;
const STRATEGY = { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 1 };

describe('the model calls of a pass: previewed by a dry run, bounded by SUMMARIZER_MAX_CALLS_PER_PASS', () => {
  beforeAll(() => fake.start());
  const harness = useService(() => ({
    summarizer: summarizerFromEnv({
      OPENAI_BASE_URL: fake.url,
      OPENAI_API_KEY: 'sk-preview-0123456789',
      SUMMARIZER_MAX_RETRIES: '0',
      SUMMARIZER_MAX_INPUT_TOKENS: '700',
      SUMMARIZER_MAX_CALLS_PER_PASS: String(BOUND),
    }),
  }));
  afterAll(() => fake.close());

  /** A session of `n` user and assistant messages of about 60 tokens each. */
  async function session(id: string, n: number): Promise<void> {
    const messages = Array.from({ length: n }, (_, i) => ({
      id: `${id}-${i}`,
      role: i % 2 ? 'assistant' : 'user',
      content: `message ${i} of ${id}: ${'the order ORD-1234 shipped to the warehouse in Lyon '.repeat(6)}`,
    }));
    await harness.http().post(`/v1/sessions/${id}/messages`).send({ messages }).expect(201);
  }

  /** The dry run's planned calls, then the real pass's answer and the calls the endpoint received for it. */
  async function previewThenCompact(id: string) {
    const dry = await harness.http().post(`/v1/sessions/${id}/compactions`).send({ strategy: STRATEGY, dryRun: true }).expect(200);
    const preview = CompactionAnswerSchema.parse(dry.body).pendingSummary?.modelCalls;
    expect(fake.calls).toBe(0);
    const real = await harness.http().post(`/v1/sessions/${id}/compactions`).send({ strategy: STRATEGY });
    return { preview, real: CompactionAnswerSchema.parse(real.body), calls: fake.calls };
  }

  beforeEach(() => fake.reset());

  it('within the bound: the dry run says how many calls, and the pass makes them', async () => {
    await session('small', 8);
    const { preview, real, calls } = await previewThenCompact('small');
    expect(preview).toEqual({ planned: expect.any(Number), max: BOUND });
    expect(preview!.planned).toBeGreaterThan(1);
    expect(preview!.planned).toBeLessThanOrEqual(BOUND);
    expect(real).toMatchObject({ outcome: 'compacted', recorded: true });
    expect(calls).toBe(preview!.planned);
  });

  it('over the bound: the dry run shows it, and the pass fails call_limit before its first call, naming the same number', async () => {
    await session('large', 40);
    const { preview, real, calls } = await previewThenCompact('large');
    expect(preview!.max).toBe(BOUND);
    expect(preview!.planned).toBeGreaterThan(BOUND);
    expect(calls).toBe(0);
    expect(real).toMatchObject({ outcome: 'failed', failure: { failureKind: 'call_limit' } });
    expect(real.failure!.reason).toContain(`needs at least ${preview!.planned} model calls`);
  });
});
