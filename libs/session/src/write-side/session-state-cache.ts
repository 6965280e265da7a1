/**
 * Keeps recently used sessions' folded state in memory so that an append or a compaction reads
 * only the events it has not seen (usually none): O(new events) instead of O(active window).
 *
 * Correct with several writers (other processes, other instances): every `load` asks the store for
 * the stream's revision and folds whatever was appended since the cached revision. An append may
 * skip that question ({@link SessionStateCache.peek}) when what it decides is written at the cached
 * revision: the store's expected-revision check then verifies the state. Both hold across an
 * erasure by another writer, which this process learns of only when its projector reads the record:
 * a deleted stream's revisions are never reused, so a session erased and written again never
 * matches the cached revision, and `load` checks that the cached revision's event is still there.
 */
import type { AppendResult, EventData, EventStore } from '@lib/event-store';
import { CONVERSATION_EVENT, sessionStream, type ConversationEventData } from '../events/session-stream-events';
import { evolveSessionWindow, type SessionWindowState } from '../domain/session-window';
import { loadSessionWindow } from './session-loader';
import { estimatedEntryBytes, estimatedStateBytes, REVISION_ENTRY_BYTES } from './session-state-size';

/**
 * See {@link SessionStateCache.watch}: `invalidated` turns true, and `signal` is aborted, when the
 * session is invalidated (an erasure); `rearm()` starts watching again (not invalidated, a new
 * signal); `release()` ends the watch.
 */
export interface InvalidationWatch {
  invalidated: boolean;
  /** Aborted when the session is invalidated (until `rearm()`, which gives a new one): for work to stop at once, e.g. a summarizer's model calls. */
  readonly signal: AbortSignal;
  /** Marks the watch invalidated and aborts its signal ({@link SessionStateCache.invalidate}). */
  invalidate(): void;
  /** Not invalidated any more, with a new signal: the watcher planned again on the session's new state. */
  rearm(): void;
  release(): void;
}

/** Default number of sessions kept in memory. */
export const DEFAULT_SESSION_CACHE_SIZE = 2000;

/**
 * Default bound of the memory the cached states hold, estimated ({@link estimatedStateBytes}):
 * 256 MiB (`SESSION_CACHE_MAX_MB`). A state keeps its active events whole, so 2,000 sessions whose
 * windows hold large tool results would otherwise hold gigabytes.
 */
export const DEFAULT_SESSION_CACHE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * An LRU of folded session states, kept current against the store on every load: at most
 * `maxSessions` states and at most `maxBytes` of them by {@link estimatedStateBytes} (the least
 * recently used go first; the state just used always stays, however large, until another is used).
 */
export class SessionStateCache {
  private readonly entries = new Map<string, SessionWindowState>();
  /** {@link estimatedStateBytes} of each cached state, kept as it changes (bytes). */
  private readonly sizes = new Map<string, number>();
  /** The sum of {@link SessionStateCache.sizes} (bytes). */
  private heldBytes = 0;
  /** Sessions whose last load found events this cache had not folded: another writer appends to them. */
  private readonly writtenElsewhere = new Set<string>();
  /** Open {@link SessionStateCache.watch}es by session (only while a decision holds one). */
  private readonly watches = new Map<string, Set<InvalidationWatch>>();

  constructor(
    private readonly store: EventStore,
    private readonly maxSessions = DEFAULT_SESSION_CACHE_SIZE,
    private readonly maxBytes = DEFAULT_SESSION_CACHE_MAX_BYTES,
  ) {}

  /** Estimated heap bytes the cached states hold ({@link estimatedStateBytes}), at most about `maxBytes` plus the state used last. */
  get estimatedBytes(): number {
    return this.heldBytes;
  }

  /** Number of session states cached. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * The current state of `sessionId`, or null when the stream does not exist. The returned object
   * is shared: callers must not mutate it (an append of this process is folded in by {@link SessionStateCache.appended}).
   */
  async load(sessionId: string): Promise<SessionWindowState | null> {
    const stream = sessionStream(sessionId);
    const cached = this.entries.get(sessionId);
    const revision = await this.store.streamRevision(stream);
    if (revision === null) {
      this.forget(sessionId);
      return null;
    }
    if (cached && cached.revision !== revision) this.writtenElsewhere.add(sessionId);
    else this.writtenElsewhere.delete(sessionId);
    if (cached && cached.revision !== null && cached.revision <= revision) {
      let refolded = false;
      if (cached.revision < revision) {
        // Read from the cached revision itself: when its event is gone, the stream was deleted and
        // written again since (revisions are never reused, EventStore.deleteStream), and the cached
        // state is another session's: load it afresh below.
        const from = cached.revision;
        const newer = await this.store.readStream(stream, { fromRevision: from });
        if (newer.length > 0 && newer[0].revision === from) {
          // Another load may have folded some of these while we awaited: fold each revision once.
          for (const e of newer) if (cached.revision === null || e.revision > cached.revision) evolveSessionWindow(cached, e);
          refolded = true;
        }
      }
      if (cached.revision === revision) {
        this.touch(sessionId, cached, refolded ? estimatedStateBytes(cached) : undefined);
        return cached;
      }
    }
    const fresh = await loadSessionWindow(this.store, sessionId);
    if (fresh) this.touch(sessionId, fresh, estimatedStateBytes(fresh));
    else this.forget(sessionId);
    return fresh;
  }

