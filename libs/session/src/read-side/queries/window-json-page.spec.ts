/**
 * The window answer's bytes (`getWindowJson`) are built by SQLite a page at a time; they must be
 * what `JSON.stringify` makes of the answer DESIGN §5 describes, built from the parsed window
 * (`getWindow`): each active event in window order with `tokens` (its cost under the estimator,
 * left out when its costs lack it), `revision` (a decimal string), `createdAt` and `compactionId`
 * (a summary's), and `tokens` in the head as their sum. For any content (lone surrogates, quotes,
 * control characters, astral characters), any costs, any compaction, any page bounds, events built
 * by SQLite or (larger than `aloneBytes`) spliced as bytes; and when
 * SQLite concatenates a page's rows out of order, the page is read again sorted.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { CONVERSATION_EVENT, type EstimatorName, type EventCosts } from '../../events/session-stream-events';
import { ReadModelStore } from '../read-model-store';
import { SessionProjector } from '../session-projector';
import { RecordedSessionLog, user, assistant } from '../testing/recorded-session-log';
import { getWindowJson } from './window-json-query';
import { getWindow } from './window-query';

const ESTIMATORS: EstimatorName[] = ['cl100k_base', 'o200k_base', 'chars'];

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function fileStore(): ReadModelStore {
  const dir = mkdtempSync(join(tmpdir(), 'window-json-page-'));
  dirs.push(dir);
  return ReadModelStore.open(join(dir, 'read-models.sqlite'));
}

/** The window answer in format `events`, as `JSON.stringify` writes it, from the parsed window (the oracle). */
function expectedJson(store: ReadModelStore, sessionId: string, estimator: EstimatorName): string {
  const window = getWindow(store, 'default', sessionId)!;
  let tokens = 0;
  for (const e of window.entries) tokens += e.costs[estimator];
  return JSON.stringify({
    sessionId,
    revision: window.revision.toString(),
    tokens,
    estimator,
    events: window.entries.map((e) => ({
      ...e.event,
      tokens: e.costs[estimator],
      revision: e.revision.toString(),
      createdAt: e.createdAt,
      ...(e.compactionId ? { compactionId: e.compactionId } : {}),
    })),
  });
}

/** One event of a random session: its text, whether an assistant said it, and its costs (some lacking an estimator). */
const eventArb = fc.record({
  text: fc.oneof(fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ unit: 'grapheme', maxLength: 40 }), fc.constant('"\\\u0000\u2028 }')),
  byAssistant: fc.boolean(),
  costs: fc.option(fc.record({ cl100k_base: fc.nat(5000), o200k_base: fc.nat(5000), chars: fc.nat(50_000) }, { requiredKeys: ['chars'] }), { nil: undefined }),
});

/** Records session `id` on `log`: the events, then (when `archived` > 0) a compaction archiving the first `archived` with a summary before the next. */
function recordSession(
  log: RecordedSessionLog,
  id: string,
  events: Array<{ text: string; byAssistant: boolean; costs?: Partial<EventCosts> }>,
  archived: number,
): void {
  events.forEach((e, i) => {
    const event = e.byAssistant ? assistant(`e${i}`, e.text) : user(`e${i}`, e.text);
    if (e.costs) log.record(id, CONVERSATION_EVENT, { event, costs: e.costs, createdAt: `2024-05-01T00:00:${String(i % 60).padStart(2, '0')}.000Z` });
    else log.append(id, event);
  });
  const cut = Math.min(archived, events.length - 1);
  if (cut > 0) {
    const ids = events.slice(0, cut).map((_, i) => `e${i}`);
    log.archive(id, 'c1', ids);
    log.summary(id, 'c1', `e${cut}`, 'what came before "e0" \u2028', { coveredIds: ids });
    log.completed(id, 'c1', [`e${cut}`]);
  }
}

describe('getWindowJson: the window answer built by SQLite', () => {
  it('is the bytes of JSON.stringify of the answer from the parsed window, for any events, costs, compaction and page bounds (property)', async () => {
    const store = fileStore();
    const projector = new SessionProjector(store);
    const log = new RecordedSessionLog();
    let session = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(eventArb, { minLength: 1, maxLength: 30 }),
        fc.nat(10),
        fc.constantFrom(...ESTIMATORS),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 2000 }),
        fc.option(fc.integer({ min: 1, max: 400 }), { nil: undefined }),
        async (events, archived, estimator, rowsPerPage, pageBytes, aloneBytes) => {
          const id = `s${session++}`;
          const before = log.events.length;
          recordSession(log, id, events, archived);
          projector.applyBatch(log.events.slice(before));
          // aloneBytes: events above it are read as bytes and spliced (default 64 KiB: none here), the others built by SQLite.
          const bytes = (await getWindowJson(store, 'default', id, estimator, { rowsPerPage, pageBytes, aloneBytes }))!;
          expect(bytes.toString('utf8')).toBe(expectedJson(store, id, estimator));
        },
      ),
      { numRuns: 80, seed: 20261205 },
    );
    store.close();
  });

  it('reads a page again sorted when SQLite concatenated its rows out of order (keys not 0,1,2,…)', async () => {
    const store = fileStore();
    const log = new RecordedSessionLog();
    for (let i = 0; i < 12; i++) log.append('s', user(`u${i}`, `turn ${i}`));
    new SessionProjector(store).applyBatch(log.events);
    const expected = expectedJson(store, 's', 'chars');
    const proto = Object.getPrototypeOf(store.db.prepare('SELECT 1')) as { get: (...args: unknown[]) => unknown };
    const get = proto.get;
    const sources: string[] = [];
    const spy = jest.spyOn(proto, 'get').mockImplementation(function (this: { source: string }, ...args: unknown[]) {
      const row = get.apply(this, args) as { keys?: string } | undefined;
      if (!row || row.keys === undefined) return row;
      sources.push(this.source);
      // The statement without ORDER BY answers its rows reversed, as an unsorted concatenation could.
      if (this.source.includes('ORDER BY')) return row;
      return { ...row, json: Buffer.from('"out of order"'), keys: row.keys.split(',').reverse().join(',') };
    });
    try {
      const bytes = (await getWindowJson(store, 'default', 's', 'chars', { rowsPerPage: 5 }))!;
      expect(bytes.toString('utf8')).toBe(expected);
      // Three pages (5, 5, 2): each read as visited, then again sorted, its keys having come out of order.
      expect(sources.filter((s) => s.includes('ORDER BY j.key'))).toHaveLength(3);
    } finally {
      spy.mockRestore();
    }
    store.close();
  });
});
