import fc from 'fast-check';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import { InvalidQueryError } from './invalid-query-error';

describe('keyset cursors', () => {
  it('round-trip every key of their list and are refused by the other list', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 9223372036854775807n }), (key) => {
        expect(decodeKeysetCursor('sessions', encodeKeysetCursor('sessions', key))).toBe(key);
        expect(() => decodeKeysetCursor('compactions', encodeKeysetCursor('sessions', key))).toThrow(
          'cursor: this cursor belongs to GET /v1/sessions; pass the nextCursor this route gave',
        );
      }),
    );
  });

  it('refuses text that is not a cursor with an InvalidQueryError naming cursor', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (text) => {
        try {
          decodeKeysetCursor('compactions', text);
        } catch (err) {
          expect(err).toBeInstanceOf(InvalidQueryError);
          expect((err as InvalidQueryError).parameter).toBe('cursor');
          return;
        }
        // The only strings accepted are real cursors.
        expect(encodeKeysetCursor('compactions', decodeKeysetCursor('compactions', text))).toBe(text);
      }),
    );
  });
});
