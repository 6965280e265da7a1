/**
 * Checks over a service's data directory (issue 7): a compaction's decision events are all there
 * or none, and the read models on disk equal a rebuild from the event log.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore, type EventStore, type RecordedEvent } from '@lib/event-store';
import {
  COMPACTION_COMPLETED,
  COMPACTION_FAILED,
  CONVERSATION_EVENT,
  EVENTS_ARCHIVED,
  ReadModelStore,
  READ_MODEL_FILE_NAME,
  SUMMARY_INSERTED,
  SessionProjector,
  computeEventCosts,
  dumpReadModels,
  sessionKey,
  sessionStream,
  storeEventId,
} from '@lib/session';
import type { SessionEvent } from '@lib/compaction';

const DECISION_TYPES = new Set([EVENTS_ARCHIVED, SUMMARY_INSERTED, COMPACTION_COMPLETED, COMPACTION_FAILED]);

/** The stream of a session of a tenant (`default` in open mode). */
export function streamOf(sessionId: string, tenantId = 'default'): string {
  return sessionStream(sessionKey(tenantId, sessionId));
}

/**
 * Problems with the decision events of one session stream: every compaction id must have exactly
 * one terminal event (CompactionCompleted or CompactionFailed), written last, in one contiguous run
 * of revisions (one append), at most one EventsArchived and one SummaryInserted, and an archived
 * count that matches. Returns [] when everything holds. Also returns the compaction ids found.
 */
export function decisionProblems(events: RecordedEvent[]): { problems: string[]; compactionIds: string[] } {
  const groups = new Map<string, RecordedEvent[]>();
  for (const e of events) {
    if (!DECISION_TYPES.has(e.type)) continue;
    const id = (e.data as { compactionId?: string }).compactionId ?? '(none)';
    groups.set(id, [...(groups.get(id) ?? []), e]);
  }
  const problems: string[] = [];
  for (const [id, group] of groups) {
    const terminals = group.filter((e) => e.type === COMPACTION_COMPLETED || e.type === COMPACTION_FAILED);
    if (terminals.length !== 1) problems.push(`${id}: ${terminals.length} terminal events (${group.map((e) => e.type).join(', ')})`);
    if (group[group.length - 1].type !== COMPACTION_COMPLETED && group[group.length - 1].type !== COMPACTION_FAILED)
      problems.push(`${id}: the terminal event is not last`);
    for (let i = 1; i < group.length; i++) {
      if (group[i].revision !== group[i - 1].revision + 1n) problems.push(`${id}: decision events are not one contiguous append`);
    }
    const archived = group.filter((e) => e.type === EVENTS_ARCHIVED);
    const summaries = group.filter((e) => e.type === SUMMARY_INSERTED);
    if (archived.length > 1 || summaries.length > 1) problems.push(`${id}: repeated decision events`);
    const done = terminals[0];
    if (done?.type === COMPACTION_COMPLETED) {
      const count = (done.data as { archivedCount: number }).archivedCount;
      const ids = archived[0] ? (archived[0].data as { archivedIds: string[] }).archivedIds.length : 0;
      if (count !== ids) problems.push(`${id}: archivedCount ${count} but EventsArchived lists ${ids}`);
    }
  }
  return { problems, compactionIds: [...groups.keys()] };
}

/** Opens `<dataDir>/events.sqlite` (the service must not be running, or only reading). */
export function openStore(dataDir: string): SqliteEventStore {
  return SqliteEventStore.open(path.join(dataDir, 'events.sqlite'));
}

/**
 * Rebuilds the read models from the log into an empty database and returns both dumps (`onDisk`:
 * the read models in `dataDir` as the service left them; `rebuilt`: from the log). The log is
 * `<dataDir>/events.sqlite` unless `store` is given (e.g. the PostgreSQL store of replicas); it is
 * closed afterwards.
 */
export async function dumpAndRebuild(
  dataDir: string,
  store: EventStore = openStore(dataDir),
): Promise<{ onDisk: Record<string, unknown[]>; rebuilt: Record<string, unknown[]> }> {
  const existing = ReadModelStore.open(path.join(dataDir, READ_MODEL_FILE_NAME));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rebuild-'));
  const fresh = ReadModelStore.open(path.join(dir, READ_MODEL_FILE_NAME));
  try {
    await new SessionProjector(fresh).rebuild(store);
    return { onDisk: dumpReadModels(existing), rebuilt: dumpReadModels(fresh) };
  } finally {
    fresh.close();
    existing.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Appends conversation events straight to the store, shaped exactly as the append handler writes
 * them (so a service started later has a log to catch up with). Returns the last position.
 */
export async function appendDirect(store: EventStore, sessionId: string, events: SessionEvent[], tenantId = 'default'): Promise<bigint> {
  const key = sessionKey(tenantId, sessionId);
  const incarnation = await store.streamIncarnation(sessionStream(key));
  const result = await store.appendToStream(
    sessionStream(key),
    events.map((event) => ({
      id: storeEventId(key, incarnation, event.id),
      type: CONVERSATION_EVENT,
      data: { event, costs: computeEventCosts(event) },
      metadata: { tenantId, sessionId },
    })),
  );
  return result.position;
}
