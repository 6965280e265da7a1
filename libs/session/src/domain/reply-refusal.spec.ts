import * as fc from 'fast-check';
import { replyRefusal } from './reply-refusal';

/** Characters that render as nothing: spaces, zero-width and joiners, fillers, format and control characters. */
const INVISIBLES = [
  ' ',
  '\t',
  '\n',
  '\u00a0',
  '\u3000',
  '\ufeff',
  '\u200b',
  '\u200c',
  '\u200d',
  '\u2060',
  '\u180e',
  '\u3164',
  '\uffa0',
  '\u115f',
  '\u1160',
  '\u2800',
  '\u00ad',
  '\ufe0f',
  '\u2028',
  '\u0000',
  '\u061c',
];

describe('replyRefusal (DESIGN §3.7: an unusable reply is a failure)', () => {
  it('refuses a reply holding a lone surrogate, naming where and never quoting the text', () => {
    expect(replyRefusal('Summary \ud800 end', 1000)).toBe('reply is not valid Unicode: a lone UTF-16 surrogate at code unit 8');
    expect(replyRefusal('cut in an emoji \ud83d', undefined)).toBe('reply is not valid Unicode: a lone UTF-16 surrogate at code unit 16');
    expect(replyRefusal('\udc00 low first', 1000)).toBe('reply is not valid Unicode: a lone UTF-16 surrogate at code unit 0');
  });

  it('takes well-formed text with emoji, flags and supplementary ideographs, and still bounds the length', () => {
    expect(replyRefusal('Summary 😀🇯🇵👩‍👩‍👧‍👦𠮷', 1000)).toBeUndefined();
    expect(replyRefusal('😀'.repeat(10), 10)).toBeUndefined();
    expect(replyRefusal('😀'.repeat(11), 10)).toMatch(/^reply longer than the longest text an event may hold \(11 characters, MAX_TEXT_LENGTH 10\)$/);
  });

  it('refuses a reply that renders as nothing (DESIGN §3.7 "a blank, whitespace or error reply is a failure"; newcomer ncdesign65 F1: U+200B was stored as the summary)', () => {
    for (const reply of ['\u200b', '\u200b\u200b \u2060', '\u180e', '\u3164', '\u2800', '', '\u0301', '\u200b\u0301', ' \u0301\u0308 ']) {
      expect(replyRefusal(reply, 1000)).toBe(
        'blank reply: only characters that render as nothing (white space, zero-width or filler characters, marks on no letter, U+FFFC)',
      );
    }
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...INVISIBLES), { maxLength: 20 }), (chars) => {
        expect(replyRefusal(chars.join(''), 1000)).toMatch(/^blank reply: /);
      }),
    );
  });

  it('takes a reply with one visible character among invisible ones (a letter, digit, mark on a base, symbol or emoji)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...INVISIBLES), { maxLength: 10 }),
        fc.constantFrom('a', 'Ж', '7', '字', 'é', 'e\u0301', '😀', '.', '→', '\u0915\u094d'),
        fc.array(fc.constantFrom(...INVISIBLES), { maxLength: 10 }),
        (before, visible, after) => {
          expect(replyRefusal(before.join('') + visible + after.join(''), 1000)).toBeUndefined();
        },
      ),
    );
  });
});