  /**
   * The cached state of `sessionId` without asking the store (no I/O), or null when none is cached
   * or when the last {@link SessionStateCache.load} found events another writer had appended (the
   * cache would often be behind). The state may be behind the store: use it only for a decision
   * that is then written with the state's revision as the expected revision, so that the store
   * refuses it when another writer came first; anything else (a rejection, a resend, nothing to
   * write) must be decided again on {@link SessionStateCache.load}. Shared like `load`'s result.
   */
  peek(sessionId: string): SessionWindowState | null {
    if (this.writtenElsewhere.has(sessionId)) return null;
    const cached = this.entries.get(sessionId);
    if (!cached || cached.revision === null) return null;
    this.touch(sessionId, cached);
    return cached;
  }

  /**
   * Folds an append this process has just made into the cached state, so that the session's next
   * load only checks the stream's revision instead of reading the events back. Done only when the
   * cached state is still at `basedOn` (the revision the append was decided on) and the append's
   * `events` took exactly the revisions after it (no other writer in between, not a resend);
   * otherwise the next load reads what it has not seen, as usual. Only for an append the store checked
   * in the life of the cached state (`AppendOptions.incarnation`, or an exact expected revision
   * `basedOn`): unchecked, an append at `any` or `stream_exists` may be the first of the session's
   * next life, when another replica erased it after the state was loaded, at the revisions right
   * after the erased ones, which `basedOn` may be. Events without a client time get
   * `acknowledgedAt` as their `createdAt` (the store's own stamp, taken while writing, is a few ms
   * earlier; the write side does not read it).
   */
  appended(sessionId: string, basedOn: bigint | null, events: readonly EventData[], result: AppendResult, acknowledgedAt: Date): void {
    const cached = this.entries.get(sessionId);
    const first = (basedOn ?? -1n) + 1n;
    if (!cached || cached.revision !== basedOn || result.nextExpectedRevision !== first + BigInt(events.length) - 1n) return;
    events.forEach((e, i) => evolveSessionWindow(cached, { type: e.type, data: e.data, revision: first + BigInt(i), created: acknowledgedAt }));
    cached.position = result.position; // the position of the append's last event, now the state's last
    // Conversation events each add one entry (an estimate: one archived on arrival adds none until the next estimate);
    // a decision or an archive removes some: the state is estimated again.
    let bytes = this.sizes.get(sessionId) ?? 0;
    if (events.every((e) => e.type === CONVERSATION_EVENT)) {
      for (const e of events) bytes += estimatedEntryBytes((e.data as ConversationEventData).event) + REVISION_ENTRY_BYTES;
    } else bytes = estimatedStateBytes(cached);
    this.setSize(sessionId, bytes);
    this.evict(sessionId);
  }

  /**
   * Forgets a session (after erasure, or when its cached state may be wrong), and marks every
   * {@link SessionStateCache.watch} of it as invalidated.
   */
  invalidate(sessionId: string): void {
    this.forget(sessionId);
    for (const watch of this.watches.get(sessionId) ?? []) watch.invalidate();
  }

  /**
   * Watches `sessionId` for an {@link SessionStateCache.invalidate} (an erasure, by this process or,
   * once its projector reads the record, by another) until `release()`. For a decision that awaits
   * something slow (a compaction's summarizer call) between loading the state and appending: the
   * expected-revision check cannot tell an erased session from the same id re-created up to the
   * same revision, so such a decision checks `invalidated` before it appends.
   */
  watch(sessionId: string): InvalidationWatch {
    const watches = this.watches.get(sessionId) ?? new Set<InvalidationWatch>();
    this.watches.set(sessionId, watches);
    let aborts = new AbortController();
    const watch: InvalidationWatch = {
      invalidated: false,
      get signal() {
        return aborts.signal;
      },
      invalidate: () => {
        watch.invalidated = true;
        aborts.abort();
      },
      rearm: () => {
        watch.invalidated = false;
        aborts = new AbortController();
      },
      release: () => {
        watches.delete(watch);
        if (watches.size === 0 && this.watches.get(sessionId) === watches) this.watches.delete(sessionId);
      },
    };
    watches.add(watch);
    return watch;
  }

  private forget(sessionId: string): void {
    this.entries.delete(sessionId);
    this.writtenElsewhere.delete(sessionId);
    this.heldBytes -= this.sizes.get(sessionId) ?? 0;
    this.sizes.delete(sessionId);
  }

  /** Puts `state` last in the LRU order (with its estimate `bytes` when it changed), then evicts past the bounds. */
  private touch(sessionId: string, state: SessionWindowState, bytes?: number): void {
    this.entries.delete(sessionId);
    this.entries.set(sessionId, state);
    // (a state evicted while its load awaited the store has no estimate any more)
    const estimate = bytes ?? (this.sizes.has(sessionId) ? undefined : estimatedStateBytes(state));
    if (estimate !== undefined) this.setSize(sessionId, estimate);
    this.evict(sessionId);
  }

  /** Records `bytes` as the session's estimate, moving {@link SessionStateCache.heldBytes} from its previous one. */
  private setSize(sessionId: string, bytes: number): void {
    this.heldBytes += bytes - (this.sizes.get(sessionId) ?? 0);
    this.sizes.set(sessionId, bytes);
  }

  /** Forgets the least recently used states while either bound is exceeded, never `keep` (the state just used). */
  private evict(keep: string): void {
    while (this.entries.size > this.maxSessions || (this.heldBytes > this.maxBytes && this.entries.size > 1)) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined || oldest === keep) break;
      this.forget(oldest);
    }
  }
}
