/**
 * The decisions feed's `/health` lag on a log that ends with deleted events (an erasure interrupted
 * after its stream deletion, before its record): nothing is left for the feed to read there, so it
 * is caught up, not `behind` until the next event (what the readable head gives the projector too,
 * see readiness.e2e-spec.ts). The feed keeps the position it skipped to, so `/health` reads nothing
 * more of the log for it. Against the shared NATS server with a stream prefix of its own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { sessionKey, sessionStream } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';
import { NATS_TEST_URL, describeWithNats, eventually, uniquePrefix, useNatsSuite } from '../support/nats-test';

jest.setTimeout(90_000);

describeWithNats('NATS feed on a deleted log tail')('the decisions feed on a log ending with deleted events', () => {
  const prefix = uniquePrefix();
  const dirs: string[] = [];
  const harnesses: Harness[] = [];

  const nats = useNatsSuite('NATS feed on a deleted log tail', { quiet: true, prefixes: [prefix] });

  afterAll(async () => {
    for (const h of harnesses) await h.stop();
    await nats.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'feed-tail-'));
    dirs.push(d);
    return d;
  };

  it('says caught-up without another event, once the feed has read every event left', async () => {
    const dataDir = tempDir();
    const first = await startService({ dataDir });
    for (const sessionId of ['kept', 'gone'])
      await first
        .http()
        .post(`/v1/sessions/${sessionId}/events`)
        .send({ events: [{ id: `${sessionId}-1`, type: 'user', text: sessionId }] })
        .expect(201);
    // The erasure's stream deletion, and the process ends before its record.
    const stream = sessionStream(sessionKey('default', 'gone'));
    await first.service.store.deleteStream(stream, { expectedRevision: (await first.service.store.streamRevision(stream))! });
    const head = await first.service.store.headPosition();
    await first.stop();

    const replica = await startService({ dataDir, env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix } });
    harnesses.push(replica);
    const feed = async () =>
      ((await replica.http().get('/health').expect(200)).body as { nats: { decisionFeed: { checkpoint: string; skippedTo: string; lag: string } } }).nats
        .decisionFeed;
    await eventually(async () => (await feed()).lag === 'caught-up', 15_000, "the feed's lag to read caught-up");
    expect(BigInt((await feed()).checkpoint)).toBeLessThan(head); // it read up to `kept`: the head is the deleted event
    // /health shows where the feed skipped to (the head), so a checkpoint below the head with lag caught-up is explained.
    expect((await feed()).skippedTo).toBe(head.toString());

    // The feed keeps the position it skipped to: /health compares it with the head without reading the log past the checkpoint.
    const readableHead = jest.spyOn(replica.service.store, 'readableHead');
    for (let i = 0; i < 3; i++) expect((await feed()).lag).toBe('caught-up');
    expect(readableHead).not.toHaveBeenCalled();
  });
});
