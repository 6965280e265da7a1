import * as os from 'node:os';
import {
  describeCopyMarker,
  EventStoreCopyInProgressError,
  type CopyMarker,
  type DeletedStream,
  type EventStore,
  type ForeignRows,
  type LogCopy,
  type RecordedEvent,
} from '@lib/event-store';
import { CopyFailedError, CopyRefusedError, refuseWhileCopyRuns, TargetInUseError } from './copy-errors';
import { digestMismatch, LogDigest, type LogDigestResult } from './log-digest';

/** Options of {@link copyLog}. */
export interface CopyLogOptions {
  /** Events per read of the source and per write of the target (default 1000). */
  pageSize?: number;
  /** A progress line after at least this many events since the last (default 10,000)… */
  progressEvents?: number;
  /** …or after at least this long (ms, default 10,000), whichever comes first. */
  progressMs?: number;
  /** Told each progress line (default: none). */
  say?: (line: string) => void;
  /** The clock (ms), replaced in tests. */
  now?: () => number;
  /** The source as messages and the target's mark name it (credentials masked; default `the source store`). */
  sourceName?: string;
  /**
   * Empty a target holding a partial copy this command marked (`es_copy_in_progress`, see
   * {@link copyLog}) before copying into it (default false: refused). A target not so marked is never emptied.
   */
  emptyPartialTarget?: boolean;
}

/** What {@link copyLog} copied and verified. */
export interface CopySummary {
  /** Events copied (bigint positions kept as in the source). */
  events: number;
  /** Streams with at least one event copied. */
  streams: number;
  /** Deleted streams (erasures) copied: their names and last revisions. */
  deletedStreams: number;
  /** The source's head position (bigint), which the target's head is set to. */
  head: bigint;
  /** The digest both logs have ({@link LogDigest}). */
  sha256: string;
  /** How long the copy took (ms), up to the start of its verification. */
  copyMs: number;
  /** How long the copy and its verification took (ms). */
  ms: number;
}

/** The store's {@link LogCopy}, or a refusal naming `role` when it has none (KurrentDB). */
function logCopyOf(store: EventStore, role: 'source' | 'target'): LogCopy {
  const copy = store.logCopy?.();
  if (!copy)
    throw new CopyRefusedError(
      `the ${role} store cannot be copied ${role === 'source' ? 'from' : 'into'} (KurrentDB keeps its own positions, times and deleted streams): copy-store works between SQLite and PostgreSQL; use KurrentDB's own backup and restore`,
    );
  return copy;
}

/** Reads `store`'s whole log up to `head` (bigint) in position order, `pageSize` at a time, giving each page to `page`. */
async function readLog(store: EventStore, head: bigint, pageSize: number, page: (events: RecordedEvent[]) => Promise<void>): Promise<void> {
  let after = 0n;
  for (;;) {
    const events = (await store.readAll({ fromPosition: after, maxCount: pageSize })).filter((e) => e.position <= head);
    if (events.length === 0) return;
    await page(events);
    after = events[events.length - 1].position;
  }
}

/** The digest of `store`'s log up to `head` (bigint). */
async function digestOf(store: EventStore, head: bigint, pageSize: number): Promise<LogDigestResult> {
  const digest = new LogDigest();
  await readLog(store, head, pageSize, async (events) => digest.add(events));
  return digest.result();
}

/** One sentence naming the first deleted stream whose life differs between the stores (incarnation or revision), or null. */
async function deletedStreamMismatch(source: EventStore, target: EventStore, deleted: readonly DeletedStream[]): Promise<string | null> {
  for (const { stream } of deleted) {
    const [a, b] = await Promise.all([source.streamIncarnation(stream), target.streamIncarnation(stream)]);
    if (a !== b) return `deleted stream ${stream}: its next life starts at revision ${a} in the source, ${b} in the target`;
    const [ra, rb] = await Promise.all([source.streamRevision(stream), target.streamRevision(stream)]);
    if (ra !== rb) return `deleted stream ${stream}: revision ${ra ?? 'none'} in the source, ${rb ?? 'none'} in the target`;
  }
  return null;
}

/** Whether two lists of deleted streams are the same (names and revisions, in order). */
function sameDeleted(a: readonly DeletedStream[], b: readonly DeletedStream[]): boolean {
  return a.length === b.length && a.every((d, i) => d.stream === b[i].stream && d.revision === b[i].revision);
}

