import fc from 'fast-check';
import { compactionIdAsStored } from './compaction-id-case';

describe('compactionIdAsStored', () => {
  it('given any letter-case spelling of a UUID, then it answers the UUID in lower case (UUIDs are case-insensitive on input, RFC 9562)', () => {
    const spellings = fc.uuid().chain((uuid) =>
      fc.array(fc.boolean(), { minLength: uuid.length, maxLength: uuid.length }).map((upper) => ({
        uuid,
        spelled: uuid
          .split('')
          .map((c, i) => (upper[i] ? c.toUpperCase() : c))
          .join(''),
      })),
    );
    fc.assert(fc.property(spellings, ({ uuid, spelled }) => expect(compactionIdAsStored(spelled)).toBe(uuid.toLowerCase())));
  });

  it('given any text, then it lower-cases its ASCII letters only, keeping its length and every other character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 40 }), (text) => {
        const stored = compactionIdAsStored(text);
        expect(stored.length).toBe(text.length);
        expect(compactionIdAsStored(stored)).toBe(stored);
        for (let i = 0; i < text.length; i++) {
          const c = text[i];
          expect(stored[i]).toBe(c >= 'A' && c <= 'Z' ? c.toLowerCase() : c);
        }
      }),
    );
    // Not Unicode's lower case: "İ" (U+0130) lower-cases to two code units, and names no compaction anyway.
    expect(compactionIdAsStored('İD-5DD7')).toBe('İd-5dd7');
  });
});
