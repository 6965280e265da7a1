import fc from 'fast-check';
import { commandSubject } from './nats-names';
import { FinishedSequences, sessionCommandFilter } from './nats-session-order';

const sessionId = fc
  .string({ unit: fc.constantFrom(...'ab01_-.'.split('')), minLength: 1, maxLength: 12 })
  .filter((s) => !s.startsWith('.') && !s.endsWith('.') && !s.includes('..'));
const kind = fc.constantFrom('compact', 'append', 'messages', 'policy', 'explode');

/** NATS subject matching: `*` is exactly one token. */
function matches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  return f.length === s.length && f.every((t, i) => t === '*' || t === s[i]);
}

describe('sessionCommandFilter', () => {
  it("matches the commands of the subject's session, whatever their kind, and no other session's (ids with dots included)", () => {
    fc.assert(
      fc.property(sessionId, sessionId, kind, kind, (a, b, k1, k2) => {
        const filter = sessionCommandFilter(commandSubject('p', 't', a, k1));
        expect(matches(filter, commandSubject('p', 't', a, k2))).toBe(true);
        expect(matches(filter, commandSubject('p', 't', b, k2))).toBe(a === b);
        expect(matches(filter, commandSubject('p', 'u', a, k2))).toBe(false);
      }),
    );
  });
});

describe('FinishedSequences', () => {
  it('remembers the last `capacity` sequences recorded, forgetting the oldest first', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(), { maxLength: 50 }), fc.integer({ min: 1, max: 20 }), (seqs, capacity) => {
        const finished = new FinishedSequences(capacity);
        for (const seq of seqs) finished.add(seq);
        seqs.forEach((seq, i) => expect(finished.has(seq)).toBe(i >= seqs.length - capacity));
      }),
    );
  });
});
