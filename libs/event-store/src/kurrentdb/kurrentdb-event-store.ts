import {
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  START,
  excludeSystemEvents,
  jsonEvent,
  streamNameFilter,
  type Filter,
  type JSONType,
  type Position,
} from '@kurrent/kurrentdb-client';
import { prepareAppend, type SerializedEvent } from '../append-input';
import { DuplicateEventIdError, EventStoreUnavailableError, WrongExpectedRevisionError, WrongIncarnationError } from '../errors';
import type {
  AppendOptions,
  DeleteStreamOptions,
  AppendResult,
  EventData,
  EventStore,
  ExpectedRevision,
  ReadAllOptions,
  ReadStreamOptions,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../event-store.port';
import { isMissingStream, mapKurrentError, unansweredWrite } from './kurrentdb-errors';
import { toRecordedEvent } from './kurrentdb-mapping';
import { KurrentDbSubscription } from './kurrentdb-subscription';

/**
 * The KurrentDB (formerly EventStoreDB) adapter, on `@kurrent/kurrentdb-client` 1.x.
 *
 * Positions are bigint commit positions of the server's transaction log (byte offsets: strictly
 * increasing per event, not contiguous); a position `p` is sent back to the server as
 * `{ commit: p, prepare: p }`, which is exact for events written by appends. Revisions are the
 * server's bigint stream revisions. The expected revision is passed as the client's `streamState`
 * option (its `expectedRevision` key does not exist for appends and would be silently ignored).
 *
 * Idempotency: the server recognises a retry with the same event ids at the same expected revision
 * and answers success without a log position; the adapter then reads those events back to return
 * the original position and to reject the retry with {@link DuplicateEventIdError} if the content
 * differs (the server compares ids only). Unlike SQLite, an id reused in another stream is not
 * detected (KurrentDB ids are unique per write, not per store).
 *
 * `deleteStream` is a soft delete: the stream reads as absent at once, but the events stay in `$all`
 * until a scavenge (erasure then needs a scavenge). Appending again continues after the deleted
 * revisions (the server sets `$tb` to the first new one), as the port requires; the server still
 * knows the deleted events' ids, and answers an append of them as an idempotent replay without
 * writing (kurrent-io/KurrentDB#4058): the adapter refuses that with DuplicateEventIdError, and
 * callers derive ids with the stream's incarnation ({@link KurrentDbEventStore.streamIncarnation},
 * `deterministicEventId`) so that they never send them. Known server behaviour the adapter does not
 * hide: an append whose expected revision is exactly a soft-deleted stream's last deleted revision
 * is accepted (it writes the stream again) where the other stores refuse it with `no_stream`.
 * Global reads and subscriptions skip system
 * events (`$`-streams) and, with `streamPrefix`, use a server-side stream-name prefix filter.
 */
export class KurrentDbEventStore implements EventStore {
  private readonly subscriptions = new Set<KurrentDbSubscription>();

  /** Wraps an existing client (the store disposes it on {@link close}). */
  constructor(private readonly client: KurrentDBClient) {}

  /** Connects with a connection string such as `kurrentdb://localhost:2113?tls=false` (lazy: errors show on first use). */
  static connect(connectionString: string): KurrentDbEventStore {
    return new KurrentDbEventStore(KurrentDBClient.connectionString(connectionString));
  }

  /**
   * See {@link EventStore.appendToStream}. `options.incarnation` is checked by reading
   * {@link streamIncarnation} (and the revision, for the error) right before the append: the server
   * has no condition on a stream's life, so a deletion (and re-creation) landing between that read
   * and the append is not seen (not atomic, unlike SQLite and PostgreSQL). An exact expected
   * revision at or past the incarnation still refuses such a write, revisions being never reused,
   * except the server's acceptance of a soft-deleted stream's last deleted revision (class docs).
   */
  async appendToStream(stream: string, events: EventData[], options: AppendOptions = {}): Promise<AppendResult> {
    const expected: ExpectedRevision = options.expectedRevision ?? 'any';
    const { incarnation } = options;
    const serialized = prepareAppend(stream, events, expected, incarnation);
    if (incarnation !== undefined) {
      const actual = await this.streamIncarnation(stream);
      if (actual !== incarnation) throw new WrongIncarnationError(stream, expected, (await this.streamRevision(stream)) ?? 'no_stream', incarnation, actual);
    }
    const payload = events.map((e, i) =>
      jsonEvent({
        id: serialized[i].id,
        type: serialized[i].type,
        data: e.data as JSONType,
        metadata: e.metadata as JSONType | undefined,
      }),
    );
    let result;
    try {
      result = await this.client.appendToStream(stream, payload, { streamState: expected });
    } catch (error) {
      throw await this.appendError(error, stream, expected);
    }
    if (result.position && result.position.commit >= 0n) {
      return { nextExpectedRevision: result.nextExpectedRevision, position: result.position.commit };
    }
    return this.idempotentResult(stream, serialized, result.nextExpectedRevision);
  }

  /** See {@link EventStore.readStream}. */
  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    const direction = options.direction === 'backwards' ? BACKWARDS : FORWARDS;
    const fromRevision = options.fromRevision ?? (direction === BACKWARDS ? END : START);
    if (options.maxCount === 0) return [];
    const out: RecordedEvent[] = [];
    try {
      const reader = this.client.readStream(stream, {
        direction,
        fromRevision,
        ...(options.maxCount !== undefined ? { maxCount: options.maxCount } : {}),
      });
      const to = options.toRevision;
      for await (const resolved of reader) {
        if (!resolved.event) continue;
        const event = toRecordedEvent(resolved.event);
        // Past `toRevision` in the read's direction: the range asked for is over.
        if (to !== undefined && (direction === BACKWARDS ? event.revision < to : event.revision > to)) break;
        out.push(event);
      }
    } catch (error) {
      if (isMissingStream(error)) return [];
      throw mapKurrentError(error, stream);
    }
    return out;
  }

  /** See {@link EventStore.readAll}. */
  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const after = options.fromPosition ?? 0n;
    const limit = options.maxCount ?? 4096;
    if (limit <= 0) return [];
    const out: RecordedEvent[] = [];
    try {
      const reader = this.client.readAll({
        direction: FORWARDS,
        fromPosition: toReadPosition(after),
        maxCount: limit + 1, // the read is inclusive of `after`; the port's is exclusive
        filter: filterFor(options.streamPrefix),
      });
      for await (const resolved of reader) {
        if (!resolved.event) continue;
        const event = toRecordedEvent(resolved.event);
        if (event.position <= after) continue;
        out.push(event);
        if (out.length >= limit) break;
      }
    } catch (error) {
      throw mapKurrentError(error);
    }
    return out;
  }

  /**
   * See {@link EventStore.eventAt}: reads `$all` forwards from `{ commit: position, prepare:
   * position }` (inclusive, system events filtered out) and returns the first event when it is at
   * exactly that position. Soft-deleted events not yet scavenged are returned.
   */
  async eventAt(position: bigint): Promise<RecordedEvent | null> {
    if (position <= 0n) return null;
    try {
      const reader = this.client.readAll({
        direction: FORWARDS,
        fromPosition: { commit: position, prepare: position },
        maxCount: 1,
        filter: excludeSystemEvents(),
      });
      for await (const resolved of reader) {
        if (!resolved.event) continue;
        const event = toRecordedEvent(resolved.event);
        return event.position === position ? event : null;
      }
      return null;
    } catch (error) {
      throw mapKurrentError(error);
    }
  }

  /** See {@link EventStore.streamRevision}. */
  async streamRevision(stream: string): Promise<bigint | null> {
    const last = await this.readStream(stream, { direction: 'backwards', fromRevision: 'end', maxCount: 1 });
    return last.length > 0 ? last[0].revision : null;
  }

  /**
   * See {@link EventStore.streamIncarnation}. A live stream: the revision of its first event (reads
   * start at the soft delete's truncate-before, `$tb`). Otherwise the stream's metadata tells: no
   * `$tb`, never deleted: 0n; a soft-deleted stream (its `$tb` is the server's deleted marker,
   * 2^63 - 1, until the next append sets it to the last deleted revision + 1): the revision after its last event,
   * found reading `$all` backwards with an exact stream-name filter (the deleted events stay in
   * `$all`, and a scavenge keeps a soft-deleted stream's last event). That scan is paid only for a
   * deleted stream not written again yet, i.e. once per re-creation of an erased session.
   * @throws EventStoreUnavailableError when the server cannot be reached, or when a deleted
   *   stream's last event cannot be found in `$all`.
   */
  async streamIncarnation(stream: string): Promise<bigint> {
    const [first] = await this.readStream(stream, { fromRevision: 'start', maxCount: 1 });
    if (first) return first.revision;
    let truncateBefore: unknown;
    try {
      truncateBefore = (await this.client.getStreamMetadata(stream)).metadata?.truncateBefore;
    } catch (error) {
      throw mapKurrentError(error, stream);
    }
    if (typeof truncateBefore !== 'number' && typeof truncateBefore !== 'bigint') return 0n;
    if (BigInt(truncateBefore) < BigInt(Number.MAX_SAFE_INTEGER)) return BigInt(truncateBefore);
    const last = await this.lastRevisionInLog(stream);
    if (last === null) throw new EventStoreUnavailableError(`KurrentDB: the soft-deleted stream ${stream} has no event left in $all to continue from`);
    return last + 1n;
  }

  /** Commit position (bigint) of the last non-system event in `$all`, or 0n when there is none. */
  async headPosition(): Promise<bigint> {
    try {
      const reader = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, filter: excludeSystemEvents() });
      for await (const resolved of reader) if (resolved.event?.position) return resolved.event.position.commit;
      return 0n;
    } catch (error) {
      throw mapKurrentError(error);
    }
  }

  /**
   * See {@link EventStore.readableHead}: the same as {@link headPosition}, the commit position of
   * the last non-system event a read of `$all` returns. The server writes its log in one order and
   * gives later writes higher commit positions, so no event appears at or below a position already
   * readable in `$all`, and {@link readAll}, a forward read of `$all` with the same filter, returns
   * every event up to it (soft-deleted ones too, until a scavenge removes them; then they are
   * deleted events). KurrentDB's head is therefore always an event a follower reads; a deleted
   * tail past every readable event does not occur. This assumes reads served by one node (the
   * client's default, the leader): reads spread over followers that lag could see a head that
   * another follower does not serve yet. Not exercised here (no KurrentDB server in the test
   * environment; the contract spec runs it where a container runtime is found).
   */
  readableHead(): Promise<bigint> {
    return this.headPosition();
  }

  /** See {@link EventStore.subscribeToAll}: a server-side `$all` catch-up subscription, filtered. */
  subscribeToAll(options: SubscribeOptions = {}): Subscription {
    const from = options.fromPosition ?? 0n;
    const source = this.client.subscribeToAll({ fromPosition: toReadPosition(from), filter: filterFor(options.streamPrefix) });
    const sub: KurrentDbSubscription = new KurrentDbSubscription(source, from, () => this.subscriptions.delete(sub));
    this.subscriptions.add(sub);
    return sub;
  }

  /** See {@link EventStore.deleteStream}: soft delete (see the class docs). Deleting a missing stream is a no-op, unless `expectedRevision` is given. */
  async deleteStream(stream: string, options: DeleteStreamOptions = {}): Promise<void> {
    const expected = options.expectedRevision;
    try {
      await this.client.deleteStream(stream, expected === undefined ? {} : { expectedRevision: expected });
    } catch (error) {
      if (expected === undefined && isMissingStream(error)) return;
      if (expected !== undefined && isMissingStream(error)) throw new WrongExpectedRevisionError(stream, expected, 'no_stream');
      const mapped = mapKurrentError(error, stream, expected);
      throw mapped instanceof EventStoreUnavailableError ? unansweredWrite(mapped, 'deletion', stream) : mapped;
    }
  }

  /** Ends subscriptions and disposes of the client. */
  async close(): Promise<void> {
    await Promise.all([...this.subscriptions].map((s) => s.close()));
    await this.client.dispose();
  }

  /**
   * The port's error for a failed append: a stream that reads as deleted is `no_stream` (the server
   * reports a soft-deleted stream's last deleted revision as its current one, or a StreamDeleted error).
   */
  private async appendError(error: unknown, stream: string, expected: ExpectedRevision): Promise<unknown> {
    if (isMissingStream(error)) return new WrongExpectedRevisionError(stream, expected, 'no_stream');
    const mapped = mapKurrentError(error, stream, expected);
    if (mapped instanceof WrongExpectedRevisionError && mapped.actual !== 'no_stream' && (await this.streamRevision(stream)) === null) {
      return new WrongExpectedRevisionError(stream, expected, 'no_stream');
    }
    return mapped instanceof EventStoreUnavailableError ? unansweredWrite(mapped, 'append', stream) : mapped;
  }

  /** The revision of `stream`'s last event in `$all` (deleted or not), or null when it has none there. */
  private async lastRevisionInLog(stream: string): Promise<bigint | null> {
    try {
      const filter = streamNameFilter({ regex: `^${stream.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$` });
      const reader = this.client.readAll({ direction: BACKWARDS, fromPosition: END, maxCount: 1, filter });
      for await (const resolved of reader) if (resolved.event) return resolved.event.revision;
      return null;
    } catch (error) {
      throw mapKurrentError(error, stream);
    }
  }

  /**
   * The server acknowledged an idempotent retry: read the original events back and compare content.
   * Ids of events of an earlier life of the stream (before a soft delete: the server still knows
   * them and writes nothing, kurrent-io/KurrentDB#4058) are refused as duplicates, since they can
   * never be written to this stream again; `deterministicEventId` with the stream's incarnation
   * never derives them.
   */
  private async idempotentResult(stream: string, events: SerializedEvent[], lastRevision: bigint): Promise<AppendResult> {
    const firstRevision = lastRevision - BigInt(events.length) + 1n;
    if (firstRevision < (await this.streamIncarnation(stream))) throw new DuplicateEventIdError(stream, events[0].id);
    const stored = firstRevision >= 0n ? await this.readStream(stream, { fromRevision: firstRevision, maxCount: events.length }) : [];
    if (stored.length !== events.length) {
      throw new EventStoreUnavailableError(`KurrentDB acknowledged an idempotent append to ${stream} but the events cannot be read back`);
    }
    events.forEach((e, i) => {
      const s = stored[i];
      const metadata = s.metadata === undefined ? null : JSON.stringify(s.metadata);
      if (s.id !== e.id || s.type !== e.type || JSON.stringify(s.data) !== e.data || metadata !== e.metadata) {
        throw new DuplicateEventIdError(stream, e.id);
      }
    });
    return { nextExpectedRevision: lastRevision, position: stored[stored.length - 1].position };
  }
}

function toReadPosition(after: bigint): typeof START | Position {
  return after <= 0n ? START : { commit: after, prepare: after };
}

function filterFor(streamPrefix: string | undefined): Filter {
  return streamPrefix ? streamNameFilter({ prefixes: [streamPrefix] }) : excludeSystemEvents();
}
