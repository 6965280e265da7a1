import fc from 'fast-check';
import type { WindowEntry } from '../domain/session-window';
import { ITEMS_PER_TURN } from '../event-loop-turns';
import { diffWindows } from './compaction-diff';

const entry = (id: string, revision: number, tokens: number): WindowEntry => ({
  event: { id, type: 'user', text: `text of ${id}` },
  costs: { cl100k_base: tokens, o200k_base: tokens + 1, chars: tokens * 4 },
  revision: BigInt(revision),
  anchorRevision: BigInt(revision),
  createdAt: '2026-01-01T00:00:00.000Z',
});

describe('diffWindows', () => {
  it('splits before into archived and kept, after into added and kept, and sums tokens under the estimator', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 25 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 25 }),
        async (beforeIds, afterIds) => {
          const before = beforeIds.map((n) => entry(`e${n}`, n, n * 3));
          const after = afterIds.map((n) => entry(`e${n}`, n, n * 3));
          const diff = await diffWindows(
            { sessionId: 's', compactionId: 'c', estimator: 'o200k_base', recordedAt: '2026-12-05T10:00:00.000Z' },
            { revision: 9n, entries: before },
            { revision: 12n, entries: after },
          );
          const inAfter = new Set(afterIds.map((n) => `e${n}`));
          const inBefore = new Set(beforeIds.map((n) => `e${n}`));
          expect(diff.archivedIds).toEqual(beforeIds.map((n) => `e${n}`).filter((id) => !inAfter.has(id)));
          expect(diff.addedIds).toEqual(afterIds.map((n) => `e${n}`).filter((id) => !inBefore.has(id)));
          expect(diff.before.events.filter((e) => e.change === 'kept').map((e) => e.id)).toEqual(beforeIds.map((n) => `e${n}`).filter((id) => inAfter.has(id)));
          expect(diff.before.tokens).toBe(beforeIds.reduce((sum, n) => sum + n * 3 + 1, 0));
          expect(diff.after.tokens).toBe(afterIds.reduce((sum, n) => sum + n * 3 + 1, 0));
          expect([diff.before.revision, diff.after.revision]).toEqual(['9', '12']);
        },
      ),
    );
  });

  it('gives the event loop a turn every ITEMS_PER_TURN entries of a long window (newcomer ncnoisy F1)', async () => {
    const window = Array.from({ length: 3 * ITEMS_PER_TURN }, (_, n) => entry(`e${n}`, n, 1));
    let turns = 0;
    let done = false;
    const tick = (): void => {
      turns++;
      if (!done) setImmediate(tick);
    };
    setImmediate(tick);
    const diff = await diffWindows(
      { sessionId: 's', compactionId: 'c', estimator: 'chars', recordedAt: '2026-12-05T10:00:00.000Z' },
      { revision: 1n, entries: window },
      { revision: 2n, entries: window.slice(ITEMS_PER_TURN) },
    );
    done = true;
    expect(diff.archivedIds).toHaveLength(ITEMS_PER_TURN);
    // 2 turns within `before`, 1 within `after` (none before the first item): held 3 × ITEMS_PER_TURN entries in one stretch before.
    expect(turns).toBeGreaterThanOrEqual(3);
  });
});
