import { CONVERSATION_EVENT } from '../../events/session-stream-events';
import type { ReadModelStore } from '../read-model-store';
import { projectedReadModels } from '../testing/projected-read-models';
import { RecordedSessionLog, assistant, user } from '../testing/recorded-session-log';
import { getSessionSummary, listSessionSummaries } from './session-summary-query';

/** A session `long` of 60 conversation events, 3 compactions (one failed) and a policy; a session `small` of 2 events. */
function readModels(): ReadModelStore {
  const log = new RecordedSessionLog();
  log.policy('long');
  for (let k = 0; k < 60; k++) {
    log.append('long', (k % 2 ? assistant : user)(`e${k}`, `text ${k}`));
    if (k % 20 === 19) {
      log.archive('long', `c${k}`, [`e${k - 19}`, `e${k - 18}`]);
      log.completed('long', `c${k}`);
    }
  }
  log.failed('long', 'cf');
  log.append('small', user('a', 'hello'));
  log.append('small', assistant('b', 'hi'));
  return projectedReadModels(log);
}

/** The query plan lines of every statement `read` prepares on `store`'s connection (parameters bound to null). */
function planLines(store: ReadModelStore, read: () => unknown): string[] {
  const sqls: string[] = [];
  const prepare = store.db.prepare.bind(store.db);
  const spy = jest.spyOn(store.db, 'prepare').mockImplementation((sql: string) => {
    sqls.push(sql);
    return prepare(sql);
  });
  try {
    read();
  } finally {
    spy.mockRestore();
  }
  return sqls.flatMap((sql) => {
    const named = Object.fromEntries([...sql.matchAll(/@(\w+)/g)].map((m) => [m[1], null]));
    const positional = [...sql.matchAll(/\?/g)].map(() => null);
    const statement = store.db.prepare(`EXPLAIN QUERY PLAN ${sql}`);
    const rows = (Object.keys(named).length > 0 ? statement.all(named) : statement.all(...positional)) as Array<{ detail: string }>;
    return rows.map((r) => r.detail);
  });
}

describe('session summary reads (capacity finding 2)', () => {
  it('read no row of the session log but its last policy, and no compaction but the last one: O(1) in the history', () => {
    const store = readModels();
    for (const read of [
      () => getSessionSummary(store, 'default', 'long', 'chars'),
      () => listSessionSummaries(store, { tenantId: 'default', estimator: 'chars', limit: 20 }),
    ]) {
      const lines = planLines(store, read);
      expect(lines.length).toBeGreaterThan(0);
      // Before read models 12: `SEARCH session_log USING INDEX session_log_by_revision (session_key=?)` (a count of every row of the session), and the same over `compactions`.
      expect(lines.filter((line) => /\bsession_log\b/.test(line) && !/session_log_policies/.test(line))).toEqual([]);
      expect(lines.filter((line) => /\bcompactions\b/.test(line) && !/compactions_by_revision/.test(line))).toEqual([]);
    }
  });

  it('answer the counts kept by the projector, not a count of the log rows (which the read leaves alone)', () => {
    const store = readModels();
    const before = getSessionSummary(store, 'default', 'long', 'chars')!;
    expect(before).toMatchObject({ eventCount: 60, compactionCount: 3, failedCompactionCount: 1, noopCompactionCount: 0 });
    // Rows a summary read before read models 12 counted one by one.
    store.db.prepare(`DELETE FROM session_log WHERE session_key = 'default.long' AND type = ?`).run(CONVERSATION_EVENT);
    expect(getSessionSummary(store, 'default', 'long', 'chars')).toEqual(before);
  });
});

