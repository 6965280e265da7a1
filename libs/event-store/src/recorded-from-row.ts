import type { RecordedEvent } from './event-store.port';

/** A stored event row of a table-backed adapter, JSON kept as text, integers already bigint. */
export interface EventTableRow {
  id: string;
  type: string;
  stream: string;
  revision: bigint;
  position: bigint;
  /** JSON text. */
  data: string;
  /** JSON text, or null when the event had no metadata. */
  metadata: string | null;
}

/**
 * The port's {@link RecordedEvent} of a stored row (data and metadata parsed; `created` as the store
 * recorded it). `given`: the row's data as its appender gave it, answered instead of parsing `row.data`
 * (which is its JSON text).
 */
export function recordedFromRow(row: EventTableRow, created: Date, given?: { data: unknown }): RecordedEvent {
  return {
    id: row.id,
    type: row.type,
    data: given ? given.data : JSON.parse(row.data),
    metadata: row.metadata === null ? undefined : JSON.parse(row.metadata),
    streamId: row.stream,
    revision: row.revision,
    position: row.position,
    created,
  };
}

/** The inverse of {@link recordedFromRow} for the metadata column: its JSON text, or null when the event had none (as an append writes it). */
export function metadataText(metadata: unknown): string | null {
  return metadata === undefined ? null : (JSON.stringify(metadata) ?? null);
}
