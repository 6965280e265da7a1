/**
 * The projected window is read in pages of one snapshot (`readWindowRows`, newcomer ncnoisy F1):
 * no turn of the event loop reads more than a page of window rows (a 30,000-event window was one
 * statement of 300–600 ms that held `/health`), the answers are the same as one read's (entries
 * and bytes), and projector commits between pages (appends, a compaction with a summary) never mix
 * into a read that started before them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RecordedEvent } from '@lib/event-store';
import { foldSessionWindow, orderedWindow } from '../../domain/session-window';
import { ReadModelStore } from '../read-model-store';
import { SessionProjector } from '../session-projector';
import { assistant, RecordedSessionLog, user } from '../testing/recorded-session-log';
import { getWindowJson } from './window-json-query';
import { getWindow, getWindowInTurns } from './window-query';
import { readWindowRows, WINDOW_ROWS_PER_PAGE } from './window-rows';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

/** A read-model store in a file of a fresh directory (a second connection can see it), and its projector. */
function fileProjector(): SessionProjector {
  const dir = mkdtempSync(join(tmpdir(), 'window-rows-'));
  dirs.push(dir);
  return new SessionProjector(ReadModelStore.open(join(dir, 'read-models.sqlite')));
}

/** `n` turns of session `s` (user, assistant), ids `u<i>`/`a<i>`, then a compaction archiving the first two turns with a summary before `u2`. */
function longLog(n: number): RecordedSessionLog {
  const log = new RecordedSessionLog();
  for (let i = 0; i < n; i++) {
    log.append('s', user(`u${i}`, `turn ${i} "quoted" 😀 ${'x'.repeat(i % 7)}`));
    log.append('s', assistant(`a${i}`, `answer ${i}`));
  }
  log.archive('s', 'c1', ['u0', 'a0', 'u1', 'a1']);
  log.summary('s', 'c1', 'u2', 'they spoke of turns 0 and 1', { coveredIds: ['u0', 'a0', 'u1', 'a1'] });
  log.completed('s', 'c1', ['u2']);
  return log;
}

function project(projector: SessionProjector, events: readonly RecordedEvent[]): void {
  for (let i = 0; i < events.length; i += 500) projector.applyBatch(events.slice(i, i + 500));
}

/**
 * Counts the window rows (statements reading `event_json` of `window_entries`: rows handed out by
 * `all`, or the rowids a `get` of the window answer's page joins) read between two turns of the
 * event loop while `run` runs; resolves to the most in one turn and the number of turns.
 */
async function windowRowsPerTurn<T>(store: ReadModelStore, run: () => Promise<T>): Promise<{ result: T; mostInOneTurn: number; turns: number }> {
  const proto = Object.getPrototypeOf(store.db.prepare('SELECT 1')) as { all: (...args: unknown[]) => unknown[]; get: (...args: unknown[]) => unknown };
  const { all, get } = proto;
  let inTurn = 0;
  let mostInOneTurn = 0;
  let turns = 0;
  const readsRows = (source: string): boolean => source.includes('window_entries') && source.includes('event_json');
  const spy = jest.spyOn(proto, 'all').mockImplementation(function (this: { source: string }, ...args: unknown[]) {
    const rows = all.apply(this, args);
    if (readsRows(this.source)) inTurn += rows.length;
    return rows;
  });
  const pageSpy = jest.spyOn(proto, 'get').mockImplementation(function (this: { source: string }, ...args: unknown[]) {
    const row = get.apply(this, args);
    const rowids = (args[0] as { rowids?: string } | undefined)?.rowids;
    if (readsRows(this.source) && typeof rowids === 'string') inTurn += (JSON.parse(rowids) as unknown[]).length;
    return row;
  });
  let done = false;
  const tick = (): void => {
    mostInOneTurn = Math.max(mostInOneTurn, inTurn);
    inTurn = 0;
    turns++;
    if (!done) setImmediate(tick);
  };
  setImmediate(tick);
  try {
    const result = await run();
    return { result, mostInOneTurn: Math.max(mostInOneTurn, inTurn), turns };
  } finally {
    done = true;
    spy.mockRestore();
    pageSpy.mockRestore();
  }
}

