/**
 * The projector's once-a-second check that the store still holds the event its checkpoint named (a log replaced under a
 * running replica, newcomer ncrecheck69 N2) must not call a stalled store a replaced log (newcomer ncrecheck74 N1): when
 * one check's read of the store outlasted the interval (a connection to PostgreSQL stalled 1.2–2.5 s while another
 * replica erased a session), the next check moved the checkpoint it compared with under it, the event at the old
 * checkpoint was compared with the new one's, and the replica answered 503 `read_models_off_log` until restarted.
 * Given a running service whose store's `eventAt` stalls once for 2.5 s while events are appended and projected, when
 * the stall ends, then reads and `/health` stay ok.
 */
import type { EventStore } from '@lib/event-store';
import { SessionProjector } from '@lib/session';
import { useService } from '../support/service-harness';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a stalled store read in the log-head check', () => {
  const service = useService();

  it('is not taken for a log replaced under the replica (newcomer ncrecheck74 N1)', async () => {
    const post = (id: string) =>
      service
        .http()
        .post('/v1/sessions/stall/events')
        .send({ events: [{ id, type: 'user', text: `text ${id}` }] })
        .expect(201);
    await post('e0');
    // a check has recorded the checkpoint's event
    await sleep(1_500);
    const projector = service.service.app.get(SessionProjector);
    const store = (projector as unknown as { eventStore: EventStore }).eventStore;
    const eventAt = store.eventAt.bind(store);
    let held = 0;
    let reached: () => void = () => undefined;
    const checkHeld = new Promise<void>((resolve) => (reached = resolve));
    store.eventAt = async (position) => {
      if (held++ === 0) {
        reached();
        await sleep(2_500);
      }
      return eventAt(position);
    };
    try {
      // the next check's read (nothing is appended meanwhile, so no batch reads it) stalls; the checkpoint moves on while it waits
      await checkHeld;
      for (let i = 1; i <= 6; i++) {
        await post(`e${i}`);
        await sleep(400);
      }
      await sleep(2_000);
      expect(held).toBeGreaterThan(1);
      const health = await service.http().get('/health');
      expect({ status: health.body.status, error: health.body.projector?.lastError ?? null }).toEqual({ status: 'ok', error: null });
      await service.http().get('/v1/sessions/stall/window').expect(200);
    } finally {
      store.eventAt = eventAt;
    }
  }, 30_000);
});
