import { isUuid } from './deterministic-id';
import { DuplicateEventIdError } from './errors';
import { jsonText } from './known-json';
import type { EventData, ExpectedRevision } from './event-store.port';

/** An event ready to write: id lowercased, data and metadata serialised to JSON text. */
export interface SerializedEvent {
  id: string;
  type: string;
  data: string;
  /** JSON text, or null when the event has no metadata. */
  metadata: string | null;
  /** `EventData.formerIds`, lowercased (never written; looked up as this event, see `storedRowOf`). */
  formerIds?: string[];
}

/**
 * Validates an append's arguments the same way for every adapter and serialises its events.
 *
 * @throws TypeError when the stream name is empty, `events` is empty, an id (or former id) is not a UUID, a type
 *   is empty, data is not JSON-serialisable, `expectedRevision` is a negative bigint or unknown
 *   value, or `incarnation` (`AppendOptions.incarnation`) is given and is not a bigint >= 0n
 *   (programming errors: nothing is written).
 * @throws DuplicateEventIdError when the same id appears twice in `events`.
 */
export function prepareAppend(stream: string, events: EventData[], expected: ExpectedRevision, incarnation?: bigint): SerializedEvent[] {
  if (typeof stream !== 'string' || stream.length === 0) throw new TypeError('stream name must be a non-empty string');
  if (incarnation !== undefined && (typeof incarnation !== 'bigint' || incarnation < 0n))
    throw new TypeError(`incarnation must be a bigint >= 0n, got ${String(incarnation)}`);
  if (!Array.isArray(events) || events.length === 0) throw new TypeError('appendToStream needs at least one event');
  if (typeof expected === 'bigint') {
    if (expected < 0n) throw new TypeError(`expected revision must be >= 0n, got ${expected}`);
  } else if (expected !== 'any' && expected !== 'no_stream' && expected !== 'stream_exists') {
    throw new TypeError(`unknown expected revision ${String(expected)}`);
  }
  const seen = new Set<string>();
  return events.map((e) => {
    if (typeof e.id !== 'string' || !isUuid(e.id)) throw new TypeError(`event id must be a UUID, got ${String(e.id)}`);
    const id = e.id.toLowerCase();
    if (seen.has(id)) throw new DuplicateEventIdError(stream, id);
    seen.add(id);
    if (typeof e.type !== 'string' || e.type.length === 0) throw new TypeError('event type must be a non-empty string');
    // A large member whose JSON is known already (a request's metadata, made when it was validated) is not serialized again.
    const data = jsonText(e.data);
    if (data === undefined) throw new TypeError(`event ${id}: data is not JSON-serialisable`);
    const metadata = e.metadata === undefined ? null : (JSON.stringify(e.metadata) ?? null);
    const formerIds = (e.formerIds ?? []).map((former) => {
      if (typeof former !== 'string' || !isUuid(former)) throw new TypeError(`event ${id}: a former id must be a UUID, got ${String(former)}`);
      return former.toLowerCase();
    });
    const others = formerIds.filter((former) => former !== id);
    return others.length > 0 ? { id, type: e.type, data, metadata, formerIds: others } : { id, type: e.type, data, metadata };
  });
}

/** Whether a stream whose last revision is `current` (null: no stream) satisfies `expected`. */
export function satisfies(expected: ExpectedRevision, current: bigint | null): boolean {
  if (expected === 'any') return true;
  if (expected === 'no_stream') return current === null;
  if (expected === 'stream_exists') return current !== null;
  return current === expected;
}
