/**
 * Which erasure records take an answer whose basis is derived from what its command's handler did
 * ({@link basisOfAnswer}, {@link basisDecidedOn}; read only for a command decided on a session
 * without events), on a real store (SQLite in memory). A random history of one session's appends,
 * erasures (stream deleted, then its `SessionErased` record, as `EraseSessionHandler` does, with
 * the record forms of older builds too) and commands run as the handlers run them: the session's
 * state loaded (its last event and incarnation), then, some operations later, either written in
 * that life at that revision (as the append, policy and compaction handlers write: the store
 * refuses it once the life or the revision moved on) and answered with what it wrote, or refused
 * and answered on the state it loaded. Another session writes in between. The invariants of the
 * read basis (answer-basis.property.spec.ts) hold:
 * - privacy: an answer is taken by the record of every erasure after its decision;
 * - the new life: an answer whose state was loaded after an erasure's record is not taken by it.
 */
import fc from 'fast-check';
import { WrongExpectedRevisionError, WrongIncarnationError, type EventStore } from '@lib/event-store';
import type { DecidedOn } from '@lib/session';
import { basisDecidedOn, basisOfAnswer, readAnswerBasis, type AnswerBasis } from './answer-basis';
import {
  STREAM,
  event,
  assertErasureRule,
  historySteps,
  runHistoryStep,
  type ErasureRecord,
  type HistoryAnswer,
  type HistoryStep,
} from './testing/erasure-history';

type Step = HistoryStep | { kind: 'command'; decidedAfter: number; writes: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  ...historySteps,
  fc.record({ kind: fc.constant('command' as const), decidedAfter: fc.integer({ min: 0, max: 3 }), writes: fc.boolean() }),
);

/** A command whose state was loaded, waiting for its decision. */
interface Pending {
  readAt: number;
  decidedAt: number;
  writes: boolean;
  decidedOn: DecidedOn;
  incarnation: bigint;
}

/** The state a handler loads: its last event (revision, position) and the stream's incarnation. */
async function load(store: EventStore): Promise<{ decidedOn: DecidedOn; incarnation: bigint }> {
  const [last] = await store.readStream(STREAM, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
  return { decidedOn: last ? { revision: last.revision, position: last.position } : null, incarnation: await store.streamIncarnation(STREAM) };
}

/** Decides `command` now: written in its life at its revision and answered with what it wrote, or refused on the state it loaded. */
async function decide(store: EventStore, command: Pending): Promise<HistoryAnswer> {
  const answered = (basis: AnswerBasis | null): HistoryAnswer => {
    // Every command has a basis: derived, or read for a session without events.
    expect(basis).not.toBeNull();
    return { readAt: command.readAt, decidedAt: command.decidedAt, basis: basis! };
  };
  if (command.writes) {
    try {
      const expectedRevision = command.decidedOn?.revision ?? 'no_stream';
      const written = await store.appendToStream(STREAM, [event()], { expectedRevision, incarnation: command.incarnation });
      const body = { revision: written.nextExpectedRevision.toString(), position: written.position.toString() };
      return answered(basisOfAnswer(STREAM, 'append', body));
    } catch (err) {
      if (!(err instanceof WrongExpectedRevisionError) && !(err instanceof WrongIncarnationError)) throw err;
    }
  }
  // Refused (409, or a rule on the state): on the state it loaded; a session without events: read as it is answered.
  return answered(basisDecidedOn(STREAM, command.decidedOn) ?? (await readAnswerBasis(store, STREAM)));
}

async function run(store: EventStore, steps: Step[]): Promise<{ records: ErasureRecord[]; answers: HistoryAnswer[] }> {
  const records: ErasureRecord[] = [];
  const answers: HistoryAnswer[] = [];
  let pending: Pending[] = [];
  const decideDue = async (now: number) => {
    for (const command of pending.filter((c) => c.decidedAt <= now)) answers.push(await decide(store, command));
    pending = pending.filter((c) => c.decidedAt > now);
  };
  for (const [i, s] of steps.entries()) {
    // Decided before this step's operation: a decision at `decidedAt` saw the operations before it.
    await decideDue(i);
    if (s.kind === 'command') {
      pending.push({ readAt: i, decidedAt: i + s.decidedAfter, writes: s.writes, ...(await load(store)) });
      continue;
    }
    const record = await runHistoryStep(store, s, i);
    if (record) records.push(record);
  }
  await decideDue(Number.MAX_SAFE_INTEGER);
  return { records, answers };
}

describe('erasesAnswer of a basis derived from the handler', () => {
  it('takes every answer decided before an erasure, and none whose state was loaded after its record', async () => {
    await assertErasureRule(step, run);
  });
});
