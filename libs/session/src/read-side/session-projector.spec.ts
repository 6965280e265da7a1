import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { getWindow } from './queries/window-query';
import { getCompaction, listCompactions } from './queries/compaction-history-query';
import { listLog } from './queries/session-log-query';
import { InvalidQueryError } from './invalid-query-error';
import { MalformedEventError } from './malformed-event-error';
import { dumpReadModels } from './read-model-dump';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { tenantRecallIndexTables } from './recall-index-tables';
import { assistant, RecordedSessionLog, system, tool, user } from './testing/recorded-session-log';
import { CONVERSATION_EVENT } from '../events/session-stream-events';
import { foldSessionWindow, orderedWindow } from '../domain/session-window';
import { SESSION_ERASED, erasureStream } from '../events/erasure-events';

function setup() {
  const store = ReadModelStore.open(':memory:');
  const projector = new SessionProjector(store);
  return { store, projector };
}

const windowIds = (store: ReadModelStore, sessionId: string, tenantId = 'default') => getWindow(store, tenantId, sessionId)?.entries.map((e) => e.event.id);

describe('SessionProjector: hand-built sequences', () => {
  it("erases a session's rows when it reads an erasure record written by another replica, and keeps other sessions", () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog('acme');
    log.append('s1', user('u1', 'secret plan'));
    log.append('s2', user('u2', 'kept'));
    projector.applyBatch(log.events);
    expect(windowIds(store, 's1', 'acme')).toEqual(['u1']);
    const last = log.events[log.events.length - 1];
    const record = {
      ...last,
      id: '00000000-0000-4000-8000-0000000000e1',
      streamId: erasureStream('acme'),
      revision: 0n,
      position: last.position + 1n,
      type: SESSION_ERASED,
      data: { sessionId: 's1', erasedEvents: 1, erasedAt: '2024-05-02T00:00:00.000Z' },
      metadata: undefined,
    };
    expect(projector.applyBatch([record])).toBe(record.position);
    expect(getWindow(store, 'acme', 's1')).toBeNull();
    expect(listLog(store, 'acme', 's1')).toBeNull();
    expect(JSON.stringify(dumpReadModels(store))).not.toContain('secret plan');
    expect(windowIds(store, 's2', 'acme')).toEqual(['u2']);
  });

  // A life of s1 (revisions 0..3), the session written again (4, 5) and projected before the record.
  it.each([
    // The life by revision, whatever position the record names (the last one its writer had projected).
    ['lastRevision (and a lower lastPosition)', { lastRevision: '3', lastPosition: '2' }, ['n4', 'n5']],
    ['lastRevision only', { lastRevision: '3' }, ['n4', 'n5']],
    // A record written before lastRevision was added: the rows of events up to its position.
    ['lastPosition only', { lastPosition: '2' }, ['u2', 'u3', 'n4', 'n5']],
    // An older one: every row.
    ['neither', {}, undefined],
  ])('erases, for an erasure record with %s, the rows it names and applies the later ones again', (_name, bound, kept) => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog('acme');
    for (const id of ['u0', 'u1', 'u2', 'u3']) log.append('s1', user(id, `erased ${id}`));
    for (const id of ['n4', 'n5']) log.append('s1', user(id, `kept ${id}`));
    projector.applyBatch(log.events);
    const last = log.events[log.events.length - 1];
    const record = {
      ...last,
      id: '00000000-0000-4000-8000-0000000000e2',
      streamId: erasureStream('acme'),
      revision: 0n,
      position: last.position + 1n,
      type: SESSION_ERASED,
      data: { sessionId: 's1', erasedEvents: 4, erasedAt: '2024-05-02T00:00:00.000Z', ...bound },
      metadata: undefined,
    };
    projector.applyBatch([record]);
    expect(windowIds(store, 's1', 'acme')).toEqual(kept);
    expect(listLog(store, 'acme', 's1')?.events.map((e) => e.eventId)).toEqual(kept);
  });

  it('projects appends into the window, the log and the session row', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog('acme');
    log.append('s1', system('sys1', 'be brief'));
    log.append('s1', user('u1', 'hello'), { userId: 'alice' });
    log.append('s1', assistant('a1', null, [['read_file', '{"path":"a.ts"}']]));
    log.append('s1', tool('t1', 'call-a1-0', 'read_file', 'contents'), { userId: 'bob' });

    expect(projector.applyBatch(log.events)).toBe(4n);
    expect(projector.checkpoint()).toBe(4n);

    const window = getWindow(store, 'acme', 's1')!;
    expect(window.revision).toBe(3n);
    expect(window.entries.map((e) => [e.event.id, e.revision, e.anchorRevision])).toEqual([
      ['sys1', 0n, 0n],
      ['u1', 1n, 1n],
      ['a1', 2n, 2n],
      ['t1', 3n, 3n],
    ]);
    expect(window.entries[2].event).toEqual(assistant('a1', null, [['read_file', '{"path":"a.ts"}']]));
    expect(window.entries[1].costs).toEqual({ chars: 20, cl100k_base: 5, o200k_base: 5 });

    const session = store.db.prepare('SELECT * FROM sessions').safeIntegers(true).get() as Record<string, unknown>;
    expect(session).toMatchObject({ session_key: 'acme.s1', session_id: 's1', tenant_id: 'acme', user_id: 'alice', revision: 3n, last_position: 4n });
    expect(session.created_at).toBe('2024-05-01T00:00:01.000Z');
    expect(session.updated_at).toBe('2024-05-01T00:00:04.000Z');

    const page = listLog(store, 'acme', 's1')!;
    expect(page.events.map((e) => [e.revision, e.type, e.eventId, e.kind, e.archived])).toEqual([
      [0n, CONVERSATION_EVENT, 'sys1', 'system', false],
      [1n, CONVERSATION_EVENT, 'u1', 'user', false],
      [2n, CONVERSATION_EVENT, 'a1', 'assistant', false],
      [3n, CONVERSATION_EVENT, 't1', 'tool', false],
    ]);
    expect(page.nextRevision).toBeUndefined();
  });

  it('archives events, puts a summary before its anchor, and records the compaction with its ids and summary', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'first question'));
    log.append('s1', assistant('a1', 'first answer'));
    log.append('s1', user('u2', 'second question'));
    log.append('s1', assistant('a2', 'second answer'));
    projector.applyBatch(log.events);

    const c1 = [log.archive('s1', 'c1', ['u1', 'a1']), log.summary('s1', 'c1', 'u2', 'they talked'), log.completed('s1', 'c1', ['summary-c1', 'u2', 'a2'])];
    projector.applyBatch(c1);
    log.append('s1', user('u3', 'third question'));
    projector.applyBatch(log.events);

    expect(windowIds(store, 's1')).toEqual(['summary-c1', 'u2', 'a2', 'u3']);
    const summaryEntry = getWindow(store, 'default', 's1')!.entries[0];
    expect(summaryEntry).toMatchObject({ revision: 5n, anchorRevision: 2n, compactionId: 'c1' });
    expect(summaryEntry.event).toEqual({ id: 'summary-c1', type: 'summary', shadowPrompt: 'Summarize the conversation so far.', text: 'they talked' });

    // Second compaction archives the old summary and u2/a2, summary before u3.
    projector.applyBatch([log.archive('s1', 'c2', ['summary-c1', 'u2', 'a2']), log.summary('s1', 'c2', 'u3', 'recap two'), log.completed('s1', 'c2')]);
    expect(windowIds(store, 's1')).toEqual(['summary-c2', 'u3']);

    const entries = listLog(store, 'default', 's1')!.events;
    const byId = Object.fromEntries(entries.filter((e) => e.eventId).map((e) => [e.eventId, [e.archived, e.archivedBy]]));
    expect(byId).toEqual({
      u1: [true, 'c1'],
      a1: [true, 'c1'],
      u2: [true, 'c2'],
      a2: [true, 'c2'],
      u3: [false, undefined],
      'summary-c1': [true, 'c2'],
      'summary-c2': [false, undefined],
    });
    expect(entries.filter((e) => !e.eventId).map((e) => [e.type, e.compactionId, e.archived])).toEqual([
      ['EventsArchived', 'c1', undefined],
      ['CompactionCompleted', 'c1', undefined],
      ['EventsArchived', 'c2', undefined],
      ['CompactionCompleted', 'c2', undefined],
    ]);

    const history = listCompactions(store, 'default', 's1')!;
    expect(history.map((c) => [c.compactionId, c.outcome, c.revision, c.archivedIds, c.summary?.summaryId])).toEqual([
      ['c1', 'compacted', 6n, ['u1', 'a1'], 'summary-c1'],
      ['c2', 'compacted', 10n, ['summary-c1', 'u2', 'a2'], 'summary-c2'],
    ]);
    const c1Record = getCompaction(store, 'default', 's1', 'c1')!;
    expect(c1Record.at).toBe('2024-06-01T00:00:01.000Z');
    expect(c1Record.data).toMatchObject({ compactionId: 'c1', keptIds: ['summary-c1', 'u2', 'a2'], tokensEstimatedSaved: 60 });
    expect(c1Record.position).toBe(7n);
    expect(getCompaction(store, 'default', 's1', 'nope')).toBeNull();
  });

  it('orders a summary whose insertBeforeId names no active event (one archived, one unknown) at its own revision, as the fold does', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'a'));
    log.append('s1', user('u2', 'b'));
    log.append('s1', user('u3', 'c'));
    log.archive('s1', 'c1', ['u1', 'u2']);
    log.summary('s1', 'c1', 'u2', 'x'); // u2 archived: anchor = own revision (4), as for an unknown id
    log.summary('s1', 'c9', 'zzz', 'y'); // unknown: anchor = own revision (5)
    log.append('s1', user('u4', 'd'));
    projector.applyBatch(log.events);
    const entries = getWindow(store, 'default', 's1')!.entries;
    expect(entries.map((e) => [e.event.id, e.anchorRevision])).toEqual([
      ['u3', 2n],
      ['summary-c1', 4n],
      ['summary-c9', 5n],
      ['u4', 6n],
    ]);
    expect(entries).toEqual(orderedWindow(foldSessionWindow(log.ofSession('s1'))));
  });

  it('records a failed compaction, with the superseded system message it archived anyway', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', system('sys1', 'old rules'));
    log.append('s1', system('sys2', 'new rules'));
    log.append('s1', user('u1', 'hi'));
    log.archive('s1', 'c1', ['sys1']);
    log.failed('s1', 'c1', ['sys1']);
    projector.applyBatch(log.events);

    expect(windowIds(store, 's1')).toEqual(['sys2', 'u1']);
    const record = getCompaction(store, 'default', 's1', 'c1')!;
    expect(record).toMatchObject({ outcome: 'failed', archivedIds: ['sys1'], summary: null, revision: 4n, at: '2024-06-01T00:00:02.000Z' });
    expect(record.data).toMatchObject({ stage: 'summarize', reason: 'blank reply' });
    expect(listLog(store, 'default', 's1')!.events[0]).toMatchObject({ eventId: 'sys1', archived: true, archivedBy: 'c1' });
  });

  it('keeps policy events in the log only', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    log.policy('s1');
    projector.applyBatch(log.events);
    expect(windowIds(store, 's1')).toEqual(['u1']);
    expect(getWindow(store, 'default', 's1')!.revision).toBe(1n);
    const policy = listLog(store, 'default', 's1')!.events[1];
    expect(policy).toMatchObject({ type: 'AutoCompactionPolicySet', revision: 1n });
    expect(policy.archived).toBeUndefined();
    expect(policy.data).toMatchObject({ estimator: 'chars', trigger: { type: 'turn-count', maxTurns: 3 } });
    expect(listCompactions(store, 'default', 's1')).toEqual([]);
  });

  it('answers null for unknown sessions and sessions of another tenant', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog('acme');
    log.append('s1', user('u1', 'hi'));
    projector.applyBatch(log.events);
    expect(getWindow(store, 'acme', 's1')).not.toBeNull();
    expect(getWindow(store, 'default', 's1')).toBeNull();
    expect(getWindow(store, 'acme', 'nope')).toBeNull();
    expect(listLog(store, 'other', 's1')).toBeNull();
    expect(listCompactions(store, 'other', 's1')).toBeNull();
    expect(getCompaction(store, 'other', 's1', 'c1')).toBeNull();
  });

  it('keeps the same session id of two tenants apart, erasing one leaves the other', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog('acme');
    log.append('s1', user('u1', 'acme says hi'));
    log.record(
      's1',
      CONVERSATION_EVENT,
      { event: user('x1', 'globex says hi'), costs: { chars: 1, cl100k_base: 1, o200k_base: 1 }, createdAt: '2024-01-01T00:00:00Z' },
      'globex',
    );
    projector.applyBatch(log.events);
    expect(windowIds(store, 's1', 'acme')).toEqual(['u1']);
    expect(windowIds(store, 's1', 'globex')).toEqual(['x1']);
    projector.eraseSession('globex', 's1');
    expect(getWindow(store, 'globex', 's1')).toBeNull();
    expect(windowIds(store, 's1', 'acme')).toEqual(['u1']);
  });

  it('takes the tenant and session id from the stream key when the metadata lacks them', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    const keyed = { ...log.append('s1', user('u1', 'hi')), streamId: 'session-acme.chat.42', metadata: null };
    const bare = { ...log.append('s2', user('u1', 'hi')), streamId: 'session-lonely', metadata: {} };
    projector.applyBatch([keyed, bare]);
    expect(windowIds(store, 'chat.42', 'acme')).toEqual(['u1']);
    expect(windowIds(store, 'lonely', 'default')).toEqual(['u1']);
  });

  it('ignores events at or before the checkpoint and moves the checkpoint over non-session streams', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    log.append('s1', user('u2', 'again'));
    projector.applyBatch(log.events);
    const before = dumpReadModels(store);
    expect(projector.applyBatch(log.events)).toBe(2n);
    expect(dumpReadModels(store)).toEqual(before);

    const foreign = { ...log.events[0], streamId: 'other-x', position: 9n };
    expect(projector.applyBatch([foreign])).toBe(9n);
    expect({ ...dumpReadModels(store), projector_checkpoints: [] }).toEqual({ ...before, projector_checkpoints: [] });
  });

  it('erases a session and restarts a session whose stream starts over', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    log.append('s2', user('v1', 'other'));
    log.append('s1', user('u2', 'again'));
    projector.applyBatch(log.events);

    expect(projector.eraseSession('default', 's1')).toBe(true);
    expect(projector.eraseSession('default', 's1')).toBe(false);
    expect(getWindow(store, 'default', 's1')).toBeNull();
    expect(windowIds(store, 's2')).toEqual(['v1']);
    const counts = (sessionId: string) =>
      ['sessions', 'window_entries', 'session_log', 'compactions'].map(
        (t) => (store.db.prepare(`SELECT count(*) AS n FROM ${t} WHERE session_key = ?`).get(`default.${sessionId}`) as { n: number }).n,
      );
    expect(counts('s1')).toEqual([0, 0, 0, 0]);
    const { words } = tenantRecallIndexTables(store.db, 'default')!;
    expect((store.db.prepare(`SELECT count(*) AS n FROM ${words}`).get() as { n: number }).n).toBe(1);

    // Stream deleted and re-created: its first event comes again at revision 0.
    const restarted = new RecordedSessionLog();
    const first = restarted.append('s2', user('w1', 'fresh'));
    projector.applyBatch([{ ...first, position: 10n }]);
    expect(windowIds(store, 's2')).toEqual(['w1']);
    expect(listLog(store, 'default', 's2')!.events.map((e) => e.eventId)).toEqual(['w1']);
  });

  it('pages the full log by revision and rejects bad paging parameters', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    for (let i = 0; i < 5; i++) log.append('s1', user(`u${i}`, `m${i}`));
    projector.applyBatch(log.events);
    const first = listLog(store, 'default', 's1', 0n, 2)!;
    expect(first.events.map((e) => e.eventId)).toEqual(['u0', 'u1']);
    expect(first.nextRevision).toBe(2n);
    const last = listLog(store, 'default', 's1', 4n, 2)!;
    expect(last.events.map((e) => e.eventId)).toEqual(['u4']);
    expect(last.nextRevision).toBeUndefined();
    expect(() => listLog(store, 'default', 's1', -1n, 2)).toThrow(InvalidQueryError);
    expect(() => listLog(store, 'default', 's1', 0n, 0)).toThrow(expect.objectContaining({ parameter: 'limit' }));
  });

  it('applies a batch atomically: a malformed event leaves every row and the checkpoint unchanged', () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    projector.applyBatch(log.events);
    const before = dumpReadModels(store);

    log.append('s1', user('u2', 'second'));
    log.archive('s1', 'c1', ['u1']);
    log.record('s1', CONVERSATION_EVENT, { costs: {} }); // no event
    log.append('s1', user('u3', 'after'));
    expect(() => projector.applyBatch(log.events)).toThrow(MalformedEventError);
    expect(projector.checkpoint()).toBe(1n);
    expect(store.readCheckpoint('session-read-models')).toBe(1n);
    expect(dumpReadModels(store)).toEqual(before);

    // Nothing was skipped: the good events before the bad one still apply once it is out of the way.
    expect(projector.applyBatch(log.events.slice(0, 3))).toBe(3n);
    expect(windowIds(store, 's1')).toEqual(['u2']);
  });

  it('keeps the checkpoint and rows across reopening the file', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'read-models-'));
    const file = path.join(dir, 'read-models.sqlite');
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    log.append('s1', user('u2', 'there'));
    const first = ReadModelStore.open(file);
    new SessionProjector(first).applyBatch(log.events);
    const dump = dumpReadModels(first);
    first.close();

    const reopened = ReadModelStore.open(file);
    const projector = new SessionProjector(reopened);
    expect(projector.checkpoint()).toBe(2n);
    expect(dumpReadModels(reopened)).toEqual(dump);
    reopened.close();
  });
});

