/** newcomer ncgocurl A1: an emoji ZWJ sequence is an id; a zero-width joiner anywhere else is not. */
import fc from 'fast-check';
import { clientIdProblem } from './client-id-rule';

const ZWJ = '\u200D';
const PICTOGRAPHS = ['👨', '👩', '👧', '💻', '❤️', '🏳️', '🌈', '🧑🏽', '👩🏿', '🐻', '❄️', '😀'];
const NOT_PICTOGRAPHIC = ['a', 'Z', '1', '-', 'é', '中', ' ', '\u0301', ZWJ];
const EXTENDED_PICTOGRAPHIC = /^\p{Extended_Pictographic}$/u;

describe('client ids: U+200D only inside an emoji ZWJ sequence (UTS #51)', () => {
  it.each(['👨‍👩‍👧', '👩🏽‍💻', '👩‍❤️‍👨', '🏳️‍🌈', '🐻‍❄️'])('accepts %s', (id) => expect(clientIdProblem(id)).toBeUndefined());

  it.each([
    ['a\u200Db', 2],
    ['\u200D😀', 1],
    ['😀\u200D', 2],
    ['😀\u200D\u200D😀', 2],
    ['😀\u200Da', 2],
    ['a\u200D😀', 2],
  ])('refuses %j, naming U+200D and where it is', (id, at) => {
    expect(clientIdProblem(id)).toMatch(new RegExp(`invisible format characters .*: U\\+200D at character ${at}$`));
  });

  it('property: emoji joined by ZWJ, with any text around, are accepted', () => {
    const sequence = fc.array(fc.constantFrom(...PICTOGRAPHS), { minLength: 2, maxLength: 5 }).map((parts) => parts.join(ZWJ));
    fc.assert(
      fc.property(
        fc.string({ maxLength: 8 }).filter((s) => clientIdProblem(s || 'x') === undefined),
        sequence,
        (text, emoji) => {
          expect(clientIdProblem(`${text}${emoji}${text}`)).toBeUndefined();
        },
      ),
    );
  });

  it('property: a ZWJ with a non-pictographic character on either side is refused (the look-alike defence stays)', () => {
    const side = fc.constantFrom(...PICTOGRAPHS, ...NOT_PICTOGRAPHIC, '');
    fc.assert(
      fc.property(side, side, (before, after) => {
        const pictographicBefore = before !== '' && EXTENDED_PICTOGRAPHIC.test([...before.replace(/[\uFE0F\p{Emoji_Modifier}]$/u, '')].at(-1)!);
        const pictographicAfter = after !== '' && EXTENDED_PICTOGRAPHIC.test([...after][0]);
        fc.pre(!(pictographicBefore && pictographicAfter));
        expect(clientIdProblem(`x${before}${ZWJ}${after}x`)).toMatch(/: U\+200D at character \d+$/);
      }),
    );
  });

  it('other zero-width and bidi characters stay refused inside emoji too', () => {
    for (const c of ['\u200B', '\u200C', '\u202E', '\u2066', '\uFEFF']) expect(clientIdProblem(`👨${c}👩`)).toMatch(/at character 2$/);
  });
});