/**
 * Copies `source`'s whole log into `target` verbatim, then verifies it. The source must not be
 * written meanwhile (stop every service on it); the target must be empty (it is set up first).
 *
 * Copied: every event in position order with its stream, revision, id, type, data, metadata,
 * time recorded and position; every deleted stream with its last revision (a session erased, or
 * erased and written again, continues after it in the target); the head (the highest position
 * ever assigned, also when the log ends with deleted events). So positions are the same in both
 * stores: read models and the NATS decisions feed see the same log.
 *
 * The target is marked first ({@link LogCopy.markCopyInProgress}: the table `es_copy_in_progress`,
 * naming `sourceName` and the time), and unmarked last, once verified: a copy killed part-way
 * leaves a target that the stores refuse to be used on (EventStoreCopyInProgressError), and that a
 * new copy refuses too unless `emptyPartialTarget`, which empties it first (only a target so marked).
 *
 * Verified after the copy: the source's head and deleted streams are what they were at the start,
 * its log reads again as it was copied (a {@link LogDigest} of stream, revision, id, type, data,
 * metadata and time recorded), the target's log has the same digest and the same event count per
 * stream, the same head, and each deleted stream the same incarnation and revision in both.
 *
 * @throws CopyRefusedError when a store has no {@link LogCopy} (KurrentDB), the source cannot be read (unreachable, a partial copy itself), the target cannot be used (unreachable, login refused,
 *   a database that does not exist, an es_* table that is not this service's: EventStoreSchemaMismatchError) or is not empty, or holds a partial copy without `emptyPartialTarget` (nothing written).
 * @throws CopyFailedError when the source moved or the target does not match (the target emptied again, when it could be and
 *   nothing but this copy wrote into it: else nothing is removed and `othersWrote` says what else is there, {@link LogCopy.clearCopied}).
 * @throws the stores' errors (e.g. EventStoreUnavailableError) otherwise; the target is then emptied too when it could be (the error's message says so).
 */
export async function copyLog(source: EventStore, target: EventStore, options: CopyLogOptions = {}): Promise<CopySummary> {
  const pageSize = options.pageSize ?? 1000;
  const progressEvents = options.progressEvents ?? 10_000;
  const progressMs = options.progressMs ?? 10_000;
  const say = options.say ?? (() => undefined);
  const now = options.now ?? Date.now;
  const started = now();
  const from = logCopyOf(source, 'source');
  const into = logCopyOf(target, 'target');
  const sourceName = options.sourceName ?? 'the source store';
  // The source first: one it cannot read is refused before the target is touched.
  await source.headPosition().catch((error: Error) => {
    throw new CopyRefusedError(
      error instanceof EventStoreCopyInProgressError
        ? `the source ${sourceName} cannot be copied (nothing was copied): ${error.message}; copy from a store that is not a partial copy`
        : `the source ${sourceName} cannot be read (nothing was copied): ${error.message}; start it, or fix DATABASE_URL (DATA_DIR or SQLITE_EVENTS_FILE for the embedded store), and run the copy again`,
    );
  });
  const held = await into.contents().catch((error: Error) => {
    // The target's first use (connecting, the PostgreSQL schema set-up and its check of existing es_* tables): nothing of the log written yet.
    throw new CopyRefusedError(
      `the target cannot be used (nothing was copied into it): ${error.message}; give an empty PostgreSQL database the command can reach and log into, whose es_* tables (if any) are this service's, or the path of a new SQLite file`,
    );
  });
  const partial = await into.copyMarker();
  if (partial !== null && !options.emptyPartialTarget)
    throw new CopyRefusedError(
      `the target holds a partial copy (${held.events} events, head position ${held.head}): its table es_copy_in_progress says ${describeCopyMarker(partial)} and never finished and verified it (killed?); run the same command with --empty-partial-target to empty it and copy again (only once that copy has ended), or drop the database (delete the file)`,
    );
  if (partial === null && (held.events > 0n || held.streams > 0n || held.head > 0n))
    throw new CopyRefusedError(
      `the target is not empty (${held.events} events, ${held.streams} streams, deleted ones included, head position ${held.head}): copy-store writes only into an empty store (a new PostgreSQL database, or a SQLite file that does not exist yet), never merges into a log in use${options.emptyPartialTarget ? '; --empty-partial-target empties only a partial copy this command marked (es_copy_in_progress), and this target has no such mark' : ''}`,
    );
  if (partial !== null) refuseWhileCopyRuns(partial, 'the target');
  // Marked before anything else, and only then asked who else uses the target: a service already running on it is
  // seen here; one starting later refuses the mark (EventStoreCopyInProgressError). Unmarked again on a refusal
  // (a partial copy's mark put back as it was).
  const mark = (): Promise<void> => into.markCopyInProgress({ started: new Date(now()), source: sourceName, pid: process.pid, host: os.hostname() });
  await mark();
  await refuseTargetInUse(into, partial);
  if (partial !== null) {
    // Emptied only now that no service is seen on it; marked again at once (clear drops the mark), and asked again.
    await into.clear();
    await mark();
    await refuseTargetInUse(into, null, 'the partial copy it held was emptied, ');
    say(`emptied the partial copy in the target (${held.events} events, head position ${held.head}; ${describeCopyMarker(partial)})`);
  }
  const head = await source.headPosition();
  const deleted = await from.deletedStreams();
  say(`copying the log up to position ${head} (${deleted.length} deleted streams) in pages of ${pageSize} events`);

  const copied = new LogDigest();
  // What this copy has written (committed): all a failed copy's clean-up may remove.
  const written = { runs: [] as [bigint, bigint][], events: 0n, head: 0n };
  try {
    let count = 0;
    let lineAt = now();
    let lineCount = 0;
    await readLog(source, head, pageSize, async (events) => {
      await into.importEvents(events);
      noteWritten(written, events);
      copied.add(events);
      count += events.length;
      if (count - lineCount >= progressEvents || now() - lineAt >= progressMs) {
        lineAt = now();
        lineCount = count;
        say(`  … ${count} events copied, at position ${events[events.length - 1].position} of ${head} (${((now() - started) / 1000).toFixed(1)} s)`);
      }
    });
    await into.importDeletedStreams(deleted);
    await into.importHead(head);
    if (head > written.head) written.head = head;
    const done = copied.result();
    const copyMs = now() - started;

    // The source must not have moved: its head, its deleted streams, and its log read again.
    const [headAfter, deletedAfter] = [await source.headPosition(), await from.deletedStreams()];
    if (headAfter !== head)
      throw new VerificationFailure(
        `the source's head moved from position ${head} to ${headAfter} during the copy: it was written meanwhile (stop every service using it)`,
      );
    if (!sameDeleted(deleted, deletedAfter))
      throw new VerificationFailure('a stream of the source was deleted during the copy (an erasure): it was written meanwhile (stop every service using it)');
    say(`verifying: reading both logs again (${done.events} events)`);
    const sourceAgain = await digestOf(source, head, pageSize);
    const moved = digestMismatch(done, sourceAgain);
    if (moved) throw new VerificationFailure(`the source changed during the copy (${moved}): it was written meanwhile (stop every service using it)`);
    const inTarget = await digestOf(target, head, pageSize);
    const mismatch = digestMismatch(sourceAgain, inTarget) ?? (await deletedStreamMismatch(source, target, deleted));
    if (mismatch) throw new VerificationFailure(`the target does not match the source: ${mismatch}`);
    const targetHead = await target.headPosition();
    if (targetHead !== head) throw new VerificationFailure(`the target's head is position ${targetHead}, the source's ${head}`);
    await into.unmarkCopyInProgress();
    return { events: done.events, streams: done.perStream.size, deletedStreams: deleted.length, head, sha256: done.sha256, copyMs, ms: now() - started };
  } catch (error) {
    // Only what this copy wrote is removed, and only when nothing else wrote: else everything stays (the mark too).
    const cleared = await into.clearCopied(written).then(
      (foreign) => (foreign === null ? ('emptied' as const) : foreign),
      () => 'failed' as const,
    );
    const problem = error instanceof VerificationFailure ? error.message : `the copy failed: ${(error as Error).message}`;
    if (cleared === 'emptied' || cleared === 'failed') throw new CopyFailedError(problem, cleared === 'emptied');
    throw new CopyFailedError(problem, false, undefined, describeForeignRows(cleared));
  }
}

