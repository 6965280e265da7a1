/**
 * Summarizing summaries: truncation never mangles an omission marker, and folding an extractive
 * summary into the next one again and again keeps one header, one "Previous summary" title, and
 * stays within maxChars.
 */
import fc from 'fast-check';
import { extractiveSummary, truncateMiddle, type SummaryRequest } from '../src';

const MARKER = /\[… (\d+) (?:characters|more) omitted …\]/g;

/** Text with every well-formed marker removed still holds a piece of one: a mangled marker. */
function hasMangledMarker(s: string): boolean {
  const rest = s.replace(MARKER, '');
  return /\[…|…\]|characters omitted|more omitted/.test(rest);
}

const count = (s: string, what: string) => s.split(what).length - 1;

describe('truncateMiddle on text that already has markers', () => {
  it('does not cut through an existing marker and folds it into the new one', () => {
    const once = truncateMiddle('A'.repeat(3000) + 'Z'.repeat(3000), 200);
    expect(count(once, 'characters omitted')).toBe(1);
    for (let n = 199; n >= 40; n -= 7) {
      const again = truncateMiddle(once, n);
      expect(again.length).toBeLessThanOrEqual(n);
      expect(hasMangledMarker(again)).toBe(false);
      expect(count(again, 'characters omitted')).toBe(1);
    }
  });

  it('counts the characters the folded markers stood for', () => {
    const once = truncateMiddle('A'.repeat(3000) + 'Z'.repeat(3000), 200);
    const n1 = Number(/\[… (\d+) characters omitted …\]/.exec(once)![1]);
    const twice = truncateMiddle(once, 120);
    const n2 = Number(/\[… (\d+) characters omitted …\]/.exec(twice)![1]);
    expect(n2).toBeGreaterThan(n1);
    // what is kept plus what the marker says is the original length, give or take the spaces around markers
    const kept = twice.replace(MARKER, '').replace(/\s/g, '').length;
    expect(Math.abs(kept + n2 - 6000)).toBeLessThanOrEqual(4);
  });

  it('folds markers beside each other, and a prefix never ends inside a marker', () => {
    const text = `start [… 10 characters omitted …] [… 20 characters omitted …] ${'x'.repeat(200)} [… 5 characters omitted …] end`;
    const t = truncateMiddle(text, 100);
    expect(hasMangledMarker(t)).toBe(false);
    expect(t.length).toBeLessThanOrEqual(100);
    const tiny = truncateMiddle(`ab [… 123 characters omitted …] ${'y'.repeat(100)}`, 12);
    expect(tiny.length).toBeLessThanOrEqual(12);
    expect(hasMangledMarker(tiny)).toBe(false);
  });

  it('never mangles markers, whatever is truncated again and how far (random)', () => {
    const piece = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.nat(99999).map((n) => ` [… ${n} characters omitted …] `),
      fc.nat(99).map((n) => `\n- [… ${n} more omitted …]\n`),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.array(fc.nat(400), { minLength: 1, maxLength: 5 }), (pieces, limits) => {
        let t = pieces.join('');
        fc.pre(!hasMangledMarker(t));
        for (const n of limits) {
          t = truncateMiddle(t, n);
          expect(t.length).toBeLessThanOrEqual(n);
          expect(hasMangledMarker(t)).toBe(false);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('extractiveSummary of a previous extractive summary', () => {
  const base: SummaryRequest = { systemPrompt: 'unused', shadowPrompt: 'S?', currentSummaries: [], toSummarize: [], overlap: [], coveredIds: [] };
  const turn = (k: number, size = 300) => [
    `User: turn ${k}: please rebook reservation RES${1000 + k} for user_id_${k} ${'and more words '.repeat(size / 15)}`,
    `Assistant [tool calls: get_reservation_details({"reservation_id":"RES${1000 + k}"})]`,
    `Tool [responses: get_reservation_details -> {"price":${100 + k}.5,"date":"2024-05-${String((k % 28) + 1).padStart(2, '0')}"}]`,
    `Assistant: done for turn ${k} ${'detail '.repeat(size / 7)}`,
  ];

  it('does not nest the previous header: one header, one "Previous summary" title, earlier sections once each', () => {
    let summary = '';
    for (let k = 0; k < 12; k++) {
      summary = extractiveSummary({ ...base, toSummarize: turn(k), currentSummaries: summary ? [summary] : [] }, { maxChars: 1500 });
      expect(summary.length).toBeLessThanOrEqual(1500);
      expect(count(summary, 'Previous summary')).toBeLessThanOrEqual(1);
      expect(count(summary, '[Extractive summary')).toBe(1);
      expect(count(summary, 'Earlier user messages:')).toBeLessThanOrEqual(1);
      expect(hasMangledMarker(summary)).toBe(false);
    }
    // the oldest facts stay in front, the newest at the end of the merged part
    expect(summary).toContain('turn 0');
    expect(summary).toContain('turn 11');
    expect(summary.startsWith('[Extractive summary')).toBe(true);
  });

  it('cleans up a summary nested by an earlier version (titles inline, markers cut through)', () => {
    const legacy = [
      '[Extractive summary (extractive-v1, no model) of 4 earlier events]',
      '',
      'Previous summary (merged):',
      '[Extractive summary (extractive-v1, no model) of 6 earlier events]',
      '',
      'Previous summary (merged):',
      'Earlier: the user is Ana, order 7731.',
      '',
      'User messages (oldest first):',
      '- hello',
    ].join('\n');
    const s = extractiveSummary({ ...base, toSummarize: turn(1, 30), currentSummaries: [legacy] }, { maxChars: 2000 });
    expect(count(s, 'Previous summary')).toBe(1);
    expect(count(s, '[Extractive summary')).toBe(1);
    expect(s).toContain('order 7731');
    expect(s).toContain('Earlier user messages:\n- hello');
  });

  it('given a previous summary whose "Previous summary (merged):" title a cut went through, when folded again, then the title\'s leftover is dropped: one "Previous summary"', () => {
    // found by the property below (seed 1736538778, 4,800 runs): the second summary's bound cut
    // through its title, leaving `Previous summary [… 80 characters omitted …] (oldest first):`,
    // which the third merged as text under a title of its own
    const batches = [['User: '], ['User: ', 'User: ', 'User: !'], ['User: '], ['User: ']];
    let summary: string | undefined;
    for (const toSummarize of batches) {
      summary = extractiveSummary({ ...base, toSummarize, currentSummaries: summary === undefined ? [] : [summary] }, { maxChars: 211 });
      expect(count(summary, 'Previous summary')).toBeLessThanOrEqual(1);
      expect(hasMangledMarker(summary)).toBe(false);
    }
    const cut = '[Extractive summary (extractive-v1, no model) of 3 earlier events]\n\nPrevious summary [… 80 characters omitted …] (oldest first):\n- a';
    const folded = extractiveSummary({ ...base, toSummarize: ['User: b'], currentSummaries: [cut] }, { maxChars: 4000 });
    expect(count(folded, 'Previous summary')).toBe(1);
    expect(folded).toContain('Previous summary (merged):\n[… 80 characters omitted …] (oldest first):');
  });

  it('folding N times stays within maxChars, non-blank, deterministic, one "Previous summary", no mangled marker (random)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.array(
            fc.string({ maxLength: 400 }).map((t) => `User: ${t}`),
            { minLength: 1, maxLength: 6 },
          ),
          { minLength: 2, maxLength: 10 },
        ),
        fc.integer({ min: 0, max: 4000 }),
        (batches, maxChars) => {
          const bound = Math.max(200, maxChars);
          let summary: string | undefined;
          for (const toSummarize of batches) {
            const request = { ...base, toSummarize, currentSummaries: summary === undefined ? [] : [summary] };
            const next = extractiveSummary(request, { maxChars });
            expect(extractiveSummary(request, { maxChars })).toBe(next);
            expect(next.trim()).not.toBe('');
            expect(next.length).toBeLessThanOrEqual(bound);
            expect(count(next, 'Previous summary')).toBeLessThanOrEqual(1);
            expect(hasMangledMarker(next)).toBe(false);
            summary = next;
          }
        },
      ),
      { numRuns: 120 },
    );
  });
});
