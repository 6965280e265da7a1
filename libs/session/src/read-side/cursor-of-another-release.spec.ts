import fc from 'fast-check';
import { CursorOfAnotherReleaseError } from './cursor-of-another-release-error';
import { InvalidQueryError } from './invalid-query-error';
import { decodeKeysetCursor, encodeKeysetCursor } from './keyset-cursor';
import { decodeRecallCursor, encodeRecallCursor } from './recall-cursor';

/** Base64url JSON, as every release encodes its cursors. */
const cursorText = (fields: Record<string, unknown>) => Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
const thrownBy = (f: () => unknown): unknown => {
  try {
    f();
  } catch (error) {
    return error;
  }
  throw new Error('nothing thrown');
};

// A rolling upgrade (newcomer ncupgrade F2): page 2 of a paging reaches a replica of another release.
describe('cursors made by another release', () => {
  it('refuses a recall cursor of the 2026-11-30/12-01 builds (version 1) with cursor_expired, saying to search again', () => {
    // As 8f8d531 encoded it: rank, position, fingerprint, and `o` only in newest order.
    for (const v1 of [cursorText({ v: 1, r: -1.25, p: '42', f: 'abcdefghijklmnop' }), cursorText({ v: 1, r: 0, p: '7', f: 'abcdefghijklmnop', o: 'newest' })]) {
      const error = thrownBy(() => decodeRecallCursor(v1, 'abcdefghijklmnop', 1));
      expect(error).toBeInstanceOf(CursorOfAnotherReleaseError);
      expect(error).toMatchObject({ code: 'cursor_expired', parameter: 'cursor' });
      expect((error as Error).message).toBe(
        'cursor: was made by an earlier release of the service (cursor version 1; this release reads version 2); search again without cursor (the first page) and follow the new nextCursor',
      );
    }
  });

  it('refuses a recall or list cursor of any other version (a later release, after a rollback) with cursor_expired', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 40 }), fc.string({ maxLength: 20 }), (v, f) => {
        if (v !== 2) {
          const error = thrownBy(() => decodeRecallCursor(cursorText({ v, f, o: 'relevance', a: '9' }), f, 1));
          expect(error).toMatchObject({ code: 'cursor_expired', parameter: 'cursor' });
          expect((error as Error).message).toContain(`${v < 2 ? 'an earlier' : 'a later'} release of the service (cursor version ${v};`);
        }
        if (v !== 1) {
          const error = thrownBy(() => decodeKeysetCursor('sessions', cursorText({ v, l: 'sessions', k: '5' })));
          expect(error).toMatchObject({ code: 'cursor_expired', parameter: 'cursor' });
          expect((error as Error).message).toMatch(/^cursor: was made by a later release .* list again without cursor/);
        }
      }),
    );
  });

  it("answers invalid_query naming the route a list's cursor given to recall, or a recall cursor given to a list, belongs to", () => {
    const recall = encodeRecallCursor({ fingerprint: 'abcdefghijklmnop', order: 'newest', asOf: 9n, position: 3n });
    const cases: [unknown, string][] = [
      [thrownBy(() => decodeRecallCursor(encodeKeysetCursor('sessions', 5n), 'abcdefghijklmnop', 1)), 'GET /v1/sessions'],
      [thrownBy(() => decodeRecallCursor(encodeKeysetCursor('compactions', 5n), 'abcdefghijklmnop', 1)), 'GET /v1/sessions/{sessionId}/compactions'],
      [thrownBy(() => decodeKeysetCursor('sessions', recall)), 'GET /v1/recall'],
      [thrownBy(() => decodeKeysetCursor('compactions', recall)), 'GET /v1/recall'],
      // Another release's cursor of another route is still of that route.
      [thrownBy(() => decodeKeysetCursor('sessions', cursorText({ v: 1, r: -1.25, p: '42', f: 'abcdefghijklmnop' }))), 'GET /v1/recall'],
      [thrownBy(() => decodeKeysetCursor('sessions', encodeKeysetCursor('compactions', 5n))), 'GET /v1/sessions/{sessionId}/compactions'],
      [thrownBy(() => decodeKeysetCursor('compactions', encodeKeysetCursor('sessions', 5n))), 'GET /v1/sessions'],
    ];
    for (const [error, route] of cases) {
      expect(error).toBeInstanceOf(InvalidQueryError);
      expect(error).toMatchObject({ code: 'invalid_query', parameter: 'cursor' });
      expect((error as Error).message).toBe(`cursor: this cursor belongs to ${route}; pass the nextCursor this route gave`);
    }
  });

  it("still answers invalid_query 'is not a cursor' for a cursor with no version", () => {
    for (const error of [
      thrownBy(() => decodeRecallCursor(cursorText({ v: 'x', f: 'abcdefghijklmnop' }), 'abcdefghijklmnop', 1)),
      thrownBy(() => decodeRecallCursor(cursorText({ v: 0, l: 'sessions', k: '5' }), 'abcdefghijklmnop', 1)),
      thrownBy(() => decodeKeysetCursor('sessions', cursorText({ v: 0, l: 'sessions', k: '5' }))),
      thrownBy(() => decodeKeysetCursor('sessions', cursorText({ v: 'x', f: 'abcdefghijklmnop' }))),
    ]) {
      expect(error).toBeInstanceOf(InvalidQueryError);
      expect((error as Error).message).toMatch(/^cursor: is not a cursor; pass the nextCursor/);
    }
  });
});
