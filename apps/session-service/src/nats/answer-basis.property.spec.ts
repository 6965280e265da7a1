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
import fc from 'fast-check';
import type { EventStore } from '@lib/event-store';
import { readAnswerBasis } from './answer-basis';
import { STREAM, assertErasureRule, historySteps, runHistoryStep, type ErasureRecord, type HistoryAnswer, type HistoryStep } from './testing/erasure-history';

type Step = HistoryStep | { kind: 'command'; decidedAfter: number };

const step: fc.Arbitrary<Step> = fc.oneof(...historySteps, fc.record({ kind: fc.constant('command' as const), decidedAfter: fc.integer({ min: 0, max: 3 }) }));

async function run(store: EventStore, steps: Step[]): Promise<{ records: ErasureRecord[]; answers: HistoryAnswer[] }> {
  const records: ErasureRecord[] = [];
  const answers: HistoryAnswer[] = [];
  for (const [i, s] of steps.entries()) {
    if (s.kind === 'command') {
      // Decided once `decidedAfter` more steps ran: the life may change between its basis and its decision.
      answers.push({ readAt: i, decidedAt: Math.min(i + s.decidedAfter, steps.length), basis: await readAnswerBasis(store, STREAM) });
      continue;
    }
    const record = await runHistoryStep(store, s, i);
    if (record) records.push(record);
  }
  return { records, answers };
}

describe('erasesAnswer of readAnswerBasis', () => {
  it('takes every answer decided before an erasure, and none whose basis was read after its record', async () => {
    await assertErasureRule(step, run);
  });
});
