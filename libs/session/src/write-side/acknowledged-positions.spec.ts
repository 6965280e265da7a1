/**
 * The store the session module's handlers write through records acknowledged positions and
 * otherwise passes every call on unchanged: all arguments, options included (an erasure's
 * `deleteStream(stream, { expectedRevision })` lost its option here, and two erasures at once
 * then deleted an append acknowledged after the first).
 */
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
      'headPosition',
      'poolConnections',
      'probeWrite',
      'readAll',
      'readStream',
      'readableHead',
      'streamIncarnation',
      'streamRevision',
      'subscribeToAll',
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
