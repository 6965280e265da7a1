/**
 * The session's life (its stream's incarnation) a write request arrived in: rule 3 of
 * `checkWriteAdmission` compares it with the life its write would land in. Transports read it as
 * the request arrives ({@link readSessionLife}, kept in the request's `WriteAdmission`); a handler
 * takes that read, or reads the life itself first thing ({@link lifeAtArrival}). One read per write
 * request either way.
 */
import type { EventStore } from '@lib/event-store';
import { sessionKey, sessionStream } from '../events/session-stream-events';
import { admissionOf } from '../decider/write-admission';

/**
 * Reads the life session `sessionId` of tenant `tenantId` is in now: its stream's incarnation
 * (`EventStore.streamIncarnation`; 0n for a session never erased). A rejection is the store's
 * error (e.g. `StoreUnavailableError`); a transport that reads ahead of the handler hands the
 * promise on and lets the handler raise it.
 */
export function readSessionLife(store: EventStore, tenantId: string, sessionId: string): Promise<bigint> {
  return store.streamIncarnation(sessionStream(sessionKey(tenantId, sessionId)));
}

/**
 * The life `command` (a write command of session `tenantId`/`sessionId`) arrived in: its
 * transport's read (`WriteAdmission.lifeAtArrival`), else read from `store` now. Call first thing
 * in a handler, before any queue or wait. @throws (rejects with) the store's error.
 */
export function lifeAtArrival(command: object, store: EventStore, tenantId: string, sessionId: string): Promise<bigint> {
  return admissionOf(command)?.lifeAtArrival ?? readSessionLife(store, tenantId, sessionId);
}
