import { MAX_ECHOED_LENGTH, quoteInput } from '../src/quoted-input';

describe('quoteInput', () => {
  it('quotes a short value whole, as JSON', () => {
    expect(quoteInput('call_1')).toBe('"call_1"');
    expect(quoteInput('say "hi"\n')).toBe('"say \\"hi\\"\\n"');
    expect(quoteInput('x'.repeat(MAX_ECHOED_LENGTH))).toBe(`"${'x'.repeat(MAX_ECHOED_LENGTH)}"`);
  });

  it(`keeps the first ${MAX_ECHOED_LENGTH} characters of a longer value and says how long it is`, () => {
    expect(quoteInput('c'.repeat(10_000))).toBe(`"${'c'.repeat(MAX_ECHOED_LENGTH)}…" (10000 characters)`);
    expect(quoteInput('c'.repeat(MAX_ECHOED_LENGTH + 1))).toBe(`"${'c'.repeat(MAX_ECHOED_LENGTH)}…" (${MAX_ECHOED_LENGTH + 1} characters)`);
  });

  it('counts characters as Unicode code points and never cuts an emoji in two', () => {
    expect(quoteInput('😀'.repeat(MAX_ECHOED_LENGTH))).toBe(`"${'😀'.repeat(MAX_ECHOED_LENGTH)}"`);
    expect(quoteInput(`a${'😀'.repeat(100)}`)).toBe(`"a${'😀'.repeat(MAX_ECHOED_LENGTH - 1)}…" (101 characters)`);
  });

  it('leaves out the quotes when asked (a name inside a path)', () => {
    expect(quoteInput('metadata', { quoted: false })).toBe('metadata');
    expect(quoteInput('k'.repeat(500), { quoted: false })).toBe(`${'k'.repeat(MAX_ECHOED_LENGTH)}… (500 characters)`);
  });

  it('quotes a name inside a path anyway when it is empty or holds an invisible character (newcomer: `?=` was named "(body)")', () => {
    expect(quoteInput('', { quoted: false })).toBe('""');
    expect(quoteInput('\u0000', { quoted: false })).toBe('"\\u0000"');
    expect(quoteInput('a\u2028b', { quoted: false })).toBe('"a\\u2028b"');
  });

  it('escapes line separators, DEL, C1 and format characters inside quotes, so a message never carries them bare', () => {
    expect(quoteInput('a\u2028b\u2029c')).toBe('"a\\u2028b\\u2029c"');
    expect(quoteInput('\u007f\u0085\u200b')).toBe('"\\u007f\\u0085\\u200b"');
    expect(quoteInput('\u{E0001}')).toBe('"\\udb40\\udc01"');
    expect(quoteInput('日本語 🙂')).toBe('"日本語 🙂"');
  });
});
