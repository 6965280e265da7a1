/**
 * The example multi-tenant server configuration, deploy/nats/nats-server.conf, run as it is (its
 * port and JetStream folder replaced) by a throwaway `nats-server`: the service works with only the
 * publish permissions it gives the service's user (commands, answers, decisions feed, erasure with
 * NATS_ERASE_HANDLED_COMMANDS); that user cannot purge or delete a stream, delete a consumer but its
 * own command consumer (re-created when found stuck), publish a command or feed a tenant's audit
 * subject, so a `Reply-To` the service failed to check could not make it do those either; and a tenant's `Reply-To` naming another tenant's command subject changes nothing
 * there. Skips with one line when no `nats-server` binary is installed (CI always has one).
 */
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { startService, type Harness } from '../support/service-harness';
import { eventually } from '../support/nats-test';
import { NATS_SERVER_BINARY, startThrowawayNatsWith, type ThrowawayNats } from '../support/throwaway-nats';

const EXAMPLE = path.join(__dirname, '../../deploy/nats/nats-server.conf');
const suite = NATS_SERVER_BINARY ? describe : describe.skip;
if (!NATS_SERVER_BINARY) process.stderr.write('SKIPPED NATS accounts config: no nats-server binary installed\n');

/** The example configuration on `listen` with its JetStream folder `storeDir`. */
function exampleConfig(listen: string, storeDir: string): string {
  const text = fs.readFileSync(EXAMPLE, 'utf8');
  const out = text.replace(/^port: 4222$/m, `listen: ${listen}`).replace('store_dir: "/var/lib/nats-server"', `store_dir: ${JSON.stringify(storeDir)}`);
  if (!out.includes(listen) || !out.includes(storeDir)) throw new Error(`${EXAMPLE} no longer has "port: 4222" and its store_dir line: update this test`);
  return out;
}

