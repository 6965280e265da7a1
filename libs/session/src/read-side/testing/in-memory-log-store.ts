import type { EventStore, ReadAllOptions, RecordedEvent, Subscription } from '@lib/event-store';

/**
 * Test double: an {@link EventStore} that serves a fixed list of recorded events through
 * `readAll` (with `readableHead`, what a rebuild needs), `eventAt` and `headPosition`. Other methods throw.
 */
export function inMemoryLogStore(events: readonly RecordedEvent[]): EventStore {
  const unsupported = (): never => {
    throw new Error('not supported by the in-memory log store');
  };
  return {
    async readAll(options: ReadAllOptions = {}) {
      const from = options.fromPosition ?? 0n;
      return events
        .filter((e) => e.position > from && (!options.streamPrefix || e.streamId.startsWith(options.streamPrefix)))
        .slice(0, options.maxCount ?? 4096);
    },
    eventAt: async (position) => events.find((e) => e.position === position) ?? null,
    appendToStream: unsupported,
    readStream: unsupported,
    streamRevision: unsupported,
    streamIncarnation: unsupported,
    headPosition: async () => events[events.length - 1]?.position ?? 0n,
    readableHead: async () => events[events.length - 1]?.position ?? 0n,
    subscribeToAll: (): Subscription => unsupported(),
    deleteStream: unsupported,
    close: async () => undefined,
  };
}
