import type { RecordedEvent as KurrentRecordedEvent } from '@kurrent/kurrentdb-client';
import type { RecordedEvent } from '../event-store.port';

/**
 * A KurrentDB recorded event as a port {@link RecordedEvent}: `position` is the bigint commit
 * position in the transaction log (a byte offset: increasing, not contiguous; -1n if the server
 * did not report it, which only servers older than 22.6 do), `revision` the bigint stream revision.
 * JSON data and metadata come parsed; absent metadata is `undefined`.
 */
export function toRecordedEvent(event: KurrentRecordedEvent): RecordedEvent {
  return {
    id: event.id,
    type: event.type,
    data: event.data,
    metadata: event.metadata,
    streamId: event.streamId,
    revision: event.revision,
    position: event.position?.commit ?? -1n,
    created: event.created,
  };
}
