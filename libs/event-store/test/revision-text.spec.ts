import fc from 'fast-check';
import { MAX_REVISION, parseCanonicalInteger } from '../src/revision-text';

describe('parseCanonicalInteger (revisions and positions sent as text)', () => {
  it('reads every revision from 0 to 2^63 - 1 written as the service writes it', () => {
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: MAX_REVISION }), (n) => parseCanonicalInteger(n.toString()) === n));
    expect(parseCanonicalInteger('0')).toBe(0n);
    expect(parseCanonicalInteger('9223372036854775807')).toBe(MAX_REVISION);
  });

  it('gives each number one spelling: whatever it accepts, it accepts only as String(value)', () => {
    const digitsAndNoise = fc.string({ unit: fc.constantFrom('0', '1', '9', '+', '-', ' ', '.', 'e', 'x', '\u0663', '\t'), maxLength: 22 });
    fc.assert(
      fc.property(digitsAndNoise, (s) => {
        const value = parseCanonicalInteger(s);
        return value === null || value.toString() === s;
      }),
    );
  });

  it.each([
    '03',
    '00',
    '+3',
    '-0',
    '-1',
    ' 3',
    '3 ',
    '3\n',
    '3.0',
    '3.',
    '3e0',
    '1e3',
    '0x3',
    '0b1',
    '',
    '٣',
    '3_000',
    '9223372036854775808',
    '99999999999999999999',
  ])('refuses %j', (text) => expect(parseCanonicalInteger(text)).toBeNull());

  it('refuses non-strings and applies a narrower range when given one', () => {
    for (const v of [3, 3n, null, undefined, ['3'], { toString: () => '3' }]) expect(parseCanonicalInteger(v)).toBeNull();
    expect(parseCanonicalInteger('1000', 1n, 1000n)).toBe(1000n);
    expect(parseCanonicalInteger('1001', 1n, 1000n)).toBeNull();
    expect(parseCanonicalInteger('0', 1n, 1000n)).toBeNull();
    expect(parseCanonicalInteger('01', 1n, 1000n)).toBeNull();
  });
});
