/**
 * NATS tenant isolation, against the machine's NATS server (streams under this file's own
 * prefixes): a command's `Reply-To` cannot make the service publish where only it may (another
 * tenant's commands, its results and decisions, the JetStream API); with `API_KEYS` a command id
 * must start with its tenant (the command stream de-duplicates ids across tenants); answers of two
 * commands with the same id on two sessions are both kept; `unknown_tenant` says what is served.
 * The server configuration that also stops the service's user itself is in
 * `nats-accounts-config.e2e-spec.ts` (a throwaway server).
 */
import { randomUUID } from 'node:crypto';
import { Logger } from '@nestjs/common';
import { nanos, createInbox, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { POLICY_SET } from '@lib/session';
import { startService, type Harness } from '../support/service-harness';
import {
  commandQueueSettled,
  describeWithNats,
  eventually,
  publishCommand,
  readStream,
  type ReadMessage,
  useNatsSuite,
  NATS_TEST_URL,
} from '../support/nats-test';
import { commandSubject, natsNames, resultSubject } from '../../apps/session-service/src/nats/nats-names';
import { streamConfigs } from '../../apps/session-service/src/nats/nats-streams';

jest.setTimeout(60_000);

const NATS_URL = NATS_TEST_URL;
const KEYS = 'key-of-tenant-a:tenant-a,key-of-tenant-b:tenant-b';
const A = { Authorization: 'Bearer key-of-tenant-a' };
const B = { Authorization: 'Bearer key-of-tenant-b' };
const turns = (n: number) =>
  Array.from({ length: n }, (_, i) => [
    { id: `u${i}`, type: 'user', text: `question ${i}` },
    { id: `a${i}`, type: 'assistant', text: `answer ${i}` },
  ]).flat();

/** Every message published on `subject` (core NATS) from now on, in arrival order. */
function watch(nc: NatsConnection, subject: string): { got: string[]; sub: Subscription } {
  const got: string[] = [];
  const sub = nc.subscribe(subject);
  void (async () => {
    for await (const m of sub) got.push(`${m.subject} ${m.string()}`);
  })();
  return { got, sub };
}

describeWithNats('NATS tenant isolation')('NATS: tenants cannot reach each other through Reply-To or command ids', () => {
  const nats = useNatsSuite('NATS tenant isolation');

  afterAll(async () => {
    await nats.close();
  });

  /** A service of its own prefix (API keys of tenant-a and tenant-b unless not `keyed`). */
  const serve = async (env: Record<string, string> = {}, keyed = true): Promise<{ service: Harness; prefix: string }> => {
    const prefix = nats.prefix();
    const service = await startService({ env: { NATS_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '5000', ...(keyed ? { API_KEYS: KEYS } : {}), ...env } });
    return { service, prefix };
  };

  /** The answer (from the results stream) to the command with `Command-Id` `msgId` on `tenant`'s `session`. */
  const answerOf = async (prefix: string, tenant: string, session: string, msgId: string): Promise<ReadMessage> => {
    const mine = (m: ReadMessage) => m.headers['Command-Id'] === msgId;
    const got = await readStream(nats.client, natsNames(prefix).resultStream, resultSubject(prefix, tenant, session), (all) => all.some(mine));
    const answer = got.find(mine);
    if (!answer) throw new Error(`no answer to ${msgId}`);
    return answer;
  };

  it("a Reply-To naming another tenant's command subject is refused: nothing reaches it, the command is rejected (invalid_reply_to), nothing is applied", async () => {
    const { service, prefix } = await serve();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      await service
        .http()
        .post('/v1/sessions/victim/events')
        .set(B)
        .send({ events: turns(2) })
        .expect(201);
      const target = commandSubject(prefix, 'tenant-b', 'victim', 'policy');
      const reached = watch(nats.nc, `${prefix}.commands.tenant-b.>`);
      const msgId = `tenant-a:${randomUUID()}`;
      const injected = { strategy: { type: 'recursive-summarization', maxEventsToKeep: 1, overlapSize: 0, shadowPrompt: 'INJECTED-BY-TENANT-A' } };
      await publishCommand(nats.client.js, commandSubject(prefix, 'tenant-a', 'victim', 'policy'), injected, { msgId, replyTo: target });

      const answer = await answerOf(prefix, 'tenant-a', 'victim', msgId);
      expect({ status: answer.headers.Status, code: answer.body.code }).toEqual({ status: '400', code: 'invalid_reply_to' });
      expect(answer.body.message).toContain(`Reply-To "${target}" is under "${prefix}."`);
      await commandQueueSettled(nats.client, natsNames(prefix));
      await new Promise((r) => setTimeout(r, 300));
      expect(reached.got).toEqual([]);
      reached.sub.unsubscribe();
      // Neither tenant's session got a policy: tenant-a's command was refused, tenant-b's session untouched.
      const log = await service.service.store.readAll({ maxCount: 1000 });
      expect(log.filter((e) => e.type === POLICY_SET)).toEqual([]);
      expect((await service.http().get('/v1/sessions/victim/policy').set(B).expect(200)).body.strategy).toBeNull();
      // One warn line: the code, the refused Reply-To; never the body.
      const lines = warn.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(msgId));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain('command rejected: invalid_reply_to (400)');
      expect(lines[0]).toContain(`nothing published on Reply-To "${target}"`);
      expect(lines[0]).not.toContain('INJECTED');
    } finally {
      warn.mockRestore();
      await service.stop();
    }
  });

  it('a Reply-To naming a results or decisions subject, or the JetStream API (purge), is refused: no forged answer, no purge', async () => {
    const { service, prefix } = await serve();
    const names = natsNames(prefix);
    try {
      await service
        .http()
        .post('/v1/sessions/audited/events')
        .set(B)
        .send({ events: turns(4) })
        .expect(201);
      await service
        .http()
        .post('/v1/sessions/audited/compactions')
        .set(B)
        .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
        .expect(200);
      await eventually(async () => (await nats.client.jsm.streams.info(names.decisionStream)).state.messages === 1, 10_000, 'the decision');
      const forged = watch(nats.nc, `${prefix}.*.tenant-b.>`);
      const targets = [
        resultSubject(prefix, 'tenant-b', 'audited'),
        `${prefix}.decisions.tenant-b.audited`,
        `$JS.API.STREAM.PURGE.${names.decisionStream}`,
        `$JS.API.STREAM.PURGE.${names.commandStream}`,
        `$JS.API.STREAM.DELETE.${names.resultStream}`,
        'deliver.tenant-b.audit', // a push consumer's deliver subject: not under an allowed prefix
        '_INBOX.*', // a wildcard
        '_INBOX..x',
      ];
      for (const target of targets) {
        const msgId = `tenant-a:${randomUUID()}`;
        await publishCommand(nats.client.js, commandSubject(prefix, 'tenant-a', 'mine', 'append'), { events: turns(1) }, { msgId, replyTo: target });
        const answer = await answerOf(prefix, 'tenant-a', 'mine', msgId);
        expect({ target, status: answer.headers.Status, code: answer.body.code }).toEqual({ target, status: '400', code: 'invalid_reply_to' });
      }
      await commandQueueSettled(nats.client, names);
      await new Promise((r) => setTimeout(r, 300));
      expect(forged.got).toEqual([]);
      forged.sub.unsubscribe();
      expect((await nats.client.jsm.streams.info(names.decisionStream)).state.messages).toBe(1);
      expect((await nats.client.jsm.streams.info(names.resultStream)).state.messages).toBe(targets.length);
      // None of tenant-a's refused appends was applied.
      expect((await service.http().get('/v1/sessions/mine/window').set(A)).status).toBe(404);
    } finally {
      await service.stop();
    }
  });

  it('a subject naming no session with a refused Reply-To: no answer anywhere, the log line says the Reply-To was refused', async () => {
    const { service, prefix } = await serve();
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const target = commandSubject(prefix, 'tenant-b', 'victim', 'policy');
      const reached = watch(nats.nc, `${prefix}.commands.tenant-b.>`);
      const msgId = `tenant-a:${randomUUID()}`;
      await publishCommand(nats.client.js, `${prefix}.commands.tenant-a`, { strategy: null }, { msgId, replyTo: target });
      await eventually(() => warn.mock.calls.some(([line]) => String(line).includes(msgId)), 10_000, 'the rejection line');
      const line = String(warn.mock.calls.find(([l]) => String(l).includes(msgId))![0]);
      expect(line).toContain('command rejected: invalid_subject (400)');
      expect(line).toContain('no answer published (no session in the subject, Reply-To refused)');
      await new Promise((r) => setTimeout(r, 300));
      expect(reached.got).toEqual([]);
      reached.sub.unsubscribe();
    } finally {
      warn.mockRestore();
      await service.stop();
    }
  });

  it('answers on an inbox (_INBOX by default), and on a subject under NATS_REPLY_PREFIXES when set (then _INBOX only if listed)', async () => {
    const { service, prefix } = await serve({ NATS_REPLY_PREFIXES: 'replies.tenant-a' });
    try {
      const answerOn = async (replyTo: string) => {
        const msgId = `tenant-a:${randomUUID()}`;
        const replies = watch(nats.nc, replyTo);
        await nats.nc.flush();
        await publishCommand(
          nats.client.js,
          commandSubject(prefix, 'tenant-a', 'inboxed', 'append'),
          { events: [{ type: 'user', text: 'hi' }] },
          { msgId, replyTo },
        );
        const results = await answerOf(prefix, 'tenant-a', 'inboxed', msgId);
        await new Promise((r) => setTimeout(r, 300));
        replies.sub.unsubscribe();
        return { results: results.headers.Status, onReplyTo: replies.got.map((m) => JSON.parse(m.slice(m.indexOf(' ') + 1)).code ?? 'ok') };
      };
      expect(await answerOn('replies.tenant-a.x1')).toEqual({ results: '201', onReplyTo: ['ok'] });
      expect(await answerOn(createInbox())).toEqual({ results: '400', onReplyTo: [] });
    } finally {
      await service.stop();
    }
    const open = await serve({}, false);
    try {
      const inbox = createInbox();
      const sub = nats.nc.subscribe(inbox, { max: 1 });
      await publishCommand(
        nats.client.js,
        commandSubject(open.prefix, 'default', 'inboxed', 'append'),
        { events: turns(1) },
        { msgId: randomUUID(), replyTo: inbox },
      );
      for await (const m of sub) expect(m.headers?.get('Status')).toBe('201');
    } finally {
      await open.service.stop();
    }
  });

  it('with API_KEYS a Nats-Msg-Id must start with "<tenant>:" and hold an id after it (invalid_command_id, nothing applied); without one the command runs', async () => {
    const { service, prefix } = await serve();
    try {
      const send = async (tenant: string, msgId: string | undefined, session: string) => {
        await publishCommand(nats.client.js, commandSubject(prefix, tenant, session, 'append'), { events: turns(1) }, { msgId });
      };
      await send('tenant-a', 'c-1', 'ids');
      const refused = await answerOf(prefix, 'tenant-a', 'ids', 'c-1');
      expect({ status: refused.headers.Status, code: refused.body.code }).toEqual({ status: '400', code: 'invalid_command_id' });
      expect(refused.body.message).toContain('does not start with "tenant-a:"');
      // Another tenant's prefix is refused too.
      await send('tenant-a', 'tenant-b:c-2', 'ids');
      expect((await answerOf(prefix, 'tenant-a', 'ids', 'tenant-b:c-2')).body.code).toBe('invalid_command_id');
      // The prefix with nothing after it: every such command would share one id.
      await send('tenant-a', 'tenant-a:', 'ids');
      expect((await answerOf(prefix, 'tenant-a', 'ids', 'tenant-a:')).body.code).toBe('invalid_command_id');
      expect((await service.http().get('/v1/sessions/ids/window').set(A)).status).toBe(404);
      // Both tenants use "c-3" behind their own prefix: both applied.
      await send('tenant-a', 'tenant-a:c-3', 'ids');
      await send('tenant-b', 'tenant-b:c-3', 'ids');
      expect((await answerOf(prefix, 'tenant-a', 'ids', 'tenant-a:c-3')).headers.Status).toBe('201');
      expect((await answerOf(prefix, 'tenant-b', 'ids', 'tenant-b:c-3')).headers.Status).toBe('201');
      await send('tenant-a', undefined, 'no-id');
      const noId = await readStream(nats.client, natsNames(prefix).resultStream, resultSubject(prefix, 'tenant-a', 'no-id'), 1);
      expect(noId[0].headers.Status).toBe('201');
    } finally {
      await service.stop();
    }
  });

  it('unknown_tenant says what is served: API_KEYS tenants when keyed, "default" in open mode', async () => {
    const keyed = await serve();
    try {
      await publishCommand(nats.client.js, commandSubject(keyed.prefix, 'tenant-c', 's', 'append'), { events: turns(1) }, { msgId: 'tenant-c:1' });
      const answer = await answerOf(keyed.prefix, 'tenant-c', 's', 'tenant-c:1');
      expect(answer.body.code).toBe('unknown_tenant');
      expect(answer.body.message).toBe(`tenant "tenant-c" is not served here: publish on your own tenant's subjects (a tenant of API_KEYS)`);
    } finally {
      await keyed.service.stop();
    }
    const open = await serve({}, false);
    try {
      await publishCommand(nats.client.js, commandSubject(open.prefix, 'tenant-c', 's', 'append'), { events: turns(1) }, { msgId: 'x-1' });
      const answer = await answerOf(open.prefix, 'tenant-c', 's', 'x-1');
      expect(answer.body.message).toContain('without API_KEYS (open mode) the service serves only tenant "default"');
    } finally {
      await open.service.stop();
    }
  });

  it("two commands with the same id on two sessions (the command stream's duplicate window apart) both get their answer in the results stream", async () => {
    const prefix = nats.prefix();
    const names = natsNames(prefix);
    // The streams as the service creates them, but a command stream that forgets ids after 200 ms
    // (its 2-minute window is too long for a test; a command waiting in the stream longer than
    // the window while the service is down meets the same case).
    for (const config of streamConfigs(names)) {
      await nats.client.jsm.streams.add(config.name === names.commandStream ? { ...config, duplicate_window: nanos(200) } : config);
    }
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'first', 'append'), { events: turns(1) }, { msgId: 'same-id' });
    await new Promise((r) => setTimeout(r, 400));
    await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'second', 'append'), { events: turns(1) }, { msgId: 'same-id' });
    const service = await startService({ env: { NATS_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '5000' } });
    try {
      await commandQueueSettled(nats.client, names);
      const first = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 'first'), 1, { timeoutMs: 5000 });
      const second = await readStream(nats.client, names.resultStream, resultSubject(prefix, 'default', 'second'), 1, { timeoutMs: 5000 });
      expect([first.map((m) => m.headers.Status), second.map((m) => m.headers.Status)]).toEqual([['201'], ['201']]);
    } finally {
      await service.stop();
    }
  });
});
