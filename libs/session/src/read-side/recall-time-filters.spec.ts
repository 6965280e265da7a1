/**
 * Recall's time filters and first mention (newcomer nctime F2, F6): `from`/`to` compare an event's
 * `createdAt` to the nanosecond (both were cut to the millisecond: an event at `.123456789Z` was
 * left out by `to=.1235Z` and found by `from=.1239Z`), and `firstMention` marks the session's first
 * mention whatever the other filters (a time range, a type, `archived`: the earliest hit inside
 * them was marked). Property: a time filter keeps exactly the events whose instant lies in it.
 */
import fc from 'fast-check';
import { searchRecall, type RecallHit } from './queries/recall-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, system, user } from './testing/recorded-session-log';

const ids = (items: RecallHit[]) => items.map((h) => h.eventId).sort();

describe('recall from/to at the precision sent', () => {
  const log = new RecordedSessionLog();
  log.append('p1', user('u1', 'pangolin sighting'), { createdAt: '2026-01-01T00:00:00.123456789Z' });
  log.append('p1', user('u2', 'pangolin again'), { createdAt: '2026-01-01T05:30:00.1234+05:30' });
  const store = projectedReadModels(log);
  const search = (filters: { from?: string; to?: string }) => ids(searchRecall(store, { tenantId: 'default', q: 'pangolin', ...filters }).items);

  it('keeps an event before `to` and at or after `from` when they differ past the millisecond', () => {
    expect(search({ from: '2026-01-01T00:00:00.1234Z', to: '2026-01-01T00:00:00.1235Z' })).toEqual(['u1', 'u2']);
    expect(search({ from: '2026-01-01T00:00:00.12341Z', to: '2026-01-01T00:00:00.1235Z' })).toEqual(['u1']);
    expect(search({ to: '2026-01-01T00:00:00.1235Z' })).toEqual(['u1', 'u2']);
    expect(search({ to: '2026-01-01T00:00:00.12345Z' })).toEqual(['u2']);
    expect(search({ from: '2026-01-01T00:00:00.1239Z' })).toEqual([]);
    expect(search({ from: '2026-01-01T00:00:00.123456789Z' })).toEqual(['u1']);
    expect(search({ from: '2026-01-01T00:00:00.12345678Z' })).toEqual(['u1']);
    expect(search({ from: '2026-01-01T00:00:00.12345679Z' })).toEqual([]);
  });

  it('answers createdAt in UTC with milliseconds, whatever digits and offset were sent', () => {
    const hits = searchRecall(store, { tenantId: 'default', q: 'pangolin' }).items;
    expect(Object.fromEntries(hits.map((h) => [h.eventId, h.createdAt]))).toEqual({
      u1: new Date('2026-01-01T00:00:00.123456789Z').toISOString(),
      u2: new Date('2026-01-01T05:30:00.1234+05:30').toISOString(),
    });
  });

  it('property: from/to keep exactly the events whose instant (in nanoseconds) lies in [from, to)', () => {
    // Instants as nanoseconds past a base, written with 1 to 9 fraction digits and an offset.
    const base = Date.parse('2026-03-01T00:00:00Z');
    const instant = fc.record({
      ns: fc.bigInt({ min: 0n, max: 5_000_000n }),
      digits: fc.integer({ min: 1, max: 9 }),
      offset: fc.integer({ min: -720, max: 840 }),
    });
    const write = ({ ns, digits, offset }: { ns: bigint; digits: number; offset: number }): { text: string; ns: bigint } => {
      const kept = (ns / 10n ** BigInt(9 - digits)) * 10n ** BigInt(9 - digits);
      const ms = base + Number(kept / 1_000_000n);
      const local = new Date(ms + offset * 60_000).toISOString().slice(0, 19);
      const fraction = (kept % 1_000_000_000n).toString().padStart(9, '0').slice(0, digits);
      const sign = offset < 0 ? '-' : '+';
      const zone =
        offset === 0 ? 'Z' : `${sign}${String(Math.floor(Math.abs(offset) / 60)).padStart(2, '0')}:${String(Math.abs(offset) % 60).padStart(2, '0')}`;
      return { text: `${local}.${fraction}${zone}`, ns: kept };
    };
    fc.assert(
      fc.property(fc.array(instant, { minLength: 1, maxLength: 6 }), instant, instant, (events, a, b) => {
        const written = events.map(write);
        const log = new RecordedSessionLog();
        written.forEach((e, i) => log.append('prop', user(`e${i}`, 'okapi'), { createdAt: e.text }));
        const store = projectedReadModels(log);
        const [from, to] = [write(a), write(b)];
        if (from.ns >= to.ns) return;
        const found = ids(searchRecall(store, { tenantId: 'default', q: 'okapi', from: from.text, to: to.text }).items);
        const expected = written.flatMap((e, i) => (e.ns >= from.ns && e.ns < to.ns ? [`e${i}`] : [])).sort();
        expect(found).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });
});

describe('firstMention with filters', () => {
  const log = new RecordedSessionLog();
  log.append('f6', system('sys', 'ZQ7781 is a code'), { createdAt: '2025-12-31T09:00:00Z' });
  log.append('f6', user('u1', 'my locker code is ZQ7781'), { createdAt: '2026-01-01T09:00:00Z' });
  log.append('f6', user('a1', 'noted'));
  log.append('f6', user('u2', 'repeat ZQ7781 please'), { createdAt: '2026-02-01T09:00:00Z' });
  log.append('f6', user('u3', 'ZQ7781 once more'), { createdAt: '2026-03-01T09:00:00Z' });
  const store = projectedReadModels(log);
  const marked = (q: string, filters: Record<string, unknown>) =>
    searchRecall(store, { tenantId: 'default', q, sessionId: 'f6', ...filters })
      .items.filter((h) => h.firstMention)
      .map((h) => h.eventId);

  it('marks the session’s first mention when the filters keep it, and no hit when they leave it out', () => {
    expect(marked('ZQ7781', {})).toEqual(['u1']);
    expect(marked('ZQ7781', { from: '2026-01-15T00:00:00Z', to: '2026-04-01T00:00:00Z' })).toEqual([]);
    expect(marked('ZQ7781', { to: '2026-01-15T00:00:00Z' })).toEqual(['u1']);
    expect(marked('ZQ7781', { from: '2026-01-01T09:00:00Z' })).toEqual(['u1']);
    expect(marked('ZQ7781', { type: 'user' })).toEqual(['u1']);
  });

  it('leaves the hits inside the range in their order when the first mention is outside it', () => {
    const page = searchRecall(store, { tenantId: 'default', q: 'ZQ7781', sessionId: 'f6', from: '2026-01-15T00:00:00Z' });
    expect(ids(page.items)).toEqual(['u2', 'u3']);
  });

  it('does the same for a substring query (oldest order)', () => {
    const jp = new RecordedSessionLog();
    jp.append('jp', user('e1', '今日は鶴を見た'), { createdAt: '2026-01-01T00:00:00Z' });
    jp.append('jp', user('e2', '明日も鶴を見る'), { createdAt: '2026-02-01T00:00:00Z' });
    const jpStore = projectedReadModels(jp);
    const first = (filters: Record<string, unknown>) => {
      const page = searchRecall(jpStore, { tenantId: 'default', q: '鶴', sessionId: 'jp', ...filters });
      expect(page.order).toBe('oldest');
      return page.items.map((h) => [h.eventId, h.firstMention === true]);
    };
    expect(first({})).toEqual([
      ['e1', true],
      ['e2', false],
    ]);
    expect(first({ from: '2026-01-15T00:00:00Z' })).toEqual([['e2', false]]);
  });
});
