import type { SerializedEvent } from '../append-input';
import type { RecordedEvent } from '../event-store.port';
import { recordedFromRow, type EventTableRow } from '../recorded-from-row';
import type { SqliteAppendResult } from './sqlite-append';

/** Most events {@link SqliteRecentEvents} holds (the oldest go first). */
export const MAX_RECENT_EVENTS = 4096;

/** Most JSON text (UTF-16 code units, data and metadata) held in all (the oldest events go first): about 16 MiB. */
export const MAX_RECENT_TEXT = 8 * 1024 * 1024;

/**
 * Events whose data and metadata JSON text is longer than this (UTF-16 code units) are not held:
 * all the room there is. Large events are held too, because reading one back is the costly part: a
 * 1,000,000-ideograph event (3 MB of UTF-8) took 23–50 ms of the event loop to read from the file
 * and decode, against ~2 ms to parse the text held here (the projector reads it right after its
 * commit, and hands it to a worker thread to project).
 */
export const MAX_RECENT_EVENT_TEXT = MAX_RECENT_TEXT;

/** One held event: the row as the store wrote it. */
interface RecentRow extends EventTableRow {
  createdMs: number;
  /** The event's data as the appender gave it (`EventData.data`), until it is first read (see {@link SqliteRecentEvents.appended}). */
  given?: { data: unknown };
}

/**
 * The events this store instance committed most recently, as it wrote them, so that reading the
 * global log right after its own commits (its subscriptions, the projector) does not read them
 * back from the file. The reader's connection then also skips the work SQLite does at the first
 * read after another connection's commit (the writer thread's).
 *
 * It answers {@link SqliteRecentEvents.readAfter} only with a run of held events whose positions
 * follow `after` without a gap, so an event of another process (or one not held) between two of
 * this instance's is never skipped: the caller reads the file instead. Cleared
 * when a stream is deleted (erasure: no erased event stays in memory). A batch is held once the
 * writer thread's answer arrives; until then the store's reads of the log stop before it (they
 * would find it in the file, not here: see `SqliteEventStore.readAll`).
 */
export class SqliteRecentEvents {
  private rows: RecentRow[] = [];
  /** Index of the oldest live row of `rows` (rows before it were dropped; compacted now and then). */
  private first = 0;
  /** JSON text held by the live rows (UTF-16 code units). */
  private heldText = 0;

  /**
   * Records a committed append of `events` (serialized as written) to `stream` with its `result`;
   * ignored when the append wrote nothing (an idempotent resend) or an event is too large to hold
   * (then none of its events is held, and a later read of them goes to the file). `given`: the
   * data of each event marked `EventData.dataIsParsedJson` as the appender gave it (undefined for
   * the others), which the first read of the event answers instead of parsing its text again (the
   * projector reads an append right after its commit: parsing 4.7 MB of metadata back cost about as
   * much as reading the request); later reads parse the text (the value is let go at that first
   * read, or when the event is no longer held).
   */
  appended(stream: string, events: readonly SerializedEvent[], result: SqliteAppendResult, given?: ReadonlyArray<{ data: unknown } | undefined>): void {
    if (result.writtenAtMs === undefined) return;
    if (events.some((e) => textOf(e) > MAX_RECENT_EVENT_TEXT)) return;
    const n = BigInt(events.length);
    const firstPosition = result.position - n + 1n;
    const last = this.rows[this.rows.length - 1];
    // Commits are delivered in position order; anything else means these rows cannot be trusted.
    if (last !== undefined && firstPosition <= last.position) this.clear();
    events.forEach((e, i) => {
      const k = BigInt(i);
      this.rows.push({
        position: firstPosition + k,
        stream,
        revision: result.nextExpectedRevision - n + 1n + k,
        id: e.id,
        type: e.type,
        data: e.data,
        metadata: e.metadata,
        createdMs: result.writtenAtMs!,
        ...(given?.[i] ? { given: given[i] } : {}),
      });
      this.heldText += textOf(e);
    });
    while (this.rows.length - this.first > MAX_RECENT_EVENTS || this.heldText > MAX_RECENT_TEXT) this.heldText -= textOf(this.rows[this.first++]);
    if (this.first >= MAX_RECENT_EVENTS) {
      this.rows = this.rows.slice(this.first);
      this.first = 0;
    }
  }

  /** Forgets every held event. */
  clear(): void {
    this.rows = [];
    this.first = 0;
    this.heldText = 0;
  }

  /**
   * The held events at positions `after + 1`, `after + 2`, … without a gap (at most `limit`, as the
   * store would read them: data and metadata parsed, `created` as written; at an event's first read,
   * its data as the appender gave it, see {@link appended}), or null when the event
   * at `after + 1` is not held, or a position before the limit is missing between held ones (an
   * event of another process, or one too large to hold): then read the file.
   */
  readAfter(after: bigint, limit: number): RecordedEvent[] | null {
    const start = this.indexOf(after + 1n);
    if (start < 0) return null;
    const out: RecordedEvent[] = [];
    let expected = after + 1n;
    for (let i = start; i < this.rows.length && out.length < limit; i++) {
      const row = this.rows[i];
      // Another process's event (or one not held) comes next: the file answers the whole page, so
      // a page shorter than `limit` always ends at the log's head as far as this instance knows.
      if (row.position !== expected) return null;
      out.push(recordedFromRow(row, new Date(row.createdMs), row.given));
      row.given = undefined;
      expected += 1n;
    }
    return out;
  }

  /** Index in `rows` of the live row at `position`, or -1 (binary search: positions ascend). */
  private indexOf(position: bigint): number {
    let lo = this.first;
    let hi = this.rows.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = this.rows[mid].position;
      if (at === position) return mid;
      if (at < position) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

/** JSON text of an event's data and metadata (UTF-16 code units). */
function textOf(e: { data: string; metadata: string | null }): number {
  return e.data.length + (e.metadata?.length ?? 0);
}
