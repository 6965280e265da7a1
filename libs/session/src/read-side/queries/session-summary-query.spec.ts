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
