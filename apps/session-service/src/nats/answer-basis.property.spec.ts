/**
 * Which erasure records take an answer ({@link erasesAnswer}) of the basis {@link readAnswerBasis}
 * read, on a real store (SQLite in memory): a random history of one session's appends, erasures
 * (stream deleted, then its `SessionErased` record written, as `EraseSessionHandler` does) and
 * commands (basis read, then decided after some more operations), with another session writing
 * in between. Invariants, for records with `lastRevision` and for records of older builds alike
 * (with the life's `lastPosition`, one lower than its last event's, or neither):
 * - privacy: an answer is taken by the record of every erasure after its decision (the life it
 *   was decided on, and every life before it);
 * - the new life: an answer whose basis was read after an erasure's record is not taken by it.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { SqliteEventStore, type EventStore } from '@lib/event-store';
import { SESSION_ERASED, erasedRowsOf, erasureStream, sessionKey, sessionStream, type ErasedRows, type SessionErasedData } from '@lib/session';
import { erasesAnswer, readAnswerBasis, type AnswerBasis } from './answer-basis';

type Step =
  | { kind: 'append'; events: number }
  | { kind: 'erase'; legacy: 'none' | 'lastPosition' | 'laggingPosition' | 'neither' }
  | { kind: 'command'; decidedAfter: number }
  | { kind: 'other' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('append' as const), events: fc.integer({ min: 1, max: 3 }) }),
  fc.record({
    kind: fc.constant('erase' as const),
    legacy: fc.constantFrom('none' as const, 'lastPosition' as const, 'laggingPosition' as const, 'neither' as const),
  }),
  fc.record({ kind: fc.constant('command' as const), decidedAfter: fc.integer({ min: 0, max: 3 }) }),
  fc.constant({ kind: 'other' as const }),
);

const STREAM = sessionStream(sessionKey('t', 's'));
const event = () => ({ id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'x' }, metadata: { tenantId: 't', sessionId: 's' } });

/** A record as read back: where it is and which rows it names. */
interface Record {
  step: number;
  position: bigint;
  rows: ErasedRows;
}

/** An answer: the step its basis was read at, the step it was decided at (its last operation seen), its basis. */
interface Answer {
  readAt: number;
  decidedAt: number;
  basis: AnswerBasis;
}

async function run(store: EventStore, steps: Step[]): Promise<{ records: Record[]; answers: Answer[] }> {
  const records: Record[] = [];
  const answers: Answer[] = [];
  for (const [i, s] of steps.entries()) {
    if (s.kind === 'append') await store.appendToStream(STREAM, Array.from({ length: s.events }, event));
    if (s.kind === 'other') await store.appendToStream('session-t.other', [event()]);
    if (s.kind === 'command') {
      // Decided once `decidedAfter` more steps ran: the life may change between its basis and its decision.
      answers.push({ readAt: i, decidedAt: Math.min(i + s.decidedAfter, steps.length), basis: await readAnswerBasis(store, STREAM) });
    }
    if (s.kind === 'erase') {
      const [last] = await store.readStream(STREAM, { direction: 'backwards', maxCount: 1 });
      if (!last) continue;
      const data: SessionErasedData = { sessionId: 's', erasedEvents: 1, erasedAt: new Date(0).toISOString() };
      // An older build finishing an interrupted erasure wrote the last position its read models held: maybe the life's first.
      const [first] = await store.readStream(STREAM, { maxCount: 1 });
      if (s.legacy !== 'neither') data.lastPosition = (s.legacy === 'laggingPosition' ? first : last).position.toString();
      if (s.legacy === 'none') data.lastRevision = last.revision.toString();
      await store.deleteStream(STREAM);
      const written = await store.appendToStream(erasureStream('t'), [{ id: randomUUID(), type: SESSION_ERASED, data }]);
      records.push({ step: i, position: written.position, rows: erasedRowsOf(data) });
    }
  }
  return { records, answers };
}

describe('erasesAnswer of readAnswerBasis', () => {
  it('takes every answer decided before an erasure, and none whose basis was read after its record', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 24 }), async (steps) => {
        const store = SqliteEventStore.open(':memory:');
        try {
          const { records, answers } = await run(store, steps);
          for (const record of records) {
            for (const answer of answers) {
              const taken = erasesAnswer({ position: record.position, rows: record.rows }, answer.basis);
              if (answer.decidedAt < record.step) expect({ answer, record, taken }).toEqual({ answer, record, taken: true });
              if (answer.readAt > record.step) expect({ answer, record, taken }).toEqual({ answer, record, taken: false });
            }
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 150 },
    );
  });
});
