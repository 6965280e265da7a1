import fc from 'fast-check';
import { UnstoredAnswers } from './unstored-answers';

describe('UnstoredAnswers: commands whose answer the results stream refused', () => {
  it('stays bounded while nothing reads it: 10,000 refused commands, one every 10 ms, each counted 1 s, hold at most the last second’s', () => {
    let now = 0;
    const unstored = new UnstoredAnswers(() => now);
    let most = 0;
    for (let i = 0; i < 10_000; i++) {
      now += 10;
      unstored.add(`c${i}`, 'maximum messages exceeded', 1_000);
      most = Math.max(most, unstored.held);
    }
    // Before, entries were dropped only when /health or /metrics read the count: 10,000 here.
    expect(most).toBeLessThanOrEqual(101);
  });

  it('counts the commands within their time, the latest error last; a finished command is forgotten', () => {
    let now = 1_000;
    const unstored = new UnstoredAnswers(() => now);
    expect(unstored.summary()).toEqual({ count: 0, lastError: null });
    unstored.add('a', 'stream full', 500);
    unstored.add('b', 'no responders', 2_000);
    unstored.add('a', 'timeout', 500);
    expect(unstored.summary()).toEqual({ count: 2, lastError: 'timeout' });
    now += 501;
    expect(unstored.summary()).toEqual({ count: 1, lastError: 'no responders' });
    unstored.forget('b');
    expect(unstored.summary()).toEqual({ count: 0, lastError: null });
  });

  it('property: after every addition it holds exactly the commands still within their time (whatever is read or not)', () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('add' as const),
        id: fc.integer({ min: 0, max: 30 }),
        forMs: fc.integer({ min: 0, max: 200 }),
        advance: fc.integer({ min: 0, max: 100 }),
      }),
      fc.record({ kind: fc.constant('forget' as const), id: fc.integer({ min: 0, max: 30 }) }),
      fc.record({ kind: fc.constant('read' as const), advance: fc.integer({ min: 0, max: 100 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        let now = 0;
        const unstored = new UnstoredAnswers(() => now);
        const model = new Map<number, number>();
        const live = () => [...model.values()].filter((until) => until >= now).length;
        for (const s of steps) {
          if (s.kind === 'forget') {
            unstored.forget(`c${s.id}`);
            model.delete(s.id);
            continue;
          }
          now += s.advance;
          if (s.kind === 'read') {
            expect(unstored.summary().count).toBe(live());
            continue;
          }
          for (const [id, until] of model) if (until < now) model.delete(id);
          unstored.add(`c${s.id}`, 'refused', s.forMs);
          model.set(s.id, now + s.forMs);
          expect(unstored.held).toBe(model.size);
        }
      }),
      { numRuns: 200 },
    );
  });
});