// Newcomer ncretention (A3): a clean-up job could not select old sessions (updatedSince only).
describe('session list updatedBefore', () => {
  /** Sessions a, b, c with their last activity set to these times (ms precision, as the projector keeps them). */
  function timedReadModels(): ReadModelStore {
    const log = new RecordedSessionLog();
    for (const id of ['a', 'b', 'c']) log.append(id, user(`${id}1`, `text of ${id}`));
    const store = projectedReadModels(log);
    const times = { a: '2026-01-01T00:00:00.000Z', b: '2026-02-01T00:00:00.005Z', c: '2026-03-01T00:00:00.000Z' };
    for (const [id, at] of Object.entries(times)) store.db.prepare('UPDATE sessions SET updated_at = ? WHERE session_id = ?').run(at, id);
    return store;
  }
  const ids = (store: ReadModelStore, query: { updatedSince?: string; updatedBefore?: string }): string[] =>
    listSessionSummaries(store, { tenantId: 'default', estimator: 'chars', ...query })
      .sessions.map((s) => s.sessionId)
      .sort();

  it('keeps the sessions whose last activity is before the time, exclusive, to the exact instant, offsets read', () => {
    const store = timedReadModels();
    expect(ids(store, { updatedBefore: '2026-02-01T00:00:00.005Z' })).toEqual(['a']);
    expect(ids(store, { updatedBefore: '2026-02-01T00:00:00.0051Z' })).toEqual(['a', 'b']);
    expect(ids(store, { updatedBefore: '2026-02-01T00:00:00.0049Z' })).toEqual(['a']);
    expect(ids(store, { updatedBefore: '2026-02-01T01:00:00.006+01:00' })).toEqual(['a', 'b']);
    expect(ids(store, { updatedBefore: '2026-01-01T00:00:00Z' })).toEqual([]);
    expect(ids(store, { updatedBefore: '2027-01-01T00:00:00Z' })).toEqual(['a', 'b', 'c']);
  });

  it('combines with updatedSince (at or after): together they select one range', () => {
    const store = timedReadModels();
    expect(ids(store, { updatedSince: '2026-01-01T00:00:00Z', updatedBefore: '2026-03-01T00:00:00Z' })).toEqual(['a', 'b']);
    expect(ids(store, { updatedSince: '2026-01-15T00:00:00Z', updatedBefore: '2026-03-01T00:00:00.001Z' })).toEqual(['b', 'c']);
    expect(ids(store, { updatedSince: '2026-02-01T00:00:00.005Z', updatedBefore: '2026-02-01T00:00:00.005Z' })).toEqual([]);
  });
});

describe('session list cursors and their filters (newcomer ncfresh70 F2)', () => {
  /** Sessions s0…s5, alternately of users u0 and u1. */
  function users(): ReadModelStore {
    const log = new RecordedSessionLog();
    for (let i = 0; i < 6; i++) log.append(`s${i}`, user(`m${i}`, `text ${i}`), { userId: `u${i % 2}` });
    return projectedReadModels(log);
  }
  const list = (store: ReadModelStore, query: { userId?: string; updatedSince?: string; cursor?: string }) =>
    listSessionSummaries(store, { tenantId: 'default', estimator: 'chars', limit: 2, ...query });

  it('continues its own list, the same filters sent again (a time written otherwise but the same instant too)', () => {
    const store = users();
    const first = list(store, { userId: 'u0', updatedSince: '2000-01-01T00:00:00Z' });
    const next = list(store, { userId: 'u0', updatedSince: '2000-01-01T00:00:00.000+00:00', cursor: first.nextCursor });
    expect([...first.sessions, ...next.sessions].map((s) => s.sessionId)).toEqual(['s4', 's2', 's0']);
  });

  it('refuses a cursor of the list with other filters: no page from the middle of another list', () => {
    const store = users();
    const unfiltered = list(store, {}).nextCursor;
    expect(() => list(store, { userId: 'u1', cursor: unfiltered })).toThrow(
      'cursor: belongs to the session list with other filters (userId, updatedSince, updatedBefore); pass the nextCursor of the previous page unchanged, with the same filters',
    );
    const ofU0 = list(store, { userId: 'u0' }).nextCursor;
    expect(() => list(store, { userId: 'u1', cursor: ofU0 })).toThrow('belongs to the session list with other filters');
    expect(() => list(store, { cursor: ofU0 })).toThrow('belongs to the session list with other filters');
  });

  it('follows a cursor an earlier release made (no filters in it) as before', () => {
    const store = users();
    const first = list(store, {});
    const fields = JSON.parse(Buffer.from(first.nextCursor!, 'base64url').toString('utf8')) as Record<string, unknown>;
    delete fields.q;
    const earlier = Buffer.from(JSON.stringify(fields), 'utf8').toString('base64url');
    expect(list(store, { userId: 'u1', cursor: earlier }).sessions.map((s) => s.sessionId)).toEqual(['s3', 's1']);
  });
});