suite('the example multi-tenant nats-server configuration', () => {
  jest.setTimeout(60_000);
  let nats: ThrowawayNats;
  let admin: JetStreamManager;
  let tenantA: NatsConnection;
  let tenantB: NatsConnection;
  let service: Harness;
  const A = { Authorization: 'Bearer key-of-tenant-a' };
  const B = { Authorization: 'Bearer key-of-tenant-b' };
  const events = (n: number) =>
    Array.from({ length: n }, (_, i) => [
      { id: `u${i}`, type: 'user', text: `question ${i}` },
      { id: `a${i}`, type: 'assistant', text: `answer ${i}` },
    ]).flat();

  /** Every message on `subject` reaching `nc` (core NATS) from now on. */
  const watch = (nc: NatsConnection, subject: string) => {
    const got: Array<{ subject: string; status: string | undefined; body: any }> = []; // eslint-disable-line @typescript-eslint/no-explicit-any
    const sub = nc.subscribe(subject);
    void (async () => {
      for await (const m of sub) got.push({ subject: m.subject, status: m.headers?.get('Status'), body: m.json() });
    })();
    return { got, stop: () => sub.unsubscribe() };
  };

  /** Publishes a command as tenant-a's (or b's) own client, through its account's import. */
  const command = async (nc: NatsConnection, subject: string, body: unknown, replyTo?: string) => {
    const h = headers();
    if (replyTo) h.set('Reply-To', replyTo);
    const msgId = `${subject.split('.')[2]}:${randomUUID()}`;
    await jetstream(nc).publish(subject, JSON.stringify(body), { msgID: msgId, headers: h });
    return msgId;
  };

  beforeAll(async () => {
    nats = await startThrowawayNatsWith('nats-accounts', exampleConfig, { user: 'compaction-admin', pass: 'CHANGE-ME-admin' });
    admin = await jetstreamManager(nats.nc);
    service = await startService({
      env: {
        NATS_URL: nats.url,
        NATS_USER: 'compaction-service',
        NATS_PASSWORD: 'CHANGE-ME-service',
        NATS_PREFIX: 'compaction',
        NATS_ACK_WAIT_MS: '5000',
        NATS_ERASE_HANDLED_COMMANDS: 'true',
        API_KEYS: 'key-of-tenant-a:tenant-a,key-of-tenant-b:tenant-b',
      },
    });
    tenantA = await connect({ servers: nats.url, user: 'tenant-a', pass: 'CHANGE-ME-a' });
    tenantB = await connect({ servers: nats.url, user: 'tenant-b', pass: 'CHANGE-ME-b' });
  });

  afterAll(async () => {
    await tenantA?.close();
    await tenantB?.close();
    await service?.stop();
    await nats?.stop();
  });

  it("the service's user may publish what the service needs (commands answered, decisions, erasure, re-creating its own consumer) and nothing else: no purge or stream deletion, no other consumer's deletion, no command, no tenant's audit subject", async () => {
    const results = watch(tenantA, 'compaction.results.tenant-a.>');
    const decisions = watch(tenantA, 'compaction.decisions.tenant-a.>');
    await tenantA.flush();
    await command(tenantA, 'compaction.commands.tenant-a.works.append', { events: events(4) });
    await command(tenantA, 'compaction.commands.tenant-a.works.compact', { strategy: { type: 'turn-window', maxTurns: 1 } });
    await eventually(() => results.got.length === 2 && decisions.got.length === 1, 10_000, "tenant-a's answers and decision");
    expect(results.got.map((m) => m.status)).toEqual(['201', '200']);
    expect(decisions.got[0].body.type).toBe('CompactionCompleted');
    await service.http().delete('/v1/sessions/works').set(A).expect(200);
    await eventually(() => decisions.got.some((m) => m.body.type === 'SessionErased'), 10_000, 'the erasure record');
    await eventually(async () => (await admin.streams.info('COMPACTION_RESULTS')).state.messages === 0, 10_000, "the erased session's answers deleted");
    expect((await admin.streams.info('COMPACTION_COMMANDS')).state.messages).toBe(0);
    results.stop();
    decisions.stop();
    await service
      .http()
      .post('/v1/sessions/kept/events')
      .set(B)
      .send({ events: events(3) })
      .expect(201);
    await service
      .http()
      .post('/v1/sessions/kept/compactions')
      .set(B)
      .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
      .expect(200);
    await eventually(async () => (await admin.streams.info('COMPACTION_DECISIONS')).state.messages >= 1, 10_000, 'the decision');
    const decisionsBefore = (await admin.streams.info('COMPACTION_DECISIONS')).state.messages;
    const audit = watch(tenantA, 'deliver.tenant-a.audit');
    await tenantA.flush();
    const asService = await connect({ servers: nats.url, user: 'compaction-service', pass: 'CHANGE-ME-service' });
    const refusals: string[] = [];
    void (async () => {
      for await (const s of asService.status()) if (s.type === 'error') refusals.push((s as { error?: Error }).error?.message ?? '');
    })();
    try {
      const attempt = (subject: string, body = '') =>
        asService.request(subject, body, { timeout: 1000 }).then(
          () => 'answered',
          () => 'refused',
        );
      expect(await attempt('$JS.API.STREAM.PURGE.COMPACTION_DECISIONS')).toBe('refused');
      expect(await attempt('$JS.API.STREAM.PURGE.COMPACTION_COMMANDS')).toBe('refused');
      expect(await attempt('$JS.API.STREAM.DELETE.COMPACTION_RESULTS')).toBe('refused');
      expect(await attempt('$JS.API.CONSUMER.DELETE.COMPACTION_DECISIONS.tenant-a-audit')).toBe('refused');
      expect(await attempt('$JS.API.CONSUMER.DELETE.COMPACTION_COMMANDS.other')).toBe('refused');
      expect(await attempt('compaction.commands.tenant-b.kept.policy', JSON.stringify({ strategy: { type: 'turn-window', maxTurns: 9 } }))).toBe('refused');
      asService.publish('deliver.tenant-a.audit', JSON.stringify({ forged: true }));
      await asService.flush();
      await new Promise((r) => setTimeout(r, 300));
      expect(refusals.filter((r) => /permission/i.test(r)).length).toBeGreaterThanOrEqual(1);
    } finally {
      await asService.close();
    }
    expect((await admin.streams.info('COMPACTION_DECISIONS')).state.messages).toBe(decisionsBefore);
    expect((await admin.streams.info('COMPACTION_RESULTS')).config.name).toBe('COMPACTION_RESULTS');
    expect((await admin.consumers.info('COMPACTION_COMMANDS', 'compaction-service')).name).toBe('compaction-service');
    expect((await service.http().get('/v1/sessions/kept/policy').set(B).expect(200)).body.strategy).toBeNull();
    expect(audit.got).toEqual([]);
    audit.stop();
  });

  it("a tenant's Reply-To naming another tenant's command subject or the JetStream API changes nothing there, and the tenant is told why", async () => {
    await service
      .http()
      .post('/v1/sessions/victim/events')
      .set(B)
      .send({ events: events(3) })
      .expect(201);
    const mine = watch(tenantA, 'compaction.results.tenant-a.victim');
    await tenantA.flush();
    const decisionsBefore = (await admin.streams.info('COMPACTION_DECISIONS')).state.messages;
    const body = { strategy: { type: 'recursive-summarization', maxEventsToKeep: 1, overlapSize: 0, shadowPrompt: 'INJECTED BY TENANT A' } };
    await command(tenantA, 'compaction.commands.tenant-a.victim.policy', body, 'compaction.commands.tenant-b.victim.policy');
    await command(tenantA, 'compaction.commands.tenant-a.victim.policy', body, '$JS.API.STREAM.PURGE.COMPACTION_DECISIONS');
    await eventually(() => mine.got.length === 2, 10_000, "tenant-a's answers");
    expect(mine.got.map((m) => [m.status, m.body.code])).toEqual([
      ['400', 'invalid_reply_to'],
      ['400', 'invalid_reply_to'],
    ]);
    await eventually(async () => (await admin.streams.info('COMPACTION_COMMANDS')).state.messages === 0, 10_000, 'the command stream to empty');
    expect((await service.http().get('/v1/sessions/victim/policy').set(B).expect(200)).body.strategy).toBeNull();
    expect((await admin.streams.info('COMPACTION_DECISIONS')).state.messages).toBe(decisionsBefore);
    mine.stop();
  });
});
