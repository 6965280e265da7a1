/**
 * The extractive summary's "User messages" section gives user messages sent in a row with the same
 * text one line, counted (`- (×57) next`), so a session where the user typed `next` 57 times
 * spends one line on it; the same text sent again after another user message is a line of its own.
 */
import { extractiveSummary, getEstimator } from '../src';
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
