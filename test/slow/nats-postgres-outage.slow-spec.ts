/**
 * NATS commands during a PostgreSQL outage longer than a few seconds (the newcomer's repro): a
 * service on a throwaway cluster of its own takes commands over NATS (streams under a prefix of
 * this file's own, on the machine's NATS server); the cluster is stopped, two append commands of one
 * session are published, and the cluster comes back after 20 s — longer than the old retry budget
 * (5 deliveries, 1 + 2 + 4 + 8 s apart: terminated at ~15 s with 503 `store_unavailable`, the
 * session 404) and than the ack wait. Both commands are applied, once each, in the order they
 * were published; the wait shows in `/health` and `/metrics` and logs one line each way.
 * Runtime: about 50 s on the shared 2-core machine (initdb, one service start-up, a 20 s outage).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { PostgresEventStore } from '@lib/event-store/postgres';
import { CONVERSATION_EVENT } from '@lib/session';
import { call, spawnService, type ServiceProcess } from '../support/service-process';
import { streamOf } from '../support/log-checks';
import { ThrowawayPostgres, throwawayPostgresUnavailableReason } from '../support/throwaway-postgres';
import { describeUnlessSkipped } from '../../libs/event-store/test/postgres-test-database';
import {
  connectForTest,
  deleteStreams,
  describeWithNats,
  eventually,
  natsClient,
  NATS_TEST_URL,
  publishCommand,
  readStream,
  uniquePrefix,
  type NatsTestClient,
} from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';

jest.setTimeout(180_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const OUTAGE_MS = 20_000;
const ACK_WAIT_MS = 5_000;

const prefix = uniquePrefix();
const names = natsNames(prefix);

describeWithNats('NATS commands during a PostgreSQL outage')('NATS commands during a PostgreSQL outage', () => {
  describeUnlessSkipped(throwawayPostgresUnavailableReason(), 'with a throwaway cluster', () => {
    let cluster: ThrowawayPostgres;
    let svc: ServiceProcess | undefined;
    let nc: NatsConnection;
    let client: NatsTestClient;
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-pg-outage-'));

    afterAll(async () => {
      await svc?.kill();
      cluster?.destroy();
      if (client) await deleteStreams(client.jsm, prefix);
      await nc?.close();
      fs.rmSync(dataDir, { recursive: true, force: true });
    });

    it('holds the commands published while the database is down for 20 s, then applies them once each, in order', async () => {
      nc = await connectForTest('NATS PostgreSQL outage');
      client = await natsClient(nc);
      cluster = await ThrowawayPostgres.create();
      svc = await spawnService({
        dataDir,
        env: {
          DATABASE_URL: cluster.url,
          NATS_URL: NATS_TEST_URL,
          NATS_PREFIX: prefix,
          NATS_ACK_WAIT_MS: String(ACK_WAIT_MS),
          LOG_FORMAT: 'json',
          LOG_LEVEL: 'info',
        },
      });
      const metric = async (name: string) => {
        const text = (await fetch(`${svc!.url}/metrics`).then((r) => r.text())).split('\n');
        return text.find((line) => line.startsWith(`${name} `))?.split(' ')[1];
      };
      expect(await metric('nats_commands_retrying')).toBe('0');

      cluster.stop();
      const stoppedAt = Date.now();
      const subject = commandSubject(prefix, 'default', 'conv', 'append');
      await publishCommand(client.js, subject, { events: [{ id: 'u1', type: 'user', text: 'sent while the database is down' }] }, { msgId: 'pg-c1' });
      await publishCommand(client.js, subject, { events: [{ id: 'a1', type: 'assistant', text: 'the second, sent right after' }] }, { msgId: 'pg-c2' });
      await eventually(async () => (await metric('nats_commands_retrying')) === '1', 20_000, 'the first command to wait for the store');
      // One command waits (the second waits behind it, in its session's queue): /health says so too.
      expect(((await call(svc.url, 'GET', '/health')).body as { nats: { commandsRetrying: number } }).nats.commandsRetrying).toBe(1);
      await sleep(OUTAGE_MS - (Date.now() - stoppedAt));
      // Past the old budget: nothing answered yet (no 503 published), the command still waits.
      expect((await client.jsm.streams.info(names.resultStream)).state.messages).toBe(0);
      expect(await metric('nats_commands_retrying')).toBe('1');

      cluster.start();
      const answers = await readStream(client, names.resultStream, `${prefix}.results.default.conv`, 2, { timeoutMs: 30_000 });
      expect(answers.map((a) => [a.headers['Command-Id'], a.headers.Status])).toEqual([
        ['pg-c1', '201'],
        ['pg-c2', '201'],
      ]);
      expect(await metric('nats_commands_retrying')).toBe('0');

      // In the log: each event once, in the order the commands were published.
      const store = PostgresEventStore.connect(cluster.url);
      const log = await store.readStream(streamOf('conv'));
      await store.close();
      expect(log.filter((e) => e.type === CONVERSATION_EVENT).map((e) => (e.data as { event: { id: string } }).event.id)).toEqual(['u1', 'a1']);
      // One line when it started waiting, one when it went through; none per retry (the log is written asynchronously: wait for it).
      const lines = () => svc!.stdout().split('\n');
      await eventually(() => lines().some((l) => l.includes('\\"pg-c1\\" went through')), 10_000, 'the line saying the command went through');
      expect(lines().filter((l) => l.includes('\\"pg-c1\\" waits')).length).toBe(1);
      expect(lines().filter((l) => l.includes('\\"pg-c1\\" went through')).length).toBe(1);
      expect(lines().filter((l) => l.includes('pg-c1') && !/waits|went through/.test(l))).toEqual([]);
    });
  });
});
