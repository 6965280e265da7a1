/** newcomer ncapi71 F8: an id must show something, and holds no noncharacter. */
import fc from 'fast-check';
import { showsNothing } from '@lib/compaction';
import { clientIdProblem } from './client-id-rule';

describe('client ids: one that shows nothing, or holds a noncharacter, is refused', () => {
  it.each([' ', '   ', '\u00A0', '\u3164', '\u3164\u3164', '\u2800', ' \u0301'])('refuses %j, saying it shows nothing', (id) => {
    expect(clientIdProblem(id)).toMatch(/: it shows nothing \(only characters that render as nothing .*\); send an id that shows$/);
  });

  it.each([
    ['\uFFFF', 'U+FFFF', 1],
    ['ab\uFFFE', 'U+FFFE', 3],
    ['x\uFDD0', 'U+FDD0', 2],
    ['😀\u{10FFFF}', 'U+10FFFF', 2],
  ])('refuses %j, naming %s and its place', (id, name, at) => {
    expect(clientIdProblem(id)).toMatch(new RegExp(`: ${name.replace('+', '\\+')} at character ${at} is a noncharacter`));
  });

  it.each(['a', 'a b', ' a ', '\u00A0x', '中', '😀', '👨‍👩‍👧', 'é', 'u-1'])('accepts %j (something shows)', (id) => {
    expect(clientIdProblem(id)).toBeUndefined();
  });

  it('property: a refused id shows nothing or holds a character the rule names; one that shows something and holds none of those is accepted', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 12 }), (id) => {
        const problem = clientIdProblem(id);
        if (showsNothing(id)) expect(problem).toBeDefined();
        else if (problem === undefined) expect(/\p{Noncharacter_Code_Point}/u.test(id)).toBe(false);
      }),
    );
  });
});
