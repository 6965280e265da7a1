/**
 * Read-your-writes within one process: the highest global position of the log state this
 * process's command answers were decided on or read from (appends, compactions, policies, erasure
 * records, and the events a command loaded or read back: another replica's decision a compaction
 * is answered with, a policy already set, an idempotent resend), so that a read sent without
 * `minPosition` can wait until the read models include everything this process answered before
 * the read arrived.
 */
import { SESSION_STREAM_PREFIX, sessionKey } from '../events/session-stream-events';
import { ERASURE_STREAM_PREFIX } from '../events/erasure-events';
import { storeWith, type AppendOptions, type AppendResult, type EventData, type EventStore, type RecordedEvent } from '@lib/event-store';

/** What a read covers: one session of a tenant, or (without `sessionId`) everything of the tenant (its session list, erasures, recall). */
export interface AcknowledgedScope {
  tenantId: string;
  sessionId?: string;
}

/**
 * Sessions (and tenants) whose highest acknowledged position is remembered one by one, by default;
 * past it the least recently acknowledged is folded into the unscoped highest (a read of it then
 * waits as for a write of unknown scope: never less than it should).
 */
const MAX_SCOPED_ENTRIES = 10_000;

/**
 * Sets `key` to the higher of its value and `position`, as the most recently used entry of `map`;
 * past `limit` entries removes the least recent one and answers its position (else 0n).
 */
function raise(map: Map<string, bigint>, key: string, position: bigint, limit: number): bigint {
  const before = map.get(key);
  map.delete(key);
  map.set(key, before !== undefined && before > position ? before : position);
  if (map.size <= limit) return 0n;
  const [oldest, value] = map.entries().next().value as [string, bigint];
  map.delete(oldest);
  return value;
}

/**
 * The highest global position (bigint, 0n before any) this process's answers were decided on or
 * read from, overall and per scope: per session (the events of its stream `session-<tenant>.<id>`),
 * per tenant for what every read of the tenant depends on (its erasure records, stream
 * `erasure-<tenant>`: an erasure removes a session from every read), and per tenant for all of it
 * (a tenant-wide read). A position of no known stream (a log head read for a 404) counts for every
 * scope. While the read models cannot be written (disk full), a read waits only for its own scope
 * ({@link lastWithin}), so a session whose events are all projected is still served.
 */
export class AcknowledgedPositions {
  private highest = 0n;
  /** Positions of no known scope, and entries folded out of the maps below: every scope's floor. */
  private unscoped = 0n;
  /** Session key (`<tenant>.<sessionId>`) → highest position of its stream. */
  private readonly sessions = new Map<string, bigint>();
  /** Tenant → highest position of its erasure stream (a floor of each of its sessions). */
  private readonly tenantWide = new Map<string, bigint>();
  /** Tenant → highest position of any of its streams (a tenant-wide read's bound). */
  private readonly tenants = new Map<string, bigint>();

  /** `maxScoped`: entries each map keeps before folding the least recent into the unscoped floor (default 10,000). */
  constructor(private readonly maxScoped = MAX_SCOPED_ENTRIES) {}

  /**
   * Records that an answer was decided on (or read from) the log up to global position `position`
   * (bigint), in stream `stream` when known (a session or erasure stream scopes it; any other, or
   * none, counts for every scope).
   */
  acknowledged(position: bigint, stream?: string): void {
    if (position > this.highest) this.highest = position;
    const scope = stream === undefined ? null : streamScope(stream);
    if (!scope) {
      if (position > this.unscoped) this.unscoped = position;
      return;
    }
    let folded = raise(this.tenants, scope.tenantId, position, this.maxScoped);
    folded = max(folded, raise(scope.sessionKey === null ? this.tenantWide : this.sessions, scope.sessionKey ?? scope.tenantId, position, this.maxScoped));
    if (folded > this.unscoped) this.unscoped = folded;
  }

