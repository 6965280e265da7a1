/**
 * The write side bounds every summarizer's text by the longest text an event may hold
 * (`SessionSettings.maxTextLength`, the service's `MAX_TEXT_LENGTH`; DESIGN §3.7): a longer one
 * fails the pass like any unusable reply, whatever summarizer wrote it, and the bound is passed to
 * the summarizer, so the extractive one keeps within it.
 */
import { codePointLength, parseStrategy, type SessionEvent, type SummaryRequest } from '@lib/compaction';
import { SqliteEventStore } from '@lib/event-store';
import type { EventBus } from '@nestjs/cqrs';
import { ExtractiveSummarizer } from '../summarizers/extractive-summarizer';
import type { SummarizeOptions, Summarizer, SummarizerOutcome } from '../summarizers/summarizer';
import { COMPACTION_FAILED, SUMMARY_INSERTED, sessionKey, sessionStream } from '../events/session-stream-events';
import { AppendSessionEventsCommand, AppendSessionEventsHandler } from './append-session-events';
import { DEFAULT_SESSION_SETTINGS } from './auto-compaction';
import { CompactSessionCommand, CompactSessionHandler } from './compact-session';
import { SessionStateCache } from './session-state-cache';
import { INLINE_COUNT_LIMIT } from '../token-counting/token-counting-pool';

const noBus = { publish: () => undefined } as unknown as EventBus;
const STREAM = sessionStream(sessionKey('t', 's'));
const MAX_TEXT = 250;

/** A summarizer of another kind that ignores the bound it is given: it answers `text` and records its options. */
class FixedSummarizer implements Summarizer {
  readonly identity = { kind: 'openai-compatible' as const, model: 'fixed' };
  readonly options: SummarizeOptions[] = [];
  constructor(private readonly text: string) {}
  async summarize(_request: SummaryRequest, options: SummarizeOptions = {}): Promise<SummarizerOutcome> {
    this.options.push(options);
    return { ok: true, text: this.text, calls: 1, promptTokens: 40, completionTokens: 9 };
  }
}

describe('the summary length bound of the write side', () => {
  let store: SqliteEventStore;
  beforeEach(async () => {
    store = SqliteEventStore.open(':memory:');
    const events: SessionEvent[] = [];
    for (let i = 0; i < 30; i++) {
      events.push({ id: `u${i}`, type: 'user', text: `question ${i} about order ORD-${1000 + i}, shipped to 12 Long Street, flat ${i}` });
      events.push({ id: `a${i}`, type: 'assistant', text: `answer ${i}: the order ORD-${1000 + i} ships on 2024-05-${10 + (i % 20)}` });
    }
    await new AppendSessionEventsHandler(store, new SessionStateCache(store), noBus).execute(
      new AppendSessionEventsCommand(
        't',
        's',
        events.map((event) => ({ event })),
        'any',
      ),
    );
  });
  afterEach(() => store.close());

  const compact = (summarizer: Summarizer, maxTextLength = MAX_TEXT) =>
    new CompactSessionHandler(store, new SessionStateCache(store), summarizer, undefined, undefined, { ...DEFAULT_SESSION_SETTINGS, maxTextLength }).execute(
      new CompactSessionCommand('t', 's', parseStrategy({ type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1 }), null, 'cl100k_base', false),
    );
  const decisions = async () => (await store.readStream(STREAM)).filter((e) => e.type === SUMMARY_INSERTED || e.type === COMPACTION_FAILED);

  it('fails the pass of any summarizer whose text is one character over the bound, keeping its usage; the summarizer is told the bound', async () => {
    const summarizer = new FixedSummarizer('😀'.repeat(MAX_TEXT + 1));
    const answer = await compact(summarizer);
    expect(answer).toMatchObject({
      outcome: 'failed',
      failure: {
        stage: 'summarize',
        reason: `summarizer failed: reply longer than the longest text an event may hold (${MAX_TEXT + 1} characters, MAX_TEXT_LENGTH ${MAX_TEXT})`,
      },
      archived: [],
    });
    const [failed, ...rest] = await decisions();
    expect(rest).toEqual([]);
    expect(failed.type).toBe(COMPACTION_FAILED);
    expect(failed.data).toMatchObject({ summarizer: { kind: 'openai-compatible', calls: 1, promptTokens: 40, completionTokens: 9 } });
    expect(summarizer.options.map((o) => o.maxTextLength)).toEqual([MAX_TEXT]);
  });

  it('fails the pass of any summarizer whose text renders as nothing (a zero-width space), archiving nothing (newcomer ncdesign65 F1)', async () => {
    const answer = await compact(new FixedSummarizer('\u200b'));
    expect(answer).toMatchObject({
      outcome: 'failed',
      failure: { stage: 'summarize', reason: expect.stringMatching(/^summarizer failed: blank reply: only characters that render as nothing/) },
      archived: [],
    });
    expect((await decisions()).map((e) => e.type)).toEqual([COMPACTION_FAILED]);
  });

  it('stores a text of exactly the bound', async () => {
    const text = '😀'.repeat(MAX_TEXT);
    expect(await compact(new FixedSummarizer(text))).toMatchObject({ outcome: 'compacted' });
    const [inserted] = await decisions();
    expect(inserted).toMatchObject({ type: SUMMARY_INSERTED, data: { text } });
  });

  it('gets an extractive summary within the bound (it would be longer without it)', async () => {
    const extractive = new ExtractiveSummarizer();
    const requests: SummaryRequest[] = [];
    const recording: Summarizer = {
      identity: extractive.identity,
      summarize: (request, options) => {
        requests.push(request);
        return extractive.summarize(request, options);
      },
    };
    expect(await compact(recording)).toMatchObject({ outcome: 'compacted' });
    const [inserted] = await decisions();
    expect(inserted.type).toBe(SUMMARY_INSERTED);
    expect(codePointLength((inserted.data as { text: string }).text)).toBeLessThanOrEqual(MAX_TEXT);
    const unbounded = await extractive.summarize(requests[0]);
    expect(unbounded.ok && codePointLength(unbounded.text)).toBeGreaterThan(MAX_TEXT);
  });

  it('keeps an extractive summary of a large input (summarized in the worker thread) within the bound', async () => {
    const toSummarize = Array.from({ length: 200 }, (_, i) => `User: question ${i} about order ORD-${1000 + i}, shipped to 12 Long Street, flat ${i}`);
    expect(toSummarize.join('').length).toBeGreaterThan(INLINE_COUNT_LIMIT);
    const request: SummaryRequest = { systemPrompt: 'S', shadowPrompt: 'What happened?', currentSummaries: [], toSummarize, overlap: [], coveredIds: [] };
    const outcome = await new ExtractiveSummarizer().summarize(request, { maxTextLength: 120 });
    expect(outcome.ok && codePointLength(outcome.text)).toBeLessThanOrEqual(120);
    expect(outcome.ok && outcome.text.length).toBeGreaterThan(0);
  });
});
