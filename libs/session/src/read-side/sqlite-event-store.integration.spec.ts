import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteEventStore, type RecordedEvent } from '@lib/event-store';
import { foldSessionWindow, orderedWindow } from '../domain/session-window';
import { CONVERSATION_EVENT, sessionKey, sessionStream } from '../events/session-stream-events';
import { getWindow } from './queries/window-query';
import { searchRecall } from './queries/recall-query';
import { dumpReadModels } from './read-model-dump';
import { ReadModelStore } from './read-model-store';
import { SessionProjector } from './session-projector';
import { assistant, RecordedSessionLog, tool, user } from './testing/recorded-session-log';

/** Appends built events to the real store, one append per event, and returns the last append's position. */
async function appendAll(store: SqliteEventStore, events: RecordedEvent[]): Promise<bigint> {
  let position = 0n;
  for (const e of events) {
    const result = await store.appendToStream(e.streamId, [{ id: e.id, type: e.type, data: e.data, metadata: e.metadata }]);
    position = result.position;
  }
  return position;
}

/** Waits (bounded) until `predicate` holds; returns whether it did. */
async function eventually(predicate: () => boolean, attempts = 500): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (predicate()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return predicate();
}

describe('SessionProjector on SqliteEventStore', () => {
  let dir: string;
  let eventStore: SqliteEventStore;
  const projectors: SessionProjector[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'read-side-'));
    eventStore = SqliteEventStore.open(join(dir, 'events.sqlite'), { pollIntervalMs: 20 });
  });
  afterEach(async () => {
    for (const p of projectors.splice(0)) {
      await p.stop();
      p.store.close();
    }
    await eventStore.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function projectorOn(file: string, commitIntervalMs = 0, worker = false): SessionProjector {
    const projector = new SessionProjector(ReadModelStore.open(file), { retryDelayMs: 5, maxRetryDelayMs: 20, commitIntervalMs, worker });
    projectors.push(projector);
    return projector;
  }

  it('follows the log live, serves read-your-writes, and a rebuild gives the same rows', async () => {
    const projector = projectorOn(join(dir, 'read-models.sqlite'));
    projector.start(eventStore);

    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'where is the pelican config'), { userId: 'alice' });
    log.append('s1', assistant('a1', null, [['grep', '{"pattern":"pelican"}']]));
    log.append('s2', user('v1', 'unrelated'));
    log.append('s1', tool('t1', 'call-a1-0', 'grep', 'conf/pelican.yaml:3'));
    log.append('s1', user('u2', 'thanks'));
    const first = await appendAll(eventStore, log.events);
    await expect(projector.waitForPosition(first, 30_000)).resolves.toBe(true);

    const compaction = [log.archive('s1', 'c1', ['u1', 'a1', 't1']), log.summary('s1', 'c1', 'u2', 'found pelican in conf'), log.completed('s1', 'c1')];
    const afterCompaction = await appendAll(eventStore, compaction);
    await expect(projector.waitForPosition(afterCompaction, 30_000)).resolves.toBe(true);

    const stored = await eventStore.readStream(sessionStream(sessionKey('default', 's1')));
    expect(getWindow(projector.store, 'default', 's1')!.entries).toEqual(orderedWindow(foldSessionWindow(stored)));
    expect(getWindow(projector.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['summary-c1', 'u2']);
    const hits = searchRecall(projector.store, { tenantId: 'default', q: 'pelican.yaml' }).items;
    expect(hits.map((h) => [h.eventId, h.archived, h.compactionId])).toEqual([['t1', true, 'c1']]);

    const rebuilt = projectorOn(join(dir, 'rebuilt.sqlite'));
    expect(await rebuilt.rebuild(eventStore)).toBe(afterCompaction);
    expect(dumpReadModels(rebuilt.store)).toEqual(dumpReadModels(projector.store));

    // Rebuilding the running projector in place keeps it following.
    await projector.rebuild(eventStore);
    expect(projector.state().running).toBe(true);
    const more = await appendAll(eventStore, [log.append('s2', user('v2', 'later'))]);
    await expect(projector.waitForPosition(more, 30_000)).resolves.toBe(true);
    expect(getWindow(projector.store, 'default', 's2')!.entries.map((e) => e.event.id)).toEqual(['v1', 'v2']);

    await projector.stop();
    expect(projector.state().running).toBe(false);
  });

  it('applies the appends that arrive within commitIntervalMs of the previous batch in one transaction', async () => {
    const projector = projectorOn(join(dir, 'read-models.sqlite'), 500);
    const batches: number[] = [];
    const applyBatch = projector.applyBatch.bind(projector);
    projector.applyBatch = (events) => {
      batches.push(events.length);
      return applyBatch(events);
    };
    projector.start(eventStore);
    const log = new RecordedSessionLog();
    const first = await appendAll(eventStore, [log.append('s1', user('u1', 'one'))]);
    expect(await eventually(() => projector.checkpoint() === first)).toBe(true);
    expect(batches).toEqual([1]); // idle log: applied at once

    // three appends, each its own store transaction, right after that batch
    const last = await appendAll(eventStore, [
      log.append('s1', user('u2', 'two')),
      log.append('s2', user('v1', 'three')),
      log.append('s1', user('u3', 'four')),
    ]);
    expect(await eventually(() => projector.checkpoint() === last)).toBe(true);
    expect(batches).toEqual([1, 3]);
    expect(getWindow(projector.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['u1', 'u2', 'u3']);
  });

  it('applies a waiting batch at once when a reader waits for one of its positions', async () => {
    const projector = projectorOn(join(dir, 'read-models.sqlite'), 60_000);
    projector.start(eventStore);
    const log = new RecordedSessionLog();
    const first = await appendAll(eventStore, [log.append('s1', user('u1', 'one'))]);
    expect(await eventually(() => projector.checkpoint() === first)).toBe(true);
    const second = await appendAll(eventStore, [log.append('s1', user('u2', 'two'))]);
    // without the reader the batch would wait a minute; the wait below gives up after 5 s
    await expect(projector.waitForPosition(second, 5_000)).resolves.toBe(true);
    expect(getWindow(projector.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['u1', 'u2']);
  });

  it('in a worker thread: follows the log, serves read-your-writes on this thread, reports a malformed event and never skips it, and writes the rows the calling thread would', async () => {
    const projector = projectorOn(join(dir, 'read-models.sqlite'), 0, true);
    const checkpoints: bigint[] = [];
    projector.onCheckpoint((checkpoint) => checkpoints.push(checkpoint));
    projector.start(eventStore);
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'where is the pelican config'));
    log.append('s1', assistant('a1', 'in conf'));
    log.append('gone', user('g1', 'secret words'));
    const first = await appendAll(eventStore, log.events);
    await expect(projector.waitForPosition(first, 30_000)).resolves.toBe(true);
    expect(checkpoints[checkpoints.length - 1]).toBe(first);
    expect(getWindow(projector.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['u1', 'a1']);
    expect(searchRecall(projector.store, { tenantId: 'default', q: 'pelican' }).items.map((h) => h.eventId)).toEqual(['u1']);

    // an erasure on this thread's connection while the worker holds its own
    await eventStore.deleteStream(sessionStream(sessionKey('default', 'gone')));
    expect(projector.eraseSession('default', 'gone')).toBe(true);
    expect(searchRecall(projector.store, { tenantId: 'default', q: 'secret' }).items).toEqual([]);

    const good = await appendAll(eventStore, [log.append('s1', user('u2', 'fine'))]);
    await appendAll(eventStore, [log.record('s1', CONVERSATION_EVENT, { costs: {} }), log.append('s1', user('u3', 'after'))]);
    expect(await eventually(() => projector.state().lastError !== null)).toBe(true);
    expect(projector.state().lastError).toContain('MalformedEventError');
    expect(projector.checkpoint()).toBe(good);
    expect(getWindow(projector.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['u1', 'a1', 'u2']);
    await projector.stop();

    // the same log followed on this thread gives the same rows
    const onThisThread = projectorOn(join(dir, 'same.sqlite'));
    onThisThread.start(eventStore);
    expect(await eventually(() => onThisThread.state().lastError !== null)).toBe(true);
    expect(onThisThread.checkpoint()).toBe(good);
    expect(dumpReadModels(onThisThread.store)).toEqual(dumpReadModels(projector.store));
  });

  it('resumes from its checkpoint after a restart', async () => {
    const file = join(dir, 'read-models.sqlite');
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'one'));
    const firstPosition = await appendAll(eventStore, log.events);
    const first = projectorOn(file);
    first.start(eventStore);
    await expect(first.waitForPosition(firstPosition, 30_000)).resolves.toBe(true);
    await first.stop();
    first.store.close();
    projectors.splice(projectors.indexOf(first), 1);

    const secondPosition = await appendAll(eventStore, [log.append('s1', user('u2', 'two'))]);
    const second = projectorOn(file);
    expect(second.checkpoint()).toBe(firstPosition);
    second.start(eventStore);
    await expect(second.waitForPosition(secondPosition, 30_000)).resolves.toBe(true);
    expect(getWindow(second.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['u1', 'u2']);
    expect((second.store.db.prepare('SELECT count(*) AS n FROM session_log').get() as { n: number }).n).toBe(2);
  });

  it('moves its checkpoint past events of other streams, so waiting for their position resolves', async () => {
    const projector = projectorOn(join(dir, 'read-models.sqlite'));
    projector.start(eventStore);
    const log = new RecordedSessionLog();
    const session = await appendAll(eventStore, [log.append('s1', user('u1', 'hello'))]);
    await expect(projector.waitForPosition(session, 30_000)).resolves.toBe(true);

    const { position } = await eventStore.appendToStream('erasure-default', [
      { id: randomUUID(), type: 'SessionErased', data: { sessionId: 'x', erasedEvents: 1, erasedAt: '2024-05-01T00:00:00.000Z' } },
    ]);
    expect(position).toBeGreaterThan(session);
    await expect(projector.waitForPosition(position, 5_000)).resolves.toBe(true);
    expect(projector.checkpoint()).toBe(await eventStore.headPosition());
    expect(getWindow(projector.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['u1']);
    expect((projector.store.db.prepare('SELECT count(*) AS n FROM session_log').get() as { n: number }).n).toBe(1);

    // a checkpoint on another stream's event survives a restart, and a rebuild reaches the head too
    await projector.stop();
    expect(projectorOn(join(dir, 'read-models.sqlite')).checkpoint()).toBe(position);
    expect(await projectorOn(join(dir, 'rebuilt.sqlite')).rebuild(eventStore)).toBe(position);
  });

  it('after an erasure (stream deleted, rows erased) equals a rebuild from the log', async () => {
    const projector = projectorOn(join(dir, 'read-models.sqlite'));
    projector.start(eventStore);
    const log = new RecordedSessionLog();
    log.append('gone', user('g1', 'secret words'));
    log.append('kept', user('k1', 'kept words'));
    log.append('gone', assistant('g2', 'more secret words'));
    log.append('kept', assistant('k2', 'more kept words'));
    const last = await appendAll(eventStore, log.events);
    await expect(projector.waitForPosition(last, 30_000)).resolves.toBe(true);

    const erasure = await eventStore.appendToStream('erasure-default', [
      { id: randomUUID(), type: 'SessionErased', data: { sessionId: 'gone', erasedEvents: 2, erasedAt: '2024-05-01T00:00:00.000Z' } },
    ]);
    await eventStore.deleteStream(sessionStream(sessionKey('default', 'gone')));
    expect(projector.eraseSession('default', 'gone')).toBe(true);
    await expect(projector.waitForPosition(erasure.position, 5_000)).resolves.toBe(true);
    expect(searchRecall(projector.store, { tenantId: 'default', q: 'secret' }).items).toEqual([]);

    const rebuilt = projectorOn(join(dir, 'rebuilt.sqlite'));
    expect(await rebuilt.rebuild(eventStore)).toBe(erasure.position);
    expect(dumpReadModels(rebuilt.store)).toEqual(dumpReadModels(projector.store));
  });

  it('stops at a malformed event, reports it, and never skips it', async () => {
    const projector = projectorOn(':memory:');
    const log = new RecordedSessionLog();
    log.append('s1', user('u1', 'fine'));
    const good = await appendAll(eventStore, log.events);
    const bad = log.record('s1', CONVERSATION_EVENT, { costs: {} });
    await appendAll(eventStore, [bad, log.append('s1', user('u2', 'after'))]);

    projector.start(eventStore);
    expect(await eventually(() => projector.state().lastError !== null)).toBe(true);
    expect(projector.state().lastError).toContain('MalformedEventError');
    expect(projector.checkpoint()).toBe(good);
    expect(projector.state().running).toBe(true);
    expect(getWindow(projector.store, 'default', 's1')!.entries.map((e) => e.event.id)).toEqual(['u1']);
  });
});
