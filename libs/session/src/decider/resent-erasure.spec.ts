import fc from 'fast-check';
import { clientRequestIdOf, decideResentErasure, type StoredErasure } from './resent-erasure';
import type { RequestedBy } from '../events/requested-by';

const byClient = (requestId: string, keyLabel?: string): RequestedBy => ({
  ...(keyLabel ? { keyLabel } : {}),
  requestId,
  requestIdFrom: 'client',
  via: 'http',
});
const byService = (requestId: string, keyLabel?: string): RequestedBy => ({
  ...(keyLabel ? { keyLabel } : {}),
  requestId,
  requestIdFrom: 'service',
  via: 'http',
});

/** The record of an erasure of `sessionId` at `position` closing the life ending at `lastRevision`. */
const record = (position: bigint, sessionId: string, lastRevision: bigint | undefined, requestedBy?: RequestedBy): StoredErasure => ({
  position,
  data: {
    sessionId,
    erasedEvents: 3,
    erasedAt: '2026-12-05T10:00:00.000Z',
    ...(lastRevision === undefined ? {} : { lastRevision: lastRevision.toString(), lastPosition: (position - 1n).toString() }),
    ...(requestedBy ? { requestedBy } : {}),
  },
});

describe('decideResentErasure: a DELETE sent again under its client request id', () => {
  it('given the erasure of life 0–2 under the client id req-1, when the DELETE comes again with req-1 in the life after it, then it answers that record (nothing to erase)', () => {
    const first = record(10n, 's', 2n, byClient('req-1', 'API_KEYS#1'));
    expect(decideResentErasure({ sessionId: 's', requestedBy: byClient('req-1', 'API_KEYS#1') }, [first], 3n)).toEqual({ kind: 'resent', record: first });
  });

  it('given later erasures of the session, when the resend of an earlier one comes, then it answers the earlier one (whatever life the session is in now)', () => {
    const first = record(10n, 's', 2n, byClient('req-1'));
    const later = [record(20n, 's', 5n, byClient('req-2')), record(30n, 's', 9n, byService('uuid-3'))];
    expect(decideResentErasure({ sessionId: 's', requestedBy: byClient('req-1') }, [...later, first], 10n)).toEqual({ kind: 'resent', record: first });
  });

  it('given two records carrying the id (written by builds before the rule), then the newest answers', () => {
    const older = record(10n, 's', 2n, byClient('req-1'));
    const newer = record(20n, 's', 5n, byClient('req-1'));
    expect(decideResentErasure({ sessionId: 's', requestedBy: byClient('req-1') }, [newer, older], 6n)).toEqual({ kind: 'resent', record: newer });
  });

  it.each<[string, StoredErasure, RequestedBy | undefined]>([
    ['the id reused for another session', record(10n, 'other', 2n, byClient('req-1')), byClient('req-1')],
    ['another client id', record(10n, 's', 2n, byClient('req-1')), byClient('req-2')],
    ['an id the service made (same text)', record(10n, 's', 2n, byService('req-1')), byClient('req-1')],
    ['a DELETE whose id the service made', record(10n, 's', 2n, byClient('req-1')), byService('req-1')],
    ['a DELETE without requestedBy', record(10n, 's', 2n, byClient('req-1')), undefined],
    ['the id sent under another API key', record(10n, 's', 2n, byClient('req-1', 'API_KEYS#1')), byClient('req-1', 'API_KEYS#2')],
    ['a key now, none then (open mode)', record(10n, 's', 2n, byClient('req-1')), byClient('req-1', 'API_KEYS#1')],
    ['a NATS command id', record(10n, 's', 2n, { requestId: 'req-1', via: 'nats' }), { requestId: 'req-1', via: 'nats' }],
    ['a record without requestedBy', record(10n, 's', 2n), byClient('req-1')],
  ])('given %s, then it is no resend: erased as before', (_case, earlier, requestedBy) => {
    // this session's life before the one the DELETE arrived in was erased under another id (so nothing to wait for)
    const records = earlier.data.sessionId === 's' ? [earlier] : [earlier, record(11n, 's', 2n, byClient('req-9'))];
    expect(decideResentErasure({ sessionId: 's', requestedBy }, records, 3n)).toEqual({ kind: 'erase' });
  });

  it('given no record of the life before the one it arrived in, then it waits for that record (an erasure of it may still be writing it)', () => {
    const command = { sessionId: 's', requestedBy: byClient('req-1') };
    expect(decideResentErasure(command, [], 3n)).toEqual({ kind: 'awaitRecordOfLife', lastRevision: 2n });
    expect(decideResentErasure(command, [record(10n, 's', 1n, byClient('req-0')), record(11n, 'other', 7n)], 3n)).toEqual({
      kind: 'awaitRecordOfLife',
      lastRevision: 2n,
    });
    // that life's record, a later one, or one naming no life (written before records did): nothing to wait for
    for (const closing of [record(10n, 's', 2n), record(10n, 's', 4n), record(10n, 's', undefined)])
      expect(decideResentErasure(command, [closing], 3n)).toEqual({ kind: 'erase' });
    // never deleted, or no client id: nothing to wait for
    expect(decideResentErasure(command, [], 0n)).toEqual({ kind: 'erase' });
    expect(decideResentErasure({ sessionId: 's', requestedBy: byService('x') }, [], 3n)).toEqual({ kind: 'erase' });
  });

  it('answers a resend exactly when a record of the session carries the same client id and key label', () => {
    const requester = fc.record({
      requestId: fc.constantFrom('a', 'b'),
      requestIdFrom: fc.constantFrom<'client' | 'service' | undefined>('client', 'service', undefined),
      keyLabel: fc.constantFrom<string | undefined>('API_KEYS#1', 'API_KEYS#2', undefined),
      via: fc.constantFrom<'http' | 'nats'>('http', 'nats'),
    });
    const stored = fc.record({
      sessionId: fc.constantFrom('s', 'o'),
      lastRevision: fc.bigInt({ min: 0n, max: 9n }),
      requestedBy: fc.option(requester, { nil: undefined }),
    });
    fc.assert(
      fc.property(requester, fc.array(stored, { maxLength: 5 }), fc.bigInt({ min: 0n, max: 12n }), (requestedBy, rows, arrivedIn) => {
        const records = rows.map((r, i) => record(BigInt(i + 1), r.sessionId, r.lastRevision, r.requestedBy));
        const decision = decideResentErasure({ sessionId: 's', requestedBy }, records, arrivedIn);
        const id = clientRequestIdOf(requestedBy);
        const matching = records.filter(
          (r) =>
            id !== undefined &&
            r.data.sessionId === 's' &&
            clientRequestIdOf(r.data.requestedBy) === id &&
            r.data.requestedBy?.keyLabel === requestedBy.keyLabel,
        );
        if (matching.length > 0) expect(decision).toEqual({ kind: 'resent', record: matching.at(-1) });
        else expect(decision.kind).not.toBe('resent');
        if (id === undefined) expect(decision).toEqual({ kind: 'erase' });
      }),
    );
  });
});
