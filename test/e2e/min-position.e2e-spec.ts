/**
 * `minPosition` (read-your-writes) on every read route (window, session, policy, compactions, log, recall, session list;
 * the window at a revision or a time too): a position the log holds is
 * waited for; a position past the store's head was never written, so it is answered at once with
 * 400 `position_out_of_range` instead of waiting MAX_WAIT_MS for a 503; a written position the
 * read models have not applied within MAX_WAIT_MS is still 503 `projection_behind`.
 * Runtime: about 4 s (one MAX_WAIT_MS wait, in-process service).
 */
import { SessionProjector } from '@lib/session';
import { useService } from '../support/service-harness';

const MAX_WAIT_MS = 3000;

describe('minPosition', () => {
  const harness = useService({ env: { MAX_WAIT_MS: String(MAX_WAIT_MS) } });
  const http = () => harness.http();
  const routes = (s: string) => [
    `/v1/sessions/${s}/window?`,
    `/v1/sessions/${s}?`,
    `/v1/sessions/${s}/policy?`,
    `/v1/sessions/${s}/compactions?`,
    `/v1/sessions/${s}/events?`,
    `/v1/recall?q=hello&`,
    `/v1/sessions?`,
    // time travel reads the store, yet follows the same rule
    `/v1/sessions/${s}/window?atRevision=0&`,
    `/v1/sessions/${s}/window?atTime=2099-01-01T00:00:00Z&`,
  ];
  let position = 0n;

  beforeAll(async () => {
    const res = await http()
      .post('/v1/sessions/mp/events')
      .send({ events: [{ id: 'u1', type: 'user', text: 'hello' }] })
      .expect(201);
    position = BigInt(res.body.position as string);
  });

  it('answers a written position on every route', async () => {
    for (const route of routes('mp')) await http().get(`${route}minPosition=${position}`).expect(200);
  });

  it.each([
    ['just past the head', 1n],
    ['far past the head', 1_000_000_000n],
  ])('answers a position %s at once with 400 position_out_of_range naming the head, on every route', async (_name, beyond) => {
    const head = await harness.service.store.headPosition();
    for (const route of routes('mp')) {
      const started = Date.now();
      const res = await http().get(`${route}minPosition=${head + beyond}`);
      const elapsed = Date.now() - started;
      expect({ route, status: res.status, code: res.body.code, parameter: res.body.parameter }).toEqual({
        route,
        status: 400,
        code: 'position_out_of_range',
        parameter: 'minPosition',
      });
      expect(res.body.message).toContain(`the log ends at ${head}`);
      // generous: a third of the wait it no longer does
      expect(elapsed).toBeLessThan(MAX_WAIT_MS / 3);
    }
  });

  it('reads the log, recall and the session list after a write (read-your-writes), waiting for the projection', async () => {
    const projector = harness.service.app.get(SessionProjector);
    await projector.stop();
    let restarted = false;
    try {
      const res = await http()
        .post('/v1/sessions/ryw/events')
        .send({ events: [{ id: 'w1', type: 'user', text: 'kingfisher sighting' }] })
        .expect(201);
      const at = res.body.position as string;
      // .then() sends each request now (supertest sends on then), so they arrive while the projector is stopped.
      const pending = [
        http().get(`/v1/sessions/ryw/events?minPosition=${at}`),
        http().get(`/v1/recall?q=kingfisher&minPosition=${at}`),
        http().get(`/v1/sessions?minPosition=${at}`),
      ].map((req) => req.then((res) => res));
      await new Promise((resolve) => setTimeout(resolve, 300));
      projector.start(harness.service.store);
      restarted = true;
      const [log, recall, list] = await Promise.all(pending);
      expect(log.status).toBe(200);
      expect(log.body.events.map((e: { eventId?: string }) => e.eventId)).toContain('w1');
      expect(recall.status).toBe(200);
      expect(recall.body.items.map((h: { eventId: string }) => h.eventId)).toEqual(['w1']);
      expect(list.status).toBe(200);
      expect(list.body.sessions[0]).toMatchObject({ sessionId: 'ryw', lastPosition: at });
    } finally {
      if (!restarted) projector.start(harness.service.store);
    }
  });

  it("without minPosition, waits for this service's own acknowledged writes on every route; minPosition=0 waits for nothing", async () => {
    const projector = harness.service.app.get(SessionProjector);
    await projector.stop();
    // Stopped, but reported running: the projector is behind this service's writes.
    const running = jest.spyOn(projector, 'state').mockReturnValue({ ...projector.state(), running: true });
    let restarted = false;
    try {
      await http()
        .post('/v1/sessions/own/events')
        .send({ events: [{ id: 'o1', type: 'user', text: 'hello from a heron' }] })
        .expect(201);
      const unwaited = await http().get('/v1/sessions/own/events?minPosition=0');
      expect(unwaited.status).toBe(404);
      // .then() sends each request now (supertest sends on then), so they arrive while the projector is behind.
      const pending = routes('own').map((route) =>
        http()
          .get(route)
          .then((res) => res),
      );
      await new Promise((resolve) => setTimeout(resolve, 300));
      running.mockRestore();
      projector.start(harness.service.store);
      restarted = true;
      const answers = await Promise.all(pending);
      expect(answers.map((a) => a.status)).toEqual(routes('own').map(() => 200));
      const [window, , , , log, recall] = answers;
      expect(window.body.events.map((e: { id: string }) => e.id)).toEqual(['o1']);
      expect(log.body.events.map((e: { eventId?: string }) => e.eventId)).toEqual(['o1']);
      expect(recall.body.items.map((h: { eventId: string }) => h.eventId)).toContain('o1');
    } finally {
      running.mockRestore();
      if (!restarted) projector.start(harness.service.store);
    }
  });

  // Newcomer confighints F4: the 404 said "no event was appended to it" of a session whose events the read models had not applied yet.
  it('answers minPosition=0 on a session its read models have not applied yet 404 saying up to which position it has no event, not "no event was appended"', async () => {
    const projector = harness.service.app.get(SessionProjector);
    await projector.stop();
    let restarted = false;
    try {
      const res = await http()
        .post('/v1/sessions/lagging/events')
        .send({ events: [{ id: 'l1', type: 'user', text: 'not projected yet' }] })
        .expect(201);
      const head = BigInt(res.body.position as string);
      const checkpoint = projector.checkpoint();
      expect(checkpoint).toBeLessThan(head);
      const compactionId = '00000000-0000-4000-8000-000000000000';
      for (const route of [
        '/v1/sessions/lagging/window?',
        '/v1/sessions/lagging/window?format=openai&',
        '/v1/sessions/lagging?',
        '/v1/sessions/lagging/policy?',
        '/v1/sessions/lagging/compactions?',
        `/v1/sessions/lagging/compactions/${compactionId}?`,
        `/v1/sessions/lagging/compactions/${compactionId}/diff?`,
        '/v1/sessions/lagging/events?',
      ]) {
        const unwaited = await http().get(`${route}minPosition=0`);
        expect({ route, status: unwaited.status, code: unwaited.body.code }).toEqual({ route, status: 404, code: 'session_not_found' });
        expect(unwaited.body.message).toBe(
          `session "lagging" does not exist as of position ${checkpoint} of the log, the last the read models applied (its head is ${head}): ` +
            'no event was appended to it up to there (or it was erased); events appended since, if any, are not applied yet: ' +
            'retry, or pass the position the append answered as minPosition to wait for them',
        );
      }
      projector.start(harness.service.store);
      restarted = true;
      await http().get(`/v1/sessions/lagging/window?minPosition=${head}`).expect(200);
      // read models at the head: a session never written is plainly so
      const never = await http().get('/v1/sessions/never-written/window?minPosition=0').expect(404);
      expect(never.body.message).toBe('session "never-written" does not exist: no event was appended to it (or it was erased)');
    } finally {
      if (!restarted) projector.start(harness.service.store);
    }
  });

  it('still waits for a written position the read models have not applied, then answers 503 projection_behind', async () => {
    const projector = harness.service.app.get(SessionProjector);
    await projector.stop();
    try {
      const res = await http()
        .post('/v1/sessions/mp/events')
        .send({ events: [{ id: 'u2', type: 'user', text: 'unprojected' }] })
        .expect(201);
      const started = Date.now();
      const behind = await http().get(`/v1/sessions/mp/window?minPosition=${res.body.position as string}`);
      expect({ status: behind.status, code: behind.body.code }).toEqual({ status: 503, code: 'projection_behind' });
      expect(Date.now() - started).toBeGreaterThanOrEqual(MAX_WAIT_MS - 50);
    } finally {
      projector.start(harness.service.store);
    }
  });
});
