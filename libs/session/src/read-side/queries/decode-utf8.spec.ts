import { decodeUtf8, TRANSCODE_MIN_BYTES } from './decode-utf8';

describe('decodeUtf8', () => {
  const texts: Record<string, string> = {
    ascii: 'plain ascii, "quotes" \\ backslash\n'.repeat(4000),
    ideographs: Array.from({ length: 40_000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919) % 20000))).join(''),
    'surrogate pairs and mixed widths': 'a é 中 😀 👩‍👩‍👧 𝒳 \ufeff \u2028 '.repeat(3000),
    // JSON.stringify escapes lone surrogates, so stored JSON holds them as ASCII escapes.
    'stored JSON with lone surrogates': JSON.stringify({ text: 'x \ud800 y \udc00 😀 '.repeat(6000) }),
  };

  it.each(Object.keys(texts))('gives the string toString gives, for %s above the transcoding size', (name) => {
    const bytes = Buffer.from(texts[name], 'utf8');
    expect(bytes.length).toBeGreaterThanOrEqual(TRANSCODE_MIN_BYTES);
    expect(decodeUtf8(bytes)).toBe(texts[name]);
    // A cut inside a character (invalid UTF-8) decodes as toString does, with U+FFFD.
    expect(decodeUtf8(bytes.subarray(0, TRANSCODE_MIN_BYTES + 1000))).toBe(bytes.subarray(0, TRANSCODE_MIN_BYTES + 1000).toString('utf8'));
  });

  it('decodes small texts too', () => {
    expect(decodeUtf8(Buffer.from('中😀"', 'utf8'))).toBe('中😀"');
    expect(decodeUtf8(Buffer.alloc(0))).toBe('');
  });
});