describe('readWindowRows: the projected window in pages of one snapshot', () => {
  const log = longLog(1500); // 3,000 events: 2,997 window entries with the summary
  let projector: SessionProjector;
  let reference: SessionProjector;

  beforeAll(() => {
    projector = fileProjector();
    project(projector, log.events);
    reference = new SessionProjector(ReadModelStore.open(':memory:'));
    project(reference, log.events);
  });
  afterAll(() => {
    projector.store.close();
    reference.store.close();
  });

  it('reads at most a page of window rows per turn of the event loop, in every format', async () => {
    const events = await windowRowsPerTurn(projector.store, () => getWindowJson(projector.store, 'default', 's', 'chars'));
    expect(events.result).not.toBeNull();
    expect(events.mostInOneTurn).toBeLessThanOrEqual(WINDOW_ROWS_PER_PAGE);
    const parsed = await windowRowsPerTurn(projector.store, () => getWindowInTurns(projector.store, 'default', 's'));
    expect(parsed.result!.entries).toHaveLength(2997);
    expect(parsed.mostInOneTurn).toBeLessThanOrEqual(WINDOW_ROWS_PER_PAGE);
    // The page size is the bound: 100 rows a page, 30 pages.
    const small = await windowRowsPerTurn(projector.store, () => getWindowJson(projector.store, 'default', 's', 'chars', { rowsPerPage: 100 }));
    expect(small.mostInOneTurn).toBeGreaterThan(0);
    expect(small.mostInOneTurn).toBeLessThanOrEqual(100);
    expect(small.turns).toBeGreaterThanOrEqual(29);
  });

  it('ends a page at pageBytes of stored events too; an event larger than that is a page alone', async () => {
    const own = fileProjector();
    const big = new RecordedSessionLog();
    for (let i = 0; i < 30; i++) big.append('s', user(`u${i}`, 'x'.repeat(i === 10 ? 5000 : 100)));
    project(own, big.events);
    const whole = (await getWindowJson(own.store, 'default', 's', 'cl100k_base'))!;
    // ~150 bytes of stored JSON an event: 1,000 bytes hold 6; the 5,000-character one is alone.
    const pages: number[] = [];
    const visited = await readWindowRows(own.store, 'default', 's', (rows) => void pages.push(rows.length), { pageBytes: 1000 });
    expect(visited).not.toBeNull();
    expect(pages.reduce((a, b) => a + b, 0)).toBe(30);
    expect(Math.max(...pages)).toBeLessThanOrEqual(7);
    expect(pages).toContain(1);
    const bounded = await windowRowsPerTurn(own.store, () => getWindowJson(own.store, 'default', 's', 'cl100k_base', { pageBytes: 1000 }));
    expect(bounded.result!.equals(whole)).toBe(true);
    expect(bounded.mostInOneTurn).toBeLessThanOrEqual(7);
    own.store.close();
  });

  it('answers what one read answers, whatever the page size (entries in window order, the same bytes)', async () => {
    const fold = orderedWindow(foldSessionWindow(log.ofSession('s')));
    expect(getWindow(reference.store, 'default', 's')!.entries).toEqual(fold);
    const bytes = (await getWindowJson(reference.store, 'default', 's', 'cl100k_base'))!;
    expect(JSON.parse(bytes.toString('utf8')).events[0]).toMatchObject({ id: 'summary-c1', type: 'summary', compactionId: 'c1' });
    for (const rowsPerPage of [1, 7, 1000, 5000]) {
      expect((await getWindowInTurns(projector.store, 'default', 's', { rowsPerPage }))!.entries).toEqual(fold);
      expect((await getWindowJson(projector.store, 'default', 's', 'cl100k_base', { rowsPerPage }))!.equals(bytes)).toBe(true);
    }
    expect(getWindow(projector.store, 'default', 's')!.entries).toEqual(fold);
    expect(await getWindowInTurns(projector.store, 'default', 'nobody')).toBeNull();
    expect(await getWindowJson(projector.store, 'other-tenant', 's', 'chars')).toBeNull();
  });

  it('is not mixed with what the projector commits between its pages (appends, a compaction with a summary)', async () => {
    const mixed = fileProjector();
    const later = longLog(1500);
    project(mixed, later.events);
    const before = (await getWindowJson(mixed.store, 'default', 's', 'chars'))!;
    const beforeEntries = (await getWindowInTurns(mixed.store, 'default', 's'))!;
    // What the projector commits while the reads run: a compaction archiving the next turns with a new summary, then more turns.
    const rest = later.events.length;
    later.archive('s', 'c2', ['summary-c1', 'u2', 'a2', 'u3', 'a3']);
    later.summary('s', 'c2', 'u4', 'a newer summary');
    later.completed('s', 'c2', ['u4']);
    for (let i = 1500; i < 1600; i++) later.append('s', user(`u${i}`, `later turn ${i}`));
    const writes = later.events.slice(rest);
    // Interleave: one projector batch of 2 events at each turn of the event loop until the reads end.
    let applied = 0;
    let reading = true;
    const writeEachTurn = (): void => {
      if (!reading || applied >= writes.length) return;
      mixed.applyBatch(writes.slice(applied, applied + 2));
      applied += 2;
      setImmediate(writeEachTurn);
    };
    setImmediate(writeEachTurn);
    const [bytes, entries] = await Promise.all([
      getWindowJson(mixed.store, 'default', 's', 'chars', { rowsPerPage: 50 }),
      getWindowInTurns(mixed.store, 'default', 's', { rowsPerPage: 50 }),
    ]);
    reading = false;
    expect(applied).toBeGreaterThan(10); // the writes did land between pages
    expect(bytes!.equals(before)).toBe(true);
    expect(entries).toEqual(beforeEntries);
    // Once they are committed, a read sees them.
    for (; applied < writes.length; applied += 2) mixed.applyBatch(writes.slice(applied, applied + 2));
    const after = (await getWindowInTurns(mixed.store, 'default', 's'))!;
    expect(after.entries[0].event.id).toBe('summary-c2');
    expect(after.entries.at(-1)!.event.id).toBe('u1599');
    expect(after.entries).toEqual(orderedWindow(foldSessionWindow(later.ofSession('s'))));
    mixed.store.close();
  });

  it('keeps a few read-only connections for later reads and closes them with the store', async () => {
    const own = fileProjector();
    project(own, log.events.slice(0, 100));
    const reads = await Promise.all([1, 2, 3, 4].map(() => getWindowInTurns(own.store, 'default', 's', { rowsPerPage: 10 })));
    expect(reads.every((r) => r!.entries.length === 100)).toBe(true);
    own.store.close();
    await expect(getWindowInTurns(own.store, 'default', 's')).rejects.toThrow(/not open/);
  });
});
