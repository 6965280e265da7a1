/**
 * Read-your-writes without `minPosition`, with the projector in its worker thread (where the read
 * models lag the log most): every read sent after an append was acknowledged by this service
 * includes that append, on the window, the log and recall.
 * Runtime: about 2 s (in-process service, 60 rounds). `MAX_WAIT_MS` is raised from its 5 s
 * default: on a loaded machine the projector's thread can take longer than that to start, and the
 * first read then answers 503 `projection_behind` (documented), which is not what this checks.
 */
import { useService } from '../support/service-harness';

describe('read-your-writes without minPosition (PROJECTOR_WORKER=true)', () => {
  const harness = useService({ env: { PROJECTOR_WORKER: 'true', MAX_WAIT_MS: '60000' } });
  const http = () => harness.http();

  it('every read right after an acknowledged append includes it', async () => {
    const misses: string[] = [];
    for (let i = 0; i < 60; i++) {
      const id = `e${i}`;
      await http()
        .post('/v1/sessions/ryw-worker/events')
        .send({ events: [{ id, type: 'user', text: `note ${i} about the marsh wren${i}` }] })
        .expect(201);
      const [window, log, recall] = await Promise.all([
        http().get('/v1/sessions/ryw-worker/window'),
        http().get(`/v1/sessions/ryw-worker/events?fromRevision=${i}`),
        http().get(`/v1/recall?q=wren${i}`),
      ]);
      for (const answer of [window, log, recall]) expect(answer.status).toBe(200);
      if (!window.body.events?.some((e: { id: string }) => e.id === id)) misses.push(`window ${id}`);
      if (!log.body.events?.some((e: { eventId?: string }) => e.eventId === id)) misses.push(`log ${id}`);
      if (!recall.body.items?.some((h: { eventId: string }) => h.eventId === id)) misses.push(`recall ${id}`);
    }
    expect(misses).toEqual([]);
  });
});
