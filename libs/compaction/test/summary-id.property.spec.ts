/**
 * The one rule of a compaction's summary id (`summaryIdFor`, newcomer ncapi66 F2): a client may
 * append an event whose id is `summary-<compactionId>` (ids are any 1–256 characters, compaction
 * ids are deterministic), and the pass then failed on every retry (`completePlan` refused the id as
 * the id of an event). The summary takes `summary-<compactionId>` unless taken, else the first free
 * `summary-<compactionId>-<n>` (n ≥ 2): never a taken id, and the same for the same taken ids.
 */
import fc from 'fast-check';
import { summaryIdFor } from '../src';

const COMPACTION = '3f1c2a9e-5b7d-5c4e-9a1f-0e2d3c4b5a69';
const BASE = `summary-${COMPACTION}`;

/** The `k`-th candidate (0: `summary-<id>`, 1: `…-2`, 2: `…-3`, …). */
const candidate = (k: number) => (k === 0 ? BASE : `${BASE}-${k + 1}`);

describe('summaryIdFor: the id of the summary a compaction writes', () => {
  it('is summary-<compactionId> when no event has that id', () => {
    expect(summaryIdFor(COMPACTION)).toBe(BASE);
    expect(summaryIdFor(COMPACTION, new Set(['u1', 'a1', `${BASE}-2`]))).toBe(BASE);
  });

  it('skips an id an event already has: summary-<compactionId>-2, then -3, …', () => {
    expect(summaryIdFor(COMPACTION, new Set([BASE]))).toBe(`${BASE}-2`);
    expect(summaryIdFor(COMPACTION, new Set([BASE, `${BASE}-2`]))).toBe(`${BASE}-3`);
    // a gap is taken: the first free one, not the one after the highest taken
    expect(summaryIdFor(COMPACTION, new Set([BASE, `${BASE}-3`]))).toBe(`${BASE}-2`);
  });

  it('given any taken ids, then the id is the first free candidate, never a taken one, and the same for the same taken ids in any order', () => {
    const other = fc.oneof(
      fc.string({ minLength: 1, maxLength: 20 }),
      fc.constantFrom(`${BASE}-1`, `${BASE}-02`, `${BASE}x`, `summary-${COMPACTION.toUpperCase()}`),
    );
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(12)), fc.array(other, { maxLength: 5 }), (takenCandidates, others) => {
        const takenIds = [...takenCandidates.map(candidate), ...others];
        const id = summaryIdFor(COMPACTION, new Set(takenIds));
        expect(takenIds).not.toContain(id);
        expect(id === BASE || /^-[1-9][0-9]*$/.test(id.slice(BASE.length))).toBe(true);
        expect(id).not.toBe(`${BASE}-1`);
        // the first free one: every candidate before it is taken
        const k = id === BASE ? 0 : Number(id.slice(BASE.length + 1)) - 1;
        for (let j = 0; j < k; j++) expect(takenIds).toContain(candidate(j));
        // deterministic: the same taken ids (another set, another order) give the same id
        expect(summaryIdFor(COMPACTION, new Set([...takenIds].reverse()))).toBe(id);
        expect(summaryIdFor(COMPACTION, { has: (x) => takenIds.includes(x) })).toBe(id);
      }),
    );
  });
});
