/**
 * A summary under its budget never leaves identifiers out without saying so, and a bigger budget
 * never keeps fewer (newcomer report ncsummaryfacts F1): the unbudgeted rendering, bounded in
 * characters (`maxChars`), listed at most 80 artefacts and cut its sections in the middle, and it
 * was taken as it was whenever it fit the budget: 14 of 59 reservation ids kept, the newest ones
 * gone without a marker, where 5 tokens less of budget (the packed path) kept all 59.
 */
import { extractiveSummary, getEstimator } from '../src';
import { summaryRequest } from './summary-request';

const cl100k = getEstimator('cl100k_base');
const ids = Array.from({ length: 60 }, (_, i) => `TK${String(i).padStart(2, '0')}Q${i % 10}`);
const events: string[] = [];
for (const id of ids) {
  events.push('User: next');
  events.push(`Assistant: [tool calls: get_reservation_details({"reservation_id":"${id}"})]`);
  events.push(`Tool [responses: get_reservation_details -> {"reservation_id": "${id}", "status": "confirmed"}]`);
}

/** How many of `ids` the summary lists, plus the items its "(+N more)" notes say it left out. */
function accounted(text: string): { listed: number; counted: number } {
  const listed = ids.filter((id) => text.includes(id)).length;
  const counted = [...text.matchAll(/\(\+(\d+) more\)/g)].reduce((sum, m) => sum + Number(m[1]), 0);
  return { listed, counted };
}

describe('extractive summary: no identifier left out silently', () => {
  it.each([585, 600, 1_000, 3_422, 20_000])(
    'budget %i: every id is listed or counted in a "(+N more)", and never fewer listed than at a smaller budget',
    (budget) => {
      const text = extractiveSummary(summaryRequest(events, budget), { estimator: cl100k });
      const { listed, counted } = accounted(text);
      expect(listed + counted).toBeGreaterThanOrEqual(ids.length);
      const smaller = accounted(extractiveSummary(summaryRequest(events, 580), { estimator: cl100k }));
      expect(listed).toBeGreaterThanOrEqual(smaller.listed);
    },
  );
});
