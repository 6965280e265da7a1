import type { EventStore } from './event-store.port';

/**
 * `store` with the methods of `overrides` in place of its own (a wrapper that observes or records
 * some calls); every other method is `store`'s own, called with every argument as given (an option
 * added to a method later is never dropped by a wrapper). The returned object holds no state.
 */
export function storeWith(store: EventStore, overrides: Partial<EventStore>): EventStore {
  return {
    appendToStream: (...args) => store.appendToStream(...args),
    readStream: (...args) => store.readStream(...args),
    readAll: (...args) => store.readAll(...args),
    eventAt: (...args) => store.eventAt(...args),
    streamRevision: (...args) => store.streamRevision(...args),
    streamIncarnation: (...args) => store.streamIncarnation(...args),
    headPosition: (...args) => store.headPosition(...args),
    readableHead: (...args) => store.readableHead(...args),
    subscribeToAll: (...args) => store.subscribeToAll(...args),
    deleteStream: (...args) => store.deleteStream(...args),
    close: (...args) => store.close(...args),
    ...(store.probeWrite ? { probeWrite: (...args: Parameters<NonNullable<EventStore['probeWrite']>>) => store.probeWrite!(...args) } : {}),
    ...(store.poolConnections ? { poolConnections: (...args: Parameters<NonNullable<EventStore['poolConnections']>>) => store.poolConnections!(...args) } : {}),
    ...(store.logCopy ? { logCopy: (...args: Parameters<NonNullable<EventStore['logCopy']>>) => store.logCopy!(...args) } : {}),
    ...(store.tryClaim ? { tryClaim: (...args: Parameters<NonNullable<EventStore['tryClaim']>>) => store.tryClaim!(...args) } : {}),
    ...(store.forgetClaim ? { forgetClaim: (...args: Parameters<NonNullable<EventStore['forgetClaim']>>) => store.forgetClaim!(...args) } : {}),
    ...overrides,
  };
}
