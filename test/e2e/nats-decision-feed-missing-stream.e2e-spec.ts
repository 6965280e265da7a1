/**
 * A decisions feed whose stream is missing on the server (newcomer ncnatschaos, F5): while it
 * retries, `/health`'s `lastError` (the feed's state) and the log line say the same thing in one
 * wording whichever call failed (before: the log said "jetstream is not enabled", the state "stream
 * not found"), `lastErrorAt` follows the latest failure (before: it kept the first), one log line
 * for the whole pause, and the transport is told (it re-creates the streams). Against the machine's
 * NATS server, with a prefix that has no streams. Runtime ≈ 2 s.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { ReadModelStore } from '@lib/session';
import { captureLogLines } from '../support/captured-log-lines';
import { describeWithNats, eventually, useNatsSuite } from '../support/nats-test';
import { DecisionFeedPublisher, missingStreamText } from '../../apps/session-service/src/nats/decision-feed-publisher';
import { natsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(30_000);

describeWithNats('NATS decision feed missing stream')('a decisions feed whose stream is missing', () => {
  const nats = useNatsSuite('NATS decision feed missing stream');
  let root: string;
  let logged: string[] = [];

  beforeAll(() => {
    logged = captureLogLines();
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-feed-missing-'));
  });

  afterAll(async () => {
    await nats.close();
    fs.rmSync(root, { recursive: true, force: true });
    jest.restoreAllMocks();
  });

  it('says so in one wording in its state and its log, keeps lastErrorAt at the latest failure, and tells the transport', async () => {
    const names = natsNames(nats.prefix());
    const store = SqliteEventStore.open(path.join(root, 'events.sqlite'));
    const readModels = ReadModelStore.open(path.join(root, 'read-models.sqlite'));
    let told = 0;
    const feed = new DecisionFeedPublisher(store, readModels, nats.nc, nats.client.js, nats.client.jsm, names, undefined, undefined, () => told++);
    try {
      await feed.start();
      const wording = missingStreamText(names.decisionStream);
      expect(feed.state()).toMatchObject({ lastError: wording, lastErrorAt: expect.any(String) });
      const first = feed.state().lastErrorAt!;
      // Retried after 100, 200, 400 ms…: each failure moves lastErrorAt.
      await eventually(() => feed.state().lastErrorAt! > first, 5_000, 'a later failure');
      expect(feed.state().lastError).toBe(wording);
      expect(told).toBeGreaterThanOrEqual(2);
      expect(logged.filter((l) => l.startsWith('decision feed'))).toEqual([
        `decision feed paused at position 0: ${wording}; retrying (at most every 5000 ms) until it resumes`,
      ]);
    } finally {
      await feed.stop();
      await store.close();
      readModels.db.close();
    }
  });
});
