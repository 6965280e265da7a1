/**
 * Test support for the answer-basis property specs: random histories of one session (`t`/`s`) on a
 * real store — appends, erasures (stream deleted, then its `SessionErased` record, as
 * `EraseSessionHandler` does, in the record forms of older builds too), commands, another
 * session's writes — and the erasure rule's two invariants checked on the answers of a history.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { SESSION_ERASED, erasedRowsOf, erasureStream, sessionKey, sessionStream, type ErasedRows, type SessionErasedData } from '@lib/session';
import { erasesAnswer, type AnswerBasis } from '../answer-basis';

/** The session stream of the histories. */
export const STREAM = sessionStream(sessionKey('t', 's'));

/** A conversation event of session `s` (new id each call). */
export const event = () => ({ id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'x' }, metadata: { tenantId: 't', sessionId: 's' } });

/** A step of a history other than a command: `legacy` is the record form (`none`: with `lastRevision`, today's). */
export type HistoryStep =
  { kind: 'append'; events: number } | { kind: 'erase'; legacy: 'none' | 'lastPosition' | 'laggingPosition' | 'neither' } | { kind: 'other' };

/** Arbitrary {@link HistoryStep}s. */
export const historySteps: fc.Arbitrary<HistoryStep>[] = [
  fc.record({ kind: fc.constant('append' as const), events: fc.integer({ min: 1, max: 3 }) }),
  fc.record({
    kind: fc.constant('erase' as const),
    legacy: fc.constantFrom('none' as const, 'lastPosition' as const, 'laggingPosition' as const, 'neither' as const),
  }),
  fc.constant({ kind: 'other' as const }),
];

/** An erasure record as read back: the step it was written at, where it is and which rows it names. */
export interface ErasureRecord {
  step: number;
  position: bigint;
  rows: ErasedRows;
}

/** An answer: the step its basis (or state) was read at, the step it was decided at (its last operation seen), its basis. */
export interface HistoryAnswer {
  readAt: number;
  decidedAt: number;
  basis: AnswerBasis;
}

/** Runs step `s` (number `i`) on `store`; the erasure record it wrote, if any (none for a session without events). */
export async function runHistoryStep(store: EventStore, s: HistoryStep, i: number): Promise<ErasureRecord | null> {
  if (s.kind === 'append') await store.appendToStream(STREAM, Array.from({ length: s.events }, event));
  if (s.kind === 'other') await store.appendToStream('session-t.other', [event()]);
  if (s.kind !== 'erase') return null;
  const [last] = await store.readStream(STREAM, { direction: 'backwards', maxCount: 1 });
  if (!last) return null;
  const data: SessionErasedData = { sessionId: 's', erasedEvents: 1, erasedAt: new Date(0).toISOString() };
  // An older build finishing an interrupted erasure wrote the last position its read models held: maybe the life's first.
  const [first] = await store.readStream(STREAM, { maxCount: 1 });
  if (s.legacy !== 'neither') data.lastPosition = (s.legacy === 'laggingPosition' ? first : last).position.toString();
  if (s.legacy === 'none') data.lastRevision = last.revision.toString();
  await store.deleteStream(STREAM);
  const written = await store.appendToStream(erasureStream('t'), [{ id: randomUUID(), type: SESSION_ERASED, data }]);
  return { step: i, position: written.position, rows: erasedRowsOf(data) };
}

/**
 * The invariants: privacy (an answer is taken by the record of every erasure after its decision)
 * and the new life (an answer read after an erasure's record is not taken by it).
 */
export function expectErasureRule(records: readonly ErasureRecord[], answers: readonly HistoryAnswer[]): void {
  for (const record of records) {
    for (const answer of answers) {
      const taken = erasesAnswer({ position: record.position, rows: record.rows }, answer.basis);
      if (answer.decidedAt < record.step) expect({ answer, record, taken }).toEqual({ answer, record, taken: true });
      if (answer.readAt > record.step) expect({ answer, record, taken }).toEqual({ answer, record, taken: false });
    }
  }
}

/**
 * Runs {@link expectErasureRule} on the answers and records `run` gives for random histories of
 * `step`s (up to 24), each on a new SQLite store in memory; 150 histories.
 */
export async function assertErasureRule<S>(
  step: fc.Arbitrary<S>,
  run: (store: EventStore, steps: S[]) => Promise<{ records: ErasureRecord[]; answers: HistoryAnswer[] }>,
): Promise<void> {
  await fc.assert(
    fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 24 }), async (steps) => {
      const store = SqliteEventStore.open(':memory:');
      try {
        const { records, answers } = await run(store, steps);
        expectErasureRule(records, answers);
      } finally {
        await store.close();
      }
    }),
    { numRuns: 150 },
  );
}