  /**
   * Records the log's head as `store` reads it now, for a command answered "not found" (404
   * `session_not_found`): that answer was decided on a log without the session, and this process's
   * read models may still hold it (a session erased through another replica, until its erasure
   * record is projected here), so a read after the 404 waits for that record instead of showing
   * the session. Called on that error path only; a head that cannot be read records nothing (the
   * answer stands). The head is of no one scope: it counts for every read.
   */
  async acknowledgeHead(store: Pick<EventStore, 'headPosition'>): Promise<void> {
    const head = await store.headPosition().catch(() => null);
    if (head !== null) this.acknowledged(head);
  }

  /** The highest acknowledged global position so far (bigint; 0n before any). */
  last(): bigint {
    return this.highest;
  }

  /**
   * The highest acknowledged global position (bigint; 0n before any) a read of `scope` depends on:
   * for one session, its stream's, its tenant's erasure records' and those of no known scope; for a
   * tenant, any of its streams' and those of no known scope. Never more than {@link last}.
   */
  lastWithin(scope: AcknowledgedScope): bigint {
    const floor = this.unscoped;
    if (scope.sessionId === undefined) return max(floor, this.tenants.get(scope.tenantId) ?? 0n);
    return max(floor, max(this.tenantWide.get(scope.tenantId) ?? 0n, this.sessions.get(sessionKey(scope.tenantId, scope.sessionId)) ?? 0n));
  }

  /**
   * Forgets the scopes once the read models applied every acknowledged position (`checkpoint`, a
   * global position, at or past {@link last}): nothing is left to wait for in any of them.
   */
  projectedUpTo(checkpoint: bigint): void {
    if (checkpoint < this.highest || this.tenants.size === 0) return;
    this.sessions.clear();
    this.tenantWide.clear();
    this.tenants.clear();
  }
}

function max(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

/** The scope of `stream`: a session stream's tenant and session key, an erasure stream's tenant (`sessionKey` null); null for any other stream. */
function streamScope(stream: string): { tenantId: string; sessionKey: string | null } | null {
  if (stream.startsWith(SESSION_STREAM_PREFIX)) {
    const key = stream.slice(SESSION_STREAM_PREFIX.length);
    const dot = key.indexOf('.');
    return dot > 0 ? { tenantId: key.slice(0, dot), sessionKey: key } : null;
  }
  if (stream.startsWith(ERASURE_STREAM_PREFIX) && stream.length > ERASURE_STREAM_PREFIX.length)
    return { tenantId: stream.slice(ERASURE_STREAM_PREFIX.length), sessionKey: null };
  return null;
}

/**
 * `store`, with the rule every command path shares, whatever it answers with: the global position
 * of every append's answer (also when the store answers an idempotent resend) and of every event
 * read from a stream (a loaded session state, a decision read back to answer a retry, a policy
 * already in force) is recorded in `positions`, so a read that follows waits for the log state the
 * answer was decided on, not only for what this process appended. Events read are in the log
 * already: waiting for them costs only the projector's lag. Each is recorded with its stream (the
 * scope a read waits for while the read models cannot be written: see
 * {@link AcknowledgedPositions.lastWithin}); of a stream read, only its highest position. The queries read through this store
 * too (a window at a revision, a compaction's events): a later read then never shows an older
 * state than one just answered from the log. Every other method is `store`'s own.
 */
export function recordingAcknowledgedPositions(store: EventStore, positions: AcknowledgedPositions): EventStore {
  return storeWith(store, {
    async appendToStream(stream: string, events: EventData[], options?: AppendOptions): Promise<AppendResult> {
      const result = await store.appendToStream(stream, events, options);
      positions.acknowledged(result.position, stream);
      return result;
    },
    async readStream(...args: Parameters<EventStore['readStream']>): Promise<RecordedEvent[]> {
      const events = await store.readStream(...args);
      let highest: bigint | null = null;
      for (const e of events) if (highest === null || e.position > highest) highest = e.position;
      if (highest !== null) positions.acknowledged(highest, args[0]);
      return events;
    },
  });
}
