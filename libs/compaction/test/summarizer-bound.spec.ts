/**
 * Summarizer bounds checked up front (DESIGN §3.4): when the fixed parts of a summarizer request
 * leave the minimum room for events, `planSummaryChunks` never refuses a request built on them;
 * the least working bound is exactly that; a strategy that leaves too little is refused naming
 * the prompt.
 */
import fc from 'fast-check';
import {
  checkSummarizerPromptsFit,
  getEstimator,
  InvalidParameterError,
  MIN_EVENT_ROOM,
  minimumSummarizerInputTokens,
  planSummaryChunks,
  summarizerEventRoom,
  type Strategy,
} from '../src';

const chars = getEstimator('chars');

describe('summarizer input bound (DESIGN §3.4, §3.7)', () => {
  it('a bound with room for events never makes planSummaryChunks refuse a request with those prompts', () => {
    fc.assert(
      fc.property(
        fc.record({
          systemPrompt: fc.string({ minLength: 1, maxLength: 800 }),
          shadowPrompt: fc.string({ minLength: 1, maxLength: 200 }),
          overlapSize: fc.integer({ min: 0, max: 6 }),
          bound: fc.integer({ min: 50, max: 4000 }),
          summary: fc.string({ maxLength: 6000 }),
          events: fc.array(fc.string({ maxLength: 3000 }), { minLength: 1, maxLength: 8 }),
          overlapText: fc.string({ maxLength: 3000 }),
        }),
        ({ systemPrompt, shadowPrompt, overlapSize, bound, summary, events, overlapText }) => {
          const parts = { systemPrompt, shadowPrompt, overlapSize };
          fc.pre(summarizerEventRoom(parts, bound, chars) >= MIN_EVENT_ROOM);
          const request = {
            systemPrompt,
            shadowPrompt,
            currentSummaries: summary ? [summary] : [],
            toSummarize: events,
            overlap: Array.from({ length: overlapSize }, () => overlapText),
            coveredIds: ['x'],
          };
          expect(() => planSummaryChunks(request, bound, chars)).not.toThrow();
        },
      ),
      { numRuns: 300 },
    );
  });

  it('the least working bound is the first with room for events', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 2000 }), fc.string({ maxLength: 100 }), fc.integer({ min: 0, max: 10 }), (systemPrompt, shadowPrompt, overlapSize) => {
        const parts = { systemPrompt, shadowPrompt, overlapSize };
        const least = minimumSummarizerInputTokens(parts, chars);
        expect(summarizerEventRoom(parts, least, chars)).toBeGreaterThanOrEqual(MIN_EVENT_ROOM);
        expect(summarizerEventRoom(parts, least - 1, chars)).toBeLessThan(MIN_EVENT_ROOM);
      }),
    );
  });

  it('refuses a summarizing strategy whose prompt leaves too little room, naming it; other strategies pass', () => {
    const strategy: Strategy = { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 1, shadowPrompt: 'S?', systemPrompt: 'p'.repeat(5000) };
    let thrown: unknown;
    try {
      checkSummarizerPromptsFit(strategy, 2000, chars);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidParameterError);
    expect((thrown as InvalidParameterError).parameter).toBe('systemPrompt');
    expect((thrown as Error).message).toMatch(/leaves 0 for the events/);
    expect(() => checkSummarizerPromptsFit({ ...strategy, systemPrompt: 'S', shadowPrompt: 'q'.repeat(5000) }, 2000, chars)).toThrow(/shadowPrompt/);
    expect(() => checkSummarizerPromptsFit({ ...strategy, systemPrompt: 'short' }, 2000, chars)).not.toThrow();
    expect(() => checkSummarizerPromptsFit({ type: 'sliding-window', maxEvents: 1 }, 10, chars)).not.toThrow();
  });
});
