/**
 * The rule of a text that shows nothing (`showsNothing`): what the service refuses as a user, system
 * or summary text, a summary's shadow prompt, a strategy's prompt and a summarizer's reply.
 */
import fc from 'fast-check';
import { showsNothing } from '../src';

/** Characters that render as nothing: white space, zero-width and format characters, fillers, a blank Braille cell, combining marks. */
const INVISIBLE = [
  ' ',
  '\t',
  '\n',
  '\r',
  '\u00a0',
  '\u2028',
  '\u3000',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\ufeff',
  '\u00ad',
  '\u3164',
  '\u115f',
  '\u2800',
  '\u0301',
  '\u20dd',
  '\u0000',
  '\ufe0f',
  '\ufffc',
];

describe('showsNothing', () => {
  it.each([
    ['', true],
    ['   ', true],
    ['\u200b', true],
    ['\u0301', true],
    ['\u2800\n', true],
    ['\ufffc', true],
    ['\ue000', false],
    ['.', false],
    ['a\u0301', false],
    ['😀', false],
    ['\u200bx', false],
  ])('%j → %s', (text, expected) => expect(showsNothing(text)).toBe(expected));

  it('is true for any run of invisible characters, false once a letter, digit, punctuation mark or emoji is among them (property)', () => {
    const invisible = fc.array(fc.constantFrom(...INVISIBLE), { maxLength: 20 }).map((cs) => cs.join(''));
    const visible = fc.constantFrom('a', 'Z', '7', '.', '漢', 'й', '😀', '#', '\u0627');
    fc.assert(fc.property(invisible, (text) => expect(showsNothing(text)).toBe(true)));
    fc.assert(fc.property(invisible, visible, invisible, (before, shown, after) => expect(showsNothing(`${before}${shown}${after}`)).toBe(false)));
  });
});