describe('SessionProjector.waitForPosition', () => {
  it('resolves true once a batch reaches the position, immediately when already reached', async () => {
    const { projector } = setup();
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'hi'));
    log.append('s1', user('u2', 'there'));
    const waiting = projector.waitForPosition(2n, 60_000);
    projector.applyBatch(log.events.slice(0, 1));
    projector.applyBatch(log.events.slice(1));
    await expect(waiting).resolves.toBe(true);
    await expect(projector.waitForPosition(1n, 0)).resolves.toBe(true);
  });

  it("resolves true for the position of another stream's event (erasure record, KurrentDB system event), which writes no row but the erasure's, without content", async () => {
    const { store, projector } = setup();
    const log = new RecordedSessionLog();
    const first = log.append('s1', user('u1', 'hi'));
    projector.applyBatch([first]);
    const before = dumpReadModels(store);
    const erasure = {
      ...first,
      id: 'e1',
      streamId: 'erasure-default',
      type: 'SessionErased',
      data: { sessionId: 'x', erasedEvents: 1 },
      revision: 0n,
      position: 7n,
    };
    const system = { ...first, id: 'e2', streamId: '$stats-127.0.0.1:2113', type: '$statsCollected', data: {}, revision: 0n, position: 9n };
    const waitErasure = projector.waitForPosition(7n, 60_000);
    const waitSystem = projector.waitForPosition(9n, 60_000);
    projector.applyBatch([erasure, system]);
    await expect(waitErasure).resolves.toBe(true);
    await expect(waitSystem).resolves.toBe(true);
    expect(projector.checkpoint()).toBe(9n);
    // The erasure record is kept in `erasures` alone (no content), the time the store recorded it standing in for its missing erasedAt.
    const { erasures, ...after } = dumpReadModels(store);
    expect({ ...after, projector_checkpoints: [] }).toEqual({ ...before, erasures: undefined, projector_checkpoints: [] });
    expect(erasures).toEqual([expect.objectContaining({ position: '7', tenant_id: 'default', session_id: 'x', erased_events: '1', last_revision: null })]);
  });

  it('resolves false when the position is not reached in time', async () => {
    const { projector } = setup();
    await expect(projector.waitForPosition(5n, 5)).resolves.toBe(false);
  });
});
