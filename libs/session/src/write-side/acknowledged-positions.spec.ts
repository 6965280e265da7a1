/**
 * The store the session module's handlers write through records acknowledged positions and
 * otherwise passes every call on unchanged: all arguments, options included (an erasure's
 * `deleteStream(stream, { expectedRevision })` lost its option here, and two erasures at once
 * then deleted an append acknowledged after the first).
 */
import fc from 'fast-check';
import type { EventStore } from '@lib/event-store';
import { AcknowledgedPositions, recordingAcknowledgedPositions } from './acknowledged-positions';

describe('recordingAcknowledgedPositions', () => {
  it('passes every argument of every method on to the store, and records the position of each acknowledged append', async () => {
    const calls: Array<[string, unknown[]]> = [];
    const answers: Record<string, unknown> = { appendToStream: { nextExpectedRevision: 3n, position: 42n }, readStream: [] };
    const store = new Proxy({} as EventStore, {
      get:
        (_target, method: string) =>
        (...args: unknown[]) => {
          calls.push([method, args]);
          return method === 'subscribeToAll' ? {} : Promise.resolve(answers[method]);
        },
    });
    const positions = new AcknowledgedPositions();
    const wrapped = recordingAcknowledgedPositions(store, positions);
    const methods = Object.keys(wrapped) as Array<keyof EventStore>;
    expect(methods.sort()).toEqual([
      'appendToStream',
      'close',
      'deleteStream',
      'eventAt',
      'forgetClaim',
      'headPosition',
      'logCopy',
      'poolConnections',
      'probeWrite',
      'readAll',
      'readStream',
      'readableHead',
      'streamIncarnation',
      'streamRevision',
      'subscribeToAll',
      'tryClaim',
    ]);
    for (const method of methods) {
      const args = [`${method}-first`, { option: method }, [method]];
      await (wrapped[method] as (...a: unknown[]) => unknown)(...args);
      expect(calls.at(-1)).toEqual([method, args]);
    }
    expect(positions.last()).toBe(42n);
  });

  // Newcomer: a replica answered a compaction another replica had recorded (or a policy already
  // set) from the log, recorded nothing, and a read right after did not show what it answered.
  it('records the position of every event read from a stream: answers decided on or read from the log count too', async () => {
    const read = [{ position: 50n }, { position: 57n }];
    const store = { readStream: async () => read } as unknown as EventStore;
    const positions = new AcknowledgedPositions();
    positions.acknowledged(9n);
    expect(await recordingAcknowledgedPositions(store, positions).readStream('session-x', { direction: 'backwards' })).toBe(read);
    expect(positions.last()).toBe(57n);
  });
});

describe('AcknowledgedPositions.lastWithin (what a read waits for while the read models cannot be written)', () => {
  it('scopes a session stream to its session and tenant, an erasure stream to every read of its tenant, any other position to every read', () => {
    const positions = new AcknowledgedPositions();
    positions.acknowledged(5n, 'session-a.s1');
    positions.acknowledged(9n, 'session-a.s2');
    positions.acknowledged(7n, 'session-b.s1');
    expect([
      positions.lastWithin({ tenantId: 'a', sessionId: 's1' }),
      positions.lastWithin({ tenantId: 'a', sessionId: 's2' }),
      positions.lastWithin({ tenantId: 'b', sessionId: 's1' }),
      positions.lastWithin({ tenantId: 'a', sessionId: 'none' }),
      positions.lastWithin({ tenantId: 'a' }),
      positions.lastWithin({ tenantId: 'b' }),
      positions.lastWithin({ tenantId: 'c' }),
    ]).toEqual([5n, 9n, 7n, 0n, 9n, 7n, 0n]);
    positions.acknowledged(11n, 'erasure-b');
    expect([
      positions.lastWithin({ tenantId: 'b', sessionId: 'other' }),
      positions.lastWithin({ tenantId: 'b' }),
      positions.lastWithin({ tenantId: 'a', sessionId: 's1' }),
    ]).toEqual([11n, 11n, 5n]);
    positions.acknowledged(12n); // a log head read for a 404: of no one scope
    expect([positions.lastWithin({ tenantId: 'a', sessionId: 's1' }), positions.lastWithin({ tenantId: 'c' }), positions.last()]).toEqual([12n, 12n, 12n]);
  });

  it('records the stream of every append and read', async () => {
    const store = {
      appendToStream: async () => ({ nextExpectedRevision: 0n, position: 30n }),
      readStream: async () => [{ position: 40n }, { position: 35n }],
    } as unknown as EventStore;
    const positions = new AcknowledgedPositions();
    const wrapped = recordingAcknowledgedPositions(store, positions);
    await wrapped.appendToStream('session-t.appended', []);
    await wrapped.readStream('session-t.read', {});
    expect([positions.lastWithin({ tenantId: 't', sessionId: 'appended' }), positions.lastWithin({ tenantId: 't', sessionId: 'read' })]).toEqual([30n, 40n]);
  });

  it('forgets the scopes only once the read models applied every acknowledged position', () => {
    const positions = new AcknowledgedPositions();
    positions.acknowledged(5n, 'session-a.s1');
    positions.acknowledged(9n, 'session-a.s2');
    positions.projectedUpTo(8n);
    expect(positions.lastWithin({ tenantId: 'a', sessionId: 's2' })).toBe(9n);
    positions.projectedUpTo(9n);
    expect(positions.lastWithin({ tenantId: 'a', sessionId: 's2' })).toBe(0n);
    expect(positions.last()).toBe(9n);
  });

  // Invariant: a read never waits for less than the highest position acknowledged in its scope
  // (whatever was folded away to bound the memory), nor for more than every acknowledged write.
  it('never answers less than the highest position acknowledged in the scope, nor more than the highest overall', () => {
    const stream = fc.oneof(
      fc.tuple(fc.constantFrom('a', 'b', 'c'), fc.constantFrom('s1', 's2', 's3', 's4')).map(([t, s]) => `session-${t}.${s}`),
      fc.constantFrom('erasure-a', 'erasure-b', 'other-stream'),
      fc.constant(undefined),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(fc.tuple(fc.bigInt({ min: 1n, max: 1000n }), stream), { maxLength: 40 }), (limit, writes) => {
        const positions = new AcknowledgedPositions(limit);
        for (const [position, s] of writes) positions.acknowledged(position, s);
        const highest = writes.reduce((m, [p]) => (p > m ? p : m), 0n);
        const within = (match: (s: string | undefined) => boolean) => writes.filter(([, s]) => match(s)).reduce((m, [p]) => (p > m ? p : m), 0n);
        const unscoped = (s: string | undefined) => s === undefined || s === 'other-stream';
        for (const tenantId of ['a', 'b', 'c']) {
          const tenant = positions.lastWithin({ tenantId });
          expect(tenant).toBeGreaterThanOrEqual(within((s) => unscoped(s) || s === `erasure-${tenantId}` || !!s?.startsWith(`session-${tenantId}.`)));
          expect(tenant).toBeLessThanOrEqual(highest);
          for (const sessionId of ['s1', 's2', 's3', 's4']) {
            const session = positions.lastWithin({ tenantId, sessionId });
            expect(session).toBeGreaterThanOrEqual(within((s) => unscoped(s) || s === `erasure-${tenantId}` || s === `session-${tenantId}.${sessionId}`));
            expect(session).toBeLessThanOrEqual(highest);
          }
        }
        expect(positions.last()).toBe(highest);
      }),
    );
  });
});
