/**
 * The extractive summary's "User messages" section gives user messages sent in a row with the same
 * text one line, counted (`- (×57) next`), so a session where the user typed `next` 57 times
 * spends one line on it; the same text sent again after another user message is a line of its own.
 * The compact form (a budget too small for sections) folds them by the same rule, `User: (×57) next`
 * (newcomer ncverify53 F3: it wrote all 57).
 */
import fc from 'fast-check';
import { extractiveSummary, getEstimator } from '../src';
import { foldRepeatedUserMessages } from '../src/repeated-user-messages';
import { summaryRequest } from './summary-request';

const cl100k = getEstimator('cl100k_base');

/** The lines of the summary's "User messages" section. */
function userSection(summary: string): string[] {
  const lines = summary.split('\n');
  const start = lines.indexOf('User messages (oldest first):');
  expect(start).toBeGreaterThanOrEqual(0);
  const section: string[] = [];
  for (const line of lines.slice(start + 1)) {
    if (!line.startsWith('- ')) break;
    section.push(line);
  }
  return section;
}

describe('extractive summary: user messages repeated in a row', () => {
  // Given the user's goal, then "next" 57 times with the assistant's answer between each, then "thanks", then "next" again
  const events = ['User: find me a flight to Oslo on 2026-12-24'];
  for (let i = 0; i < 57; i++) events.push('User: next', `Assistant: option ${i + 1}: flight SK${4000 + i}`);
  events.push('User: thanks', 'Assistant: you are welcome', 'User:   next  ', 'Assistant: option 58');

  it('gives them one line with their count, in the place of the first, and keeps a later repeat apart', () => {
    // When the archived events are summarized without a budget
    const summary = extractiveSummary(summaryRequest(events));
    // Then the section lists each run once, oldest first
    expect(userSection(summary)).toEqual(['- find me a flight to Oslo on 2026-12-24', '- (×57) next', '- thanks', '- next']);
  });

  it('under a budget, fits it and keeps every identifier', () => {
    const budgeted = extractiveSummary(summaryRequest(events, 400), { estimator: cl100k });
    expect(cl100k.count(budgeted)).toBeLessThanOrEqual(400);
    for (let i = 0; i < 57; i++) expect(budgeted).toContain(`SK${4000 + i}`);
    expect(budgeted).toContain('2026-12-24');
    expect(budgeted.split('\n').filter((l) => l === '- next')).toHaveLength(1);
  });
});

describe('extractive summary: user messages repeated in a row, in the compact form', () => {
  it('a budget too small for sections (15 tokens) writes the 57 "next" once, counted, where the first was', () => {
    const events = ['User: find me a flight to Oslo'];
    for (let i = 0; i < 57; i++) events.push('User: next', 'Assistant: no');
    const compact = extractiveSummary(summaryRequest(events, 15), { estimator: cl100k });
    expect(compact).not.toContain('User messages (oldest first):');
    const [goal, next] = compact.split('\n');
    expect(goal).toBe('User: find me a flight to Oslo');
    expect(next.startsWith('User: (×57) next ')).toBe(true);
    expect(compact).not.toMatch(/User: next/);
  });

  it('both forms follow the one rule (foldRepeatedUserMessages): the sections list its user lines, the compact form its lines (random conversations)', () => {
    const line = fc.oneof(
      fc.constantFrom('next', 'ok', 'yes  please').map((t) => `User: ${t}`),
      fc.constantFrom('no', 'done').map((t) => `Assistant: ${t}`),
    );
    fc.assert(
      fc.property(fc.array(line, { minLength: 1, maxLength: 8 }), (events) => {
        const folded = foldRepeatedUserMessages(events);
        const sectioned = extractiveSummary(summaryRequest(events));
        const users = folded.filter((e) => e.user !== undefined).map((e) => `- ${e.line.slice('User: '.length)}`);
        if (users.length > 0) expect(userSection(sectioned)).toEqual(users);
        // 8 short lines fit the compact form's least content (32 tokens): it writes them whole
        const compact = extractiveSummary(summaryRequest(events, 12), { estimator: cl100k });
        expect(compact.split('\n')).toEqual(folded.map((e) => e.line));
      }),
      { numRuns: 200 },
    );
  });
});
