/**
 * The extractive summarizer on texts built to make its patterns backtrack (issue 17, item 1): it
 * runs on the event loop during compaction, so every pattern must be linear in the text. The
 * patterns it replaced are kept here as oracles on texts short enough for them.
 */
import fc from 'fast-check';
import { extractiveSummary, type SummaryRequest } from '../src';

const request = (toSummarize: string[]): SummaryRequest => ({
  systemPrompt: 'unused',
  shadowPrompt: 'S?',
  currentSummaries: [],
  toSummarize,
  overlap: [],
  coveredIds: [],
});

// The patterns as they were: quadratic on the texts below, exact on short ones.
const OLD_EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const OLD_IDENTIFIER = /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{2,}\b/g;
const OLD_TOOL_CALLS = /^Assistant(?::[\s\S]*?)? \[tool calls: ([\s\S]*)\]$/;

describe('extractiveSummary on adversarial texts (issue 17, item 1)', () => {
  it.each([
    ['one letter (the e-mail pattern)', 'User: ' + 'a'.repeat(200_000)],
    ['hyphenated letters (the identifier pattern)', 'User: ' + 'a-'.repeat(100_000)],
    ['hyphenated digits (the identifier pattern)', 'Assistant: ' + '1-'.repeat(100_000)],
    ['tool-call markers without a closing bracket', 'Assistant: ' + ' [tool calls: f('.repeat(12_500)],
  ])('summarizes 200,000 characters of %s within 2 s of CPU (the old patterns took minutes)', (_, text) => {
    // CPU time of this process, not wall time: a busy machine (other jest workers) does not inflate it; a quadratic pattern does, by 100×.
    const started = process.cpuUsage();
    expect(extractiveSummary(request([text, 'User: done'])).length).toBeGreaterThan(0);
    const used = process.cpuUsage(started);
    expect((used.user + used.system) / 1000).toBeLessThan(2000);
  });

  const fragments = ['a', 'Z', '7', '-', '_', '.', '+', '@', 'x.io', ' ', 'ab12', '--', '__'];
  const shortText = fc.array(fc.constantFrom(...fragments), { maxLength: 40 }).map((p) => p.join(''));

  it('still finds every e-mail address and identifier the old patterns found (short texts)', () => {
    fc.assert(
      fc.property(shortText, (text) => {
        const summary = extractiveSummary(request([`User: ${text}`]), { maxChars: 20_000 });
        for (const m of text.matchAll(OLD_EMAIL)) expect(summary).toContain(m[0]);
        for (const m of text.matchAll(OLD_IDENTIFIER)) expect(summary).toContain(m[0]);
      }),
      { numRuns: 300 },
    );
  });

  const callFragments = ['Assistant', ':', ' [tool calls: ', 'f(', 'g.h(', '{}', ')', '), ', ']', ' ', 'x'];
  const callLine = fc.array(fc.constantFrom(...callFragments), { maxLength: 12 }).map((p) => p.join(''));

  it('names the tools of an assistant line as the old pattern did', () => {
    fc.assert(
      fc.property(callLine, (line) => {
        const summary = extractiveSummary(request([line]), { maxChars: 20_000 });
        const part = OLD_TOOL_CALLS.exec(line)?.[1];
        const names = part === undefined ? [] : [...part.matchAll(/(?:^|\), )([\w.:-]+)\(/g)].map((m) => m[1]);
        const toolsLine = summary.split('\n').indexOf('Tools used:');
        if (names.length === 0) expect(toolsLine).toBe(-1);
        else for (const name of names) expect(summary.split('\n')[toolsLine + 1]).toContain(name);
      }),
      { numRuns: 500 },
    );
  });
});
