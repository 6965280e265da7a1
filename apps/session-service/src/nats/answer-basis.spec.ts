/**
 * Which answers the erasure of a session takes as another log's ({@link answerOfAnotherLog}): an
 * answer published before a restore of the store, or by another store on the same prefix, goes
 * whatever its basis revision; one of this log's session written again stays. SQLite in memory.
 */
import { randomUUID } from 'node:crypto';
import { SqliteEventStore } from '@lib/event-store';
import { answerOfAnotherLog, derivedBasis, readAnswerBasis } from './answer-basis';

describe('answerOfAnotherLog', () => {
  const stream = 'session-t.s';
  const event = () => ({ id: randomUUID(), type: 'ConversationEventAppended', data: { text: 'x' }, metadata: { tenantId: 't', sessionId: 's' } });
  let store: SqliteEventStore;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
  });
  afterEach(() => store.close());

  it('given the basis of this log’s session, then it is this log’s; once that event is deleted, it is not', async () => {
    await store.appendToStream(stream, [event(), event()]);
    const basis = await readAnswerBasis(store, stream);
    expect(basis).toMatchObject({ revision: 1n, position: 2n });
    expect(await answerOfAnotherLog(store, basis, await store.headPosition())).toBe(false);
    await store.appendToStream('session-t.other', [event()]);
    await store.deleteStream(stream);
    expect(await answerOfAnotherLog(store, basis, await store.headPosition())).toBe(true);
  });

  it('given another event at its basis position, or a position past the head, then it is another log’s', async () => {
    await store.appendToStream(stream, [event(), event()]);
    const basis = await readAnswerBasis(store, stream);
    const head = await store.headPosition();
    expect(await answerOfAnotherLog(store, { ...basis, event: `${stream}@1 ${randomUUID()} 2026-01-01T00:00:00.000Z` }, head)).toBe(true);
    expect(await answerOfAnotherLog(store, { ...basis, position: head + 1n }, head)).toBe(true);
  });

  it('given a basis without an event (a session without events), then only past the head is it another log’s', async () => {
    await store.appendToStream('session-t.other', [event()]);
    const basis = await readAnswerBasis(store, stream);
    expect(basis).toEqual({ revision: 0n, position: 1n, event: null });
    expect(await answerOfAnotherLog(store, basis, 1n)).toBe(false);
    expect(await answerOfAnotherLog(store, { ...basis, position: 2n }, 1n)).toBe(true);
  });

  it('given a derived basis (`<stream>@<revision>`), then it is this log’s while that stream’s event of that revision is at its position, whatever its id and time', async () => {
    const written = await store.appendToStream(stream, [event(), event()]);
    const basis = derivedBasis(stream, written.nextExpectedRevision, written.position);
    expect(basis.event).toBe(`${stream}@1`);
    const head = await store.headPosition();
    expect(await answerOfAnotherLog(store, basis, head)).toBe(false);
    // Another event there (the first one), another stream's, past the head, deleted: another log's.
    expect(await answerOfAnotherLog(store, { ...basis, position: written.position - 1n }, head)).toBe(true);
    expect(await answerOfAnotherLog(store, derivedBasis('session-t.s2', 1n, written.position), head)).toBe(true);
    expect(await answerOfAnotherLog(store, { ...basis, position: head + 1n }, head)).toBe(true);
    await store.appendToStream('session-t.other', [event()]);
    await store.deleteStream(stream);
    expect(await answerOfAnotherLog(store, basis, await store.headPosition())).toBe(true);
  });
});
