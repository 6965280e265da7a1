/**
 * A shutdown that reaches its bound (SHUTDOWN_TIMEOUT_MS) while work still waits (here a model call
 * that ignores the abort at half of it): the read models' SQLite file is closed all the same, so the
 * next start finds it closed, its WAL checkpointed and removed. Before, it was left open, its WAL
 * behind, for SQLite to recover at the next start.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadModelStore } from '@lib/session';
import { ControlledSummarizer, startService, type Harness } from '../support/service-harness';

describe('a shutdown at its bound', () => {
  let harness: Harness | undefined;
  afterEach(() => {
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it.each([
    ['on the event loop', 'false'],
    ['in a worker thread', 'true'],
  ])("closes the read models' file even though in-flight work did not finish (projector %s)", async (_where, worker) => {
    const summarizer = new ControlledSummarizer();
    harness = await startService({ summarizer, env: { PROJECTOR_WORKER: worker } });
    const events = Array.from({ length: 6 }, (_, i) => ({ id: `e${i}`, type: i % 2 ? 'assistant' : 'user', text: `turn ${i}` }));
    await harness.http().post('/v1/sessions/s/events').send({ events }).expect(201);
    const readModels = harness.service.app.get(ReadModelStore);
    const wal = path.join(harness.dataDir, 'read-models.sqlite-wal');
    expect(fs.existsSync(wal)).toBe(true);

    // A compaction whose model call never ends (it ignores the shutdown's abort): the application cannot close.
    const entered = summarizer.hold();
    const compaction = harness
      .http()
      .post('/v1/sessions/s/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 } })
      .then(
        () => undefined,
        () => undefined,
      );
    await entered;
    const closed = await harness.service.close({ timeoutMs: 1000 });
    expect(closed.unfinished).toContain('in-flight requests or background work (projector, automatic compactions, NATS) waiting for the store');
    expect({ open: readModels.db.open, wal: fs.existsSync(wal) }).toEqual({ open: false, wal: false });

    // The work left at the bound ends (the process would have ended instead), and with it the store's close.
    summarizer.release();
    await compaction;
    await harness.service.store.close();
  });
});
