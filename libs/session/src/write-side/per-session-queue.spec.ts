import fc from 'fast-check';
import { PerSessionQueue } from './per-session-queue';

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('PerSessionQueue', () => {
  it('runs the tasks of one session one at a time in arrival order, whatever their outcomes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.nat(3)), { minLength: 1, maxLength: 30 }), async (tasks) => {
        const queue = new PerSessionQueue();
        const running = new Map<string, number>();
        const started: Array<[string, number]> = [];
        await Promise.all(
          tasks.map(([session, ticks], i) =>
            queue
              .run(session, async () => {
                running.set(session, (running.get(session) ?? 0) + 1);
                expect(running.get(session)).toBe(1);
                started.push([session, i]);
                for (let t = 0; t < ticks; t++) await tick();
                running.set(session, running.get(session)! - 1);
                if (i % 5 === 4) throw new Error(`task ${i} fails`);
                return i;
              })
              .catch((e: Error) => e.message),
          ),
        );
        for (const session of ['a', 'b', 'c']) {
          const order = started.filter(([s]) => s === session).map(([, i]) => i);
          expect(order).toEqual([...order].sort((x, y) => x - y));
        }
        expect(queue.activeSessions).toBe(0);
      }),
    );
  });

  it("runs another session's task while one session's task waits", async () => {
    const queue = new PerSessionQueue();
    let release: () => void = () => undefined;
    const blocked = queue.run('a', () => new Promise<string>((resolve) => (release = () => resolve('a'))));
    const queuedBehind = queue.run('a', () => Promise.resolve('a2'));
    await expect(queue.run('b', () => Promise.resolve('b'))).resolves.toBe('b');
    release();
    await expect(Promise.all([blocked, queuedBehind])).resolves.toEqual(['a', 'a2']);
  });

  it("gives each caller its own task's outcome, and a failed task does not stop the ones queued after it", async () => {
    const queue = new PerSessionQueue();
    const first = queue.run('s', () => Promise.reject(new Error('boom')));
    const second = queue.run('s', () => Promise.resolve(2));
    await expect(first).rejects.toThrow('boom');
    await expect(second).resolves.toBe(2);
  });
});