/** Adds `events`, just written by {@link LogCopy.importEvents} (ascending positions), to `written`'s runs, count and head. */
function noteWritten(written: { runs: [bigint, bigint][]; events: bigint; head: bigint }, events: readonly RecordedEvent[]): void {
  for (const { position } of events) {
    const last = written.runs[written.runs.length - 1];
    if (last !== undefined && last[1] + 1n === position) last[1] = position;
    else written.runs.push([position, position]);
  }
  written.events += BigInt(events.length);
  const top = events[events.length - 1].position;
  if (top > written.head) written.head = top;
}

/** One phrase naming what something else wrote into a copy's target ({@link ForeignRows}). */
function describeForeignRows(found: ForeignRows): string {
  const parts = [
    found.events > 0n
      ? `${found.events} event${found.events === 1n ? '' : 's'} this copy did not write${found.first ? `, the first at position ${found.first.position} of stream ${found.first.stream}` : ''}`
      : '',
    found.missing > 0n ? `${found.missing} event${found.missing === 1n ? '' : 's'} this copy wrote gone again (deleted by something else)` : '',
  ].filter((p) => p !== '');
  return parts.length > 0 ? parts.join('; ') : `its head is position ${found.head}, above any this copy set`;
}

/**
 * Throws {@link TargetInUseError} when something else uses the target ({@link LogCopy.otherUsers}), after taking
 * back this copy's mark: the mark of the partial copy `partial` put back as it was, else the mark removed.
 * `done`: what the copy did to the target before, for the message (e.g. that a partial copy was emptied).
 */
async function refuseTargetInUse(into: LogCopy, partial: CopyMarker | null, done = ''): Promise<void> {
  const users = await into.otherUsers();
  if (users.length === 0) return;
  await (partial !== null ? into.markCopyInProgress(partial) : into.unmarkCopyInProgress());
  throw new TargetInUseError(
    `the target is in use: ${users.join('; ')}. copy-store copies only into a store no service uses: their writes would mix with the copy's, and a failed copy could not be undone without them; ${done}nothing of this copy was written (its mark es_copy_in_progress was removed again${partial !== null ? ', the partial copy keeps its own' : ''}). Stop every service (and rebuild-read-models) on the target, run the copy again, and point replicas at the target only once the copy has been verified (docs/stores.md, "Switching stores", step 4)`,
  );
}

/** A failed check inside {@link copyLog}: the source moved or the target differs (a CopyFailedError once the target is emptied). */
class VerificationFailure extends Error {}
