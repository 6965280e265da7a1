/**
 * Which log read models were projected from. A checkpoint (a global position) says how far they
 * got, not in which log: a store restored from an older backup and written again holds other
 * events at the same positions, and read models projected before the restore would serve sessions
 * the store no longer has and skip the new events up to their checkpoint. So the projector records,
 * with its checkpoint, what identifies the event at it ({@link checkpointEventIdentity}), and
 * start-up (`checkReadModelsOfThisLog`) and the projector, each time it (re)subscribes, compare
 * it with the store's event at that position ({@link readModelsOffLog}). The NATS decisions feed
 * applies the same rule ({@link checkpointOffLog}) to its checkpoint and to its stream's messages.
 */
import type { EventStore, RecordedEvent } from '@lib/event-store';
import type { CheckpointEvent } from './read-model-store';

/**
 * What identifies a stored event across logs: `<stream>@<revision> <store id> <created, ISO-8601>`.
 * Ids are derived from the session, its incarnation and the request (`deterministicEventId`), so a
 * resend after a restore may give an event the same id at the same position; the time the store
 * recorded it tells them apart (and the read models hold that time: they would differ too).
 */
export function checkpointEventIdentity(event: RecordedEvent): string {
  return `${event.streamId}@${event.revision} ${event.id} ${event.created.toISOString()}`;
}

/** How read models' checkpoint disagrees with a store's log (see {@link readModelsOffLog}). */
export interface LogMismatch {
  /** The read models' checkpoint (bigint global position). */
  checkpoint: bigint;
  /** The store's head position (bigint). */
  head: bigint;
  /** What identified the event at the checkpoint when it was projected, or null (not recorded). */
  projected: string | null;
  /** What identifies the store's event at the checkpoint now; null when the checkpoint is past the head. */
  found: string | null;
  /** One sentence saying how they differ (for logs and configuration errors). */
  problem: string;
}

/**
 * How a recorded position disagrees with a store's log (see {@link checkpointOffLog}): the one rule
 * every follower of the log applies to what it recorded — the read models to their checkpoint,
 * the NATS decisions feed to its checkpoint and to the messages already in its stream.
 */
export interface OffLog {
  /** The recorded global position (bigint). */
  position: bigint;
  /** The store's head position (bigint). */
  head: bigint;
  /** What identified the event at `position` when it was recorded ({@link checkpointEventIdentity}), or null (not recorded). */
  recorded: string | null;
  /** What identifies the store's event at `position` now; null when `position` is past the head. */
  found: string | null;
}

/**
 * Whether `recorded` (a position and what identified its event then) was taken on another log than
 * `store`'s: the position is past the store's head (`head`, read by the caller), or the store's
 * event there is not the one recorded. Returns null when it is this log's, or when it cannot be
 * told: position 0n, no event recorded (a release before it was recorded, or a message published
 * by one), or no event at that position any more (an erased session's events are deleted; an
 * event is never replaced). One read of the store at most (none past the head or without a record).
 * @throws what `store.eventAt` throws (e.g. EventStoreUnavailableError).
 */
export async function checkpointOffLog(store: EventStore, recorded: CheckpointEvent, head: bigint): Promise<OffLog | null> {
  const { position, event } = recorded;
  if (position === 0n) return null;
  if (position > head) return { position, head, recorded: event, found: null };
  if (event === null) return null;
  const atPosition = await store.eventAt(position);
  if (atPosition === null) return null;
  const found = checkpointEventIdentity(atPosition);
  return found === event ? null : { position, head, recorded: event, found };
}

/**
 * Whether read models at `checkpoint` were projected from another log than `store`'s
 * ({@link checkpointOffLog}, worded for read models). Returns null when they agree, or when it
 * cannot be told.
 * @throws what `store.eventAt` throws (e.g. EventStoreUnavailableError).
 */
export async function readModelsOffLog(store: EventStore, checkpoint: CheckpointEvent, head: bigint): Promise<LogMismatch | null> {
  const off = await checkpointOffLog(store, checkpoint, head);
  if (off === null) return null;
  const { position, recorded: projected, found } = off;
  return {
    checkpoint: position,
    head,
    projected,
    found,
    problem: offLogProblem(position, head, projected, found),
  };
}

/** {@link LogMismatch.problem}: an empty log (head 0) is said to be one, not another log. */
function offLogProblem(position: bigint, head: bigint, projected: string | null, found: string | null): string {
  if (head === 0n)
    return `the event store's log is empty (head position 0) while they reached position ${position}: the event store is missing or empty (its file deleted, emptied, or another, new one)`;
  if (found === null) return `they were projected up to position ${position}, but the event store's log ends at ${head}`;
  return `they were projected up to position ${position}, from the event ${projected}, but the event store holds another event there (${found})`;
}

/**
 * What to do about read models (`readModelsFile`, a file name) that `mismatch` says are off the
 * store's log, as the start-up refusal, the projector and the rebuild say it. When the store's log
 * is empty (head 0) the store is what is missing: restore it from a backup, and keep the read
 * models (deleting or rebuilding them would destroy the events' text they hold, perhaps its last
 * copy). Otherwise (another, non-empty log) rebuild them from this store, or delete them and their
 * -wal and -shm files (the service projects the log again at start).
 */
export function offLogRemedy(mismatch: Pick<LogMismatch, 'head' | 'checkpoint'>, readModelsFile: string): string {
  if (mismatch.head === 0n)
    return `restore the event store from a backup (the same SQLITE_EVENTS_FILE, DATABASE_URL or KURRENTDB_CONNECTION_STRING), the service stopped; do NOT delete ${readModelsFile} nor rebuild it: it holds the events' text up to position ${mismatch.checkpoint}, perhaps its last copy (keep a copy of it and its -wal and -shm files)`;
  return `rebuild them from this store with npm run rebuild-read-models (same configuration, the service stopped), or delete ${readModelsFile} and its -wal and -shm files from DATA_DIR (not the event store's events.sqlite: the service then projects the log again at start)`;
}
