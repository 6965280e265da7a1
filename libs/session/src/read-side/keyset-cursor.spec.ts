import fc from 'fast-check';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import { InvalidQueryError } from './invalid-query-error';

describe('keyset cursors', () => {
  it('round-trip every key of their list and are refused by the other list', () => {
    // A session list's key is a global position: from 1 (a key of 0 is refused, see forged-cursors.property.spec).
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 9223372036854775807n }), (key) => {
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

  describe('of a compaction history, tied to its session', () => {
    const sessionIds = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 256 });

    it('continue the session that made them, and are refused by another naming it (a long id: as another session), never over 256 characters', () => {
      fc.assert(
        fc.property(sessionIds, sessionIds, fc.bigInt({ min: 0n, max: 9223372036854775807n }), (a, b, key) => {
          fc.pre(a !== b);
          const cursor = encodeKeysetCursor('compactions', key, a);
          // Earlier builds (cursor cap 256) still continue every cursor this build makes.
          expect(cursor.length).toBeLessThanOrEqual(256);
          expect(decodeKeysetCursor('compactions', cursor, a)).toBe(key);
          let refusal: unknown;
          try {
            decodeKeysetCursor('compactions', cursor, b);
          } catch (err) {
            refusal = err;
          }
          expect(refusal).toBeInstanceOf(InvalidQueryError);
          expect((refusal as InvalidQueryError).parameter).toBe('cursor');
          expect((refusal as InvalidQueryError).message).toMatch(
            /^cursor: this cursor belongs to the compactions of (session ".*|another session), not of this session; /,
          );
        }),
      );
    });

    it('name the session of a short id; a cursor made before they named it still continues any session', () => {
      expect(() => decodeKeysetCursor('compactions', encodeKeysetCursor('compactions', 7n, 'A'), 'B')).toThrow(
        'cursor: this cursor belongs to the compactions of session "A", not of this session; pass the nextCursor this session\'s list gave, or omit cursor for its first page',
      );
      const earlier = Buffer.from(JSON.stringify({ v: 1, l: 'compactions', k: '7' }), 'utf8').toString('base64url');
      expect(decodeKeysetCursor('compactions', earlier, 'A')).toBe(7n);
      expect(decodeKeysetCursor('compactions', earlier, 'B')).toBe(7n);
    });
  });
});
