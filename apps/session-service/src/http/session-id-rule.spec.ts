import fc from 'fast-check';
import { SESSION_ID_PATTERN, SESSION_ID_RULE, sessionIdProblem } from './session-id-rule';

describe('sessionIdProblem', () => {
  it('refuses exactly what the pattern refuses, always with the rule first', () => {
    const idChars = fc.constantFrom(...'abcXYZ019_-:@.*/ é😀\u0000\u202e'.split(''), '😀');
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 140 }),
          fc.array(idChars, { maxLength: 140 }).map((c) => c.join('')),
        ),
        (id) => {
          const problem = sessionIdProblem(id);
          expect(problem === undefined).toBe(SESSION_ID_PATTERN.test(id));
          if (problem !== undefined) expect(problem.startsWith(`${SESSION_ID_RULE}: `)).toBe(true);
        },
      ),
      { numRuns: 2_000 },
    );
  });

  it('names the first character it refuses and its position in characters', () => {
    expect(sessionIdProblem('*')).toBe(`${SESSION_ID_RULE}: "*" (U+002A) is character 1`);
    expect(sessionIdProblem('a.*.b/c')).toBe(`${SESSION_ID_RULE}: "*" (U+002A) is character 3`);
    // Positions count characters (an emoji is one), not UTF-16 code units.
    expect(sessionIdProblem('😀é')).toBe(`${SESSION_ID_RULE}: "😀" (U+1F600) is character 1`);
    expect(sessionIdProblem('ab😀é')).toBe(`${SESSION_ID_RULE}: "😀" (U+1F600) is character 3`);
    expect(sessionIdProblem('a😀é')).toMatch(/"😀" \(U\+1F600\) is character 2$/);
  });

  it('shows an invisible character by its code point only', () => {
    expect(sessionIdProblem('ab\u202ecd')).toBe(`${SESSION_ID_RULE}: U+202E is character 3`);
    expect(sessionIdProblem('a b')).toBe(`${SESSION_ID_RULE}: " " (U+0020) is character 2`);
    expect(sessionIdProblem('a\u0007')).toBe(`${SESSION_ID_RULE}: U+0007 is character 2`);
    expect(sessionIdProblem('\ud800x')).toBe(`${SESSION_ID_RULE}: U+D800 is character 1`);
    // a lone combining mark would join the quote before it (ncrecheck69 N6)
    expect(sessionIdProblem('a\u0301')).toBe(`${SESSION_ID_RULE}: U+0301 is character 2`);
  });

  it('says when the length or a dot segment is the fault', () => {
    expect(sessionIdProblem('')).toBe(`${SESSION_ID_RULE}: it is empty`);
    expect(sessionIdProblem('s'.repeat(129))).toBe(`${SESSION_ID_RULE}: it has 129 characters`);
    expect(sessionIdProblem('s'.repeat(128))).toBeUndefined();
    expect(sessionIdProblem('.')).toBe(`${SESSION_ID_RULE}: "." alone names no session`);
    expect(sessionIdProblem('..')).toBe(`${SESSION_ID_RULE}: ".." alone names no session`);
    expect(sessionIdProblem('...')).toBeUndefined();
  });
});
