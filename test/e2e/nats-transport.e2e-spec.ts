/**
 * Commands and decisions over NATS JetStream (issue 15), against the machine's NATS server, with
 * the service in-process (streams under a prefix of this file's own). Process-spawning cases
 * (two replicas, SIGKILL) are in test/slow/nats-replicas.slow-spec.ts.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { CommandBus } from '@nestjs/cqrs';
import { Logger } from '@nestjs/common';
import { quoteInput } from '@lib/compaction';
import { createInbox } from '@nats-io/transport-node';
import type { SummaryRequest } from '@lib/compaction';
import { COMPACTION_COMPLETED, COMPACTION_FAILED, POLICY_SET, type Summarizer, type SummarizerOutcome } from '@lib/session';
import { startService, useService } from '../support/service-harness';
import {
  commandQueueSettled,
  eventually,
  describeWithNats,
  deleteStreams,
  publishCommand,
  readStream,
  uniquePrefix,
  type ReadMessage,
  useNatsSuite,
  NATS_TEST_URL,
} from '../support/nats-test';
import { natsNames, commandSubject } from '../../apps/session-service/src/nats/nats-names';
import { NatsCommandExecutor, type CommandAnswer } from '../../apps/session-service/src/nats/nats-command-executor';
import { requestSchemas } from '../../apps/session-service/src/http/request-schemas';

jest.setTimeout(60_000);

/** Summarizer calls made so far. */
let summarizerCalls = 0;

/** Fails every summary whose input mentions FAIL; summarizes the rest. Counts its calls in {@link summarizerCalls}. */
const summarizer: Summarizer = {
  identity: { kind: 'extractive', model: 'test-nats' },
  async summarize(request: SummaryRequest): Promise<SummarizerOutcome> {
    summarizerCalls++;
    const usage = { calls: 1, promptTokens: 1, completionTokens: 1 };
    if (request.toSummarize.some((t) => t.includes('FAIL'))) return { ok: false, reason: 'refused for the test', ...usage };
    return { ok: true, text: `summary of ${request.toSummarize.length} events`, ...usage };
  },
};

const prefix = uniquePrefix();
const names = natsNames(prefix);
const MAX_BODY_BYTES = 256 * 1024;
const env = {
  NATS_URL: NATS_TEST_URL,
  NATS_PREFIX: prefix,
  NATS_ACK_WAIT_MS: '5000',
  MAX_BODY_BYTES: String(MAX_BODY_BYTES),
};
const subject = (session: string, kind: string, tenant = 'default') => commandSubject(prefix, tenant, session, kind);
const turns = (n: number, word = 'hello') =>
  Array.from({ length: n }, (_, i) => [
    { id: `u${i}`, type: 'user', text: `${word} question ${i}` },
    { id: `a${i}`, type: 'assistant', text: `answer ${i}` },
  ]).flat();
const compactBody = { strategy: { type: 'turn-window', maxTurns: 2 } };
/** What a client reads of an answer: its status and body (its `basis`, what it was decided on, is read before each run). */
const answered = ({ status, body }: CommandAnswer) => ({ status, body });

describeWithNats('NATS transport')('commands and decisions over NATS JetStream', () => {
  const harness = useService({ env, summarizer });

  const nats = useNatsSuite('NATS transport', { prefixes: [prefix] });

  const results = (session: string, count: number) => readStream(nats.client, names.resultStream, `${prefix}.results.default.${session}`, count);

  afterAll(async () => {
    await nats.close();
  });

  it('a compact command published while the service is stopped is executed when it starts', async () => {
    await harness
      .http()
      .post('/v1/sessions/offline/events')
      .send({ events: turns(6) })
      .expect(201);
    await harness.stop();
    await publishCommand(nats.client.js, subject('offline', 'compact'), compactBody, { msgId: 'offline-compact-1' });
    await harness.start();
    const [answer] = await results('offline', 1);
    expect(answer.headers).toMatchObject({ 'Command-Id': 'offline-compact-1', Status: '200', 'Command-Type': 'compact' });
    expect(answer.body).toMatchObject({ outcome: 'compacted', recorded: true, archived: ['u0', 'a0', 'u1', 'a1', 'u2', 'a2', 'u3', 'a3'] });
    const history = await harness.http().get('/v1/sessions/offline/compactions').expect(200);
    expect(history.body.compactions).toHaveLength(1);
  });

  it('answers on the Reply-To subject and on the results subject, with the HTTP answer', async () => {
    const inbox = createInbox();
    const sub = nats.nc.subscribe(inbox, { max: 1 });
    await publishCommand(nats.client.js, subject('replied', 'append'), { events: turns(1) }, { msgId: randomUUID(), replyTo: inbox });
    const replied = await (async () => {
      for await (const m of sub) return { status: m.headers?.get('Status'), body: m.json<{ revision: string; position: string }>() };
    })();
    expect(replied).toEqual({ status: '201', body: { revision: '1', position: expect.stringMatching(/^\d+$/) } });
    const [published] = await results('replied', 1);
    expect(published.body).toEqual(replied!.body);
  });

  it('answers a wildcard session token on Reply-To only, pointing at the wildcard (ncrecheck67: the rule alone)', async () => {
    for (const [session, at] of [
      ['*', 1],
      ['a.*', 3],
      ['a.>', 3],
    ] as const) {
      const inbox = createInbox();
      const sub = nats.nc.subscribe(inbox, { max: 1 });
      await publishCommand(nats.client.js, subject(session, 'append'), { events: turns(1) }, { msgId: randomUUID(), replyTo: inbox });
      for await (const m of sub) {
        expect({ status: m.headers?.get('Status'), body: m.json() }).toEqual({
          status: '400',
          body: {
            code: 'invalid_session_id',
            parameter: 'sessionId',
            message: expect.stringMatching(new RegExp(`: "[*>]" \\(U\\+00(2A|3E)\\) is character ${at}$`)),
          },
        });
      }
    }
  });

  it('rejects bad input with its error published, no redelivery, and the log unchanged', async () => {
    await harness
      .http()
      .post('/v1/sessions/target/events')
      .send({ events: turns(3) })
      .expect(201);
    const headBefore = await harness.service.store.headPosition();
    const cases: Array<{ subject: string; body: unknown; code: string; resultsOf: string; message?: string }> = [
      {
        subject: subject('target', 'compact'),
        body: '{"strategy": {"type": ',
        code: 'malformed_json',
        resultsOf: `${prefix}.results.default.target`,
        message: 'message body is not valid JSON: the body ends before its JSON value is complete at line 1, column 23 (position 22)',
      },
      { subject: subject('target', 'explode'), body: compactBody, code: 'unknown_command', resultsOf: `${prefix}.results.default.target` },
      {
        subject: subject('target', 'compact'),
        body: new Uint8Array([0x7b, 0xff, 0xfe, 0x7d]),
        code: 'malformed_body',
        resultsOf: `${prefix}.results.default.target`,
      },
      {
        subject: subject('target', 'compact'),
        body: new Uint8Array(gzipSync(JSON.stringify({ strategy: { type: 'sliding-window', maxEvents: 2 } }))),
        code: 'malformed_body',
        resultsOf: `${prefix}.results.default.target`,
        message:
          'the body is not valid UTF-8: it is gzip-compressed (it starts with the bytes 1f 8b); NATS commands are read as sent, never decompressed: send the JSON text, encoded as UTF-8',
      },
      {
        subject: subject('bad$session', 'compact'),
        body: compactBody,
        code: 'invalid_session_id',
        resultsOf: `${prefix}.results.default.bad$session`,
        message: 'sessionId: use 1 to 128 ASCII letters, digits or _ - : @ . (not "." or ".."): "$" (U+0024) is character 4',
      },
      {
        subject: subject('x'.repeat(129), 'compact'),
        body: compactBody,
        code: 'invalid_session_id',
        resultsOf: `${prefix}.results.default.${'x'.repeat(129)}`,
      },
      { subject: subject('target', 'compact', 'othertenant'), body: compactBody, code: 'unknown_tenant', resultsOf: `${prefix}.results.othertenant.target` },
      {
        subject: subject('target', 'append'),
        body: { events: [{ type: 'user', text: 'y'.repeat(MAX_BODY_BYTES) }] },
        code: 'payload_too_large',
        resultsOf: `${prefix}.results.default.target`,
      },
      {
        subject: subject('target', 'compact'),
        body: { strategy: { type: 'turn-window', maxTurns: -1 } },
        code: 'invalid_parameter',
        resultsOf: `${prefix}.results.default.target`,
      },
      { subject: subject('target', 'append'), body: { events: [{ type: 'user' }] }, code: 'validation_failed', resultsOf: `${prefix}.results.default.target` },
      // a member name given twice: JSON.parse kept the last events and appended them (newcomer ncverify50 F1)
      {
        subject: subject('target', 'append'),
        body: '{"events":[{"id":"d1","type":"user","text":"A"}],"events":[{"id":"d2","type":"user","text":"B"}]}',
        code: 'malformed_json',
        resultsOf: `${prefix}.results.default.target`,
        message:
          'message body gives the member "events" twice in one object, at events: first at line 1, column 2, again at line 1, column 50 (position 49); send each member once (JSON parsers differ on which one they keep)',
      },
    ];
    for (const c of cases) {
      const msgId = randomUUID();
      await publishCommand(nats.client.js, c.subject, c.body, { msgId });
      const isMine = (a: { headers: Record<string, string> }) => a.headers['Command-Id'] === msgId;
      const answers = await readStream(nats.client, names.resultStream, c.resultsOf, (got) => got.some(isMine), { durable: `bad-${msgId.slice(0, 8)}` });
      const mine = answers.find(isMine);
      expect({ code: mine?.body.code, status: Number(mine?.headers.Status) >= 400, message: typeof mine?.body.message }).toEqual({
        code: c.code,
        status: true,
        message: 'string',
      });
      if (c.message !== undefined) expect(mine?.body.message).toBe(c.message);
    }
    // A 5 MiB message is refused by the server's max_payload (1 MiB by default) before it is stored.
    await expect(publishCommand(nats.client.js, subject('target', 'append'), new Uint8Array(5 * 1024 * 1024), { msgId: randomUUID() })).rejects.toThrow(
      /max_payload|payload/i,
    );

    expect(await commandQueueSettled(nats.client, names)).toEqual({ pending: 0, unacked: 0, redelivered: 0 });
    expect(await harness.service.store.headPosition()).toBe(headBefore);
  });

  it('logs every rejected command once at warn (code, quoted subject, message id, never the payload), also one that has nowhere to be answered', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn');
    try {
      const payload = { strategy: { type: 'turn-window', maxTurns: 2 }, note: 'PAYLOAD-MARKER-63f1' };
      const longSession = 's'.repeat(300);
      const cases = [
        { subject: `${prefix}.commands.default`, code: 'invalid_subject', where: /no answer published/ },
        { subject: `${prefix}.commands.default.noverbsess`, code: 'invalid_subject', where: /no answer published/ },
        { subject: subject('logged', 'explode'), code: 'unknown_command', where: /answer published on the results subject/ },
        { subject: subject(longSession, 'explode'), code: 'unknown_command', where: /answer published on the results subject/ },
        // A wildcard token names no one session: its answer on a wildcard results subject would reach every subscriber (ncnats66 F4).
        { subject: subject('*', 'append'), code: 'invalid_session_id', where: /no answer published/ },
        { subject: subject('a.*', 'append'), code: 'invalid_session_id', where: /no answer published/ },
        { subject: subject('s1', 'append', '*'), code: 'unknown_tenant', where: /no answer published/ },
      ];
      for (const c of cases) {
        const msgId = `log-${randomUUID()}`;
        await publishCommand(nats.client.js, c.subject, payload, { msgId });
        const mine = async () => warn.mock.calls.map(([line]) => String(line)).filter((line) => line.includes(msgId));
        await eventually(async () => (await mine()).length > 0, 10_000, `a warn line for ${c.code} on ${c.subject}`);
        const [line, ...more] = await mine();
        expect(more).toEqual([]);
        expect(line).toContain(`command rejected: ${c.code} (`);
        expect(line).toContain(`subject ${quoteInput(c.subject)}`);
        expect(line).toMatch(c.where);
        expect(line).not.toContain('PAYLOAD-MARKER');
        expect(line.length).toBeLessThan(400);
      }
      expect(await commandQueueSettled(nats.client, names)).toEqual({ pending: 0, unacked: 0, redelivered: 0 });
    } finally {
      warn.mockRestore();
    }
  });

  it('with API_KEYS, the tenant comes from the subject: tenants of the keys are served, others rejected', async () => {
    const keyed = uniquePrefix();
    const service = await startService({ env: { ...env, NATS_PREFIX: keyed, API_KEYS: 'key-of-tenant-a:tenant-a' }, summarizer });
    try {
      const answerTo = async (tenant: string) => {
        const inbox = createInbox();
        const sub = nats.nc.subscribe(inbox, { max: 1 });
        // With API_KEYS a command id starts with its tenant (nats-tenant-isolation.e2e-spec.ts).
        await publishCommand(
          nats.client.js,
          commandSubject(keyed, tenant, 'shared-id', 'append'),
          { events: turns(1) },
          { msgId: `${tenant}:${randomUUID()}`, replyTo: inbox },
        );
        for await (const m of sub) return { status: m.headers?.get('Status'), code: m.json<{ code?: string }>().code };
      };
      expect(await answerTo('tenant-a')).toEqual({ status: '201', code: undefined });
      expect(await answerTo('default')).toEqual({ status: '403', code: 'unknown_tenant' });
      expect(await answerTo('tenant-b')).toEqual({ status: '403', code: 'unknown_tenant' });
      const log = await service.service.store.readAll({ maxCount: 1000 });
      expect([...new Set(log.map((e) => e.streamId))]).toEqual(['session-tenant-a.shared-id']);
    } finally {
      await service.stop();
      await deleteStreams(nats.client.jsm, keyed);
    }
  });

  it('a policy command answers the shape GET …/policy answers, takes it back as it is, and reads null as absent; its event names the command (via nats)', async () => {
    const executor = new NatsCommandExecutor(harness.service.app.get(CommandBus), harness.service.store, requestSchemas(harness.service.config), {
      prefix,
      tenants: new Set(['default']),
      maxBodyBytes: MAX_BODY_BYTES,
    });
    const run = (body: unknown, commandId: string) =>
      executor.execute({ subject: subject('nats-policy', 'policy'), data: new TextEncoder().encode(JSON.stringify(body)), commandId, redelivered: false });
    const set = await run({ strategy: { type: 'turn-window', maxTurns: 3 }, trigger: null, estimator: null }, 'cmd-p1');
    expect(set.status).toBe(200);
    // Who sent it (newcomer ncui74 F1): the command's id, via nats, as a compact command's decision records it.
    expect(set.body).toMatchObject({ sessionId: 'nats-policy', trigger: null, estimator: 'cl100k_base', requestedBy: { requestId: 'cmd-p1', via: 'nats' } });
    const position = (set.body as { position: string }).position;
    const got = await harness.http().get(`/v1/sessions/nats-policy/policy?minPosition=${position}`).expect(200);
    expect(got.body).toEqual(set.body);
    // Sent back by another command (its requestedBy included): the same policy, answered with the one who set it.
    const back = await run(got.body, 'cmd-p2');
    expect(answered(back)).toEqual(answered(set));
    const clear = await run({ strategy: null, trigger: null, estimator: null }, 'cmd-p3');
    expect(clear.body).toMatchObject({ strategy: null, trigger: null, estimator: null, requestedBy: { requestId: 'cmd-p3', via: 'nats' } });
    expect(answered(await run(clear.body, 'cmd-p4'))).toEqual(answered(clear));
    const log = await harness.service.store.readStream('session-default.nats-policy');
    const policyEvents = log.filter((e) => e.type === POLICY_SET);
    expect(policyEvents.map((e) => (e.data as { requestedBy?: unknown }).requestedBy)).toEqual([
      { requestId: 'cmd-p1', via: 'nats' },
      { requestId: 'cmd-p3', via: 'nats' },
    ]);
  });

  it('a redelivered command is not applied twice (append, policy, compact)', async () => {
    const app = harness.service.app;
    const executor = new NatsCommandExecutor(app.get(CommandBus), harness.service.store, requestSchemas(harness.service.config), {
      prefix,
      tenants: new Set(['default']),
      maxBodyBytes: MAX_BODY_BYTES,
    });
    const run = (kind: string, body: unknown, commandId: string, redelivered: boolean) =>
      executor.execute({ subject: subject('redelivered', kind), data: new TextEncoder().encode(JSON.stringify(body)), commandId, redelivered });
    const withoutIds = { events: turns(5).map(({ id: _id, ...e }) => e) };

    const first = await run('append', withoutIds, 'cmd-append', false);
    expect(first.status).toBe(201);
    const again = await run('append', withoutIds, 'cmd-append', true);
    expect(answered(again)).toEqual(answered(first));
    const policy = await run('policy', { strategy: { type: 'turn-window', maxTurns: 3 } }, 'cmd-policy', false);
    const policyAgain = await run('policy', { strategy: { type: 'turn-window', maxTurns: 3 } }, 'cmd-policy', true);
    expect(answered(policyAgain)).toEqual(answered(policy));
    const compact = await run('compact', compactBody, 'cmd-compact', false);
    expect(compact.body).toMatchObject({ outcome: 'compacted', recorded: true });
    // More turns arrive, so the same command would compact again if it were applied twice.
    await harness
      .http()
      .post('/v1/sessions/redelivered/events')
      .send({ events: turns(3, 'later') })
      .expect(201);
    const compactAgain = await run('compact', compactBody, 'cmd-compact', true);
    expect(compactAgain.body).toMatchObject({ compactionId: (compact.body as { compactionId: string }).compactionId, recorded: true, replayed: true });

    const log = await harness.service.store.readStream('session-default.redelivered');
    expect(log.filter((e) => e.type === 'ConversationEventAppended')).toHaveLength(10 + 6);
    expect(log.filter((e) => e.type === POLICY_SET)).toHaveLength(1);
    const ownId = (compact.body as { compactionId: string }).compactionId;
    expect(log.filter((e) => e.type === COMPACTION_COMPLETED && (e.data as { compactionId: string }).compactionId === ownId)).toHaveLength(1);
  });

  it('a redelivered compact command that failed is answered with its failure; a new command with the same body is a new pass', async () => {
    const executor = new NatsCommandExecutor(harness.service.app.get(CommandBus), harness.service.store, requestSchemas(harness.service.config), {
      prefix,
      tenants: new Set(['default']),
      maxBodyBytes: MAX_BODY_BYTES,
    });
    const run = (body: unknown, commandId: string, redelivered: boolean) =>
      executor.execute({ subject: subject('redelivered-failure', 'compact'), data: new TextEncoder().encode(JSON.stringify(body)), commandId, redelivered });
    await harness
      .http()
      .post('/v1/sessions/redelivered-failure/events')
      .send({ events: turns(5, 'FAIL') })
      .expect(201);
    const summarize = { strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 0 } };
    const failed = await run(summarize, 'cmd-fail', false);
    expect(failed.body).toMatchObject({ outcome: 'failed', recorded: true });
    const again = await run(summarize, 'cmd-fail', true);
    expect(again.body).toMatchObject({ outcome: 'failed', replayed: true, compactionId: (failed.body as { compactionId: string }).compactionId });
    const retried = await run(summarize, 'cmd-fail-retry', false);
    expect(retried.body).toMatchObject({ outcome: 'failed', recorded: true });
    expect((retried.body as { replayed?: boolean }).replayed).toBeUndefined();
    const log = await harness.service.store.readStream('session-default.redelivered-failure');
    expect(log.filter((e) => e.type === COMPACTION_FAILED)).toHaveLength(2);
  });

  it('a compact command redelivered after later decisions and appends is answered with its decision: no summarizer call, nothing written', async () => {
    const executor = new NatsCommandExecutor(harness.service.app.get(CommandBus), harness.service.store, requestSchemas(harness.service.config), {
      prefix,
      tenants: new Set(['default']),
      maxBodyBytes: MAX_BODY_BYTES,
    });
    const summarize = { strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 0 } };
    const run = (commandId: string, redelivered: boolean) =>
      executor.execute({ subject: subject('redelivered-later', 'compact'), data: new TextEncoder().encode(JSON.stringify(summarize)), commandId, redelivered });
    const append = (word: string) =>
      harness
        .http()
        .post('/v1/sessions/redelivered-later/events')
        .send({ events: turns(4, word).map((e) => ({ ...e, id: `${word}-${e.id}` })) })
        .expect(201);
    await append('first');
    const first = await run('cmd-first', false);
    expect(first.body).toMatchObject({ outcome: 'compacted', recorded: true });
    await append('second');
    expect((await run('cmd-second', false)).body).toMatchObject({ outcome: 'compacted', recorded: true });
    // more to compact, so the first command would compact again if it were planned again
    await append('third');
    const callsBefore = summarizerCalls;
    const logBefore = await harness.service.store.readStream('session-default.redelivered-later');

    const again = await run('cmd-first', true);
    expect(summarizerCalls).toBe(callsBefore);
    expect(again.status).toBe(200);
    const { revision: _r1, replayed, ...decision } = again.body as { revision: string; replayed?: boolean };
    const { revision: _r2, ...firstDecision } = first.body as { revision: string };
    expect(replayed).toBe(true);
    expect(decision).toEqual(firstDecision);
    expect(await harness.service.store.readStream('session-default.redelivered-later')).toHaveLength(logBefore.length);
  });

  it('an audit consumer that restarts receives every decision once, in log order per session', async () => {
    const sessions = ['audit-a', 'audit-b', 'audit-c'];
    for (const s of sessions)
      await harness
        .http()
        .post(`/v1/sessions/${s}/events`)
        .send({ events: turns(5, s === 'audit-b' ? 'FAIL' : 'fine') })
        .expect(201);
    // Decisions from both transports: NATS commands and HTTP requests; a summarizing strategy fails on audit-b.
    const summarize = { strategy: { type: 'recursive-summarization', maxEventsToKeep: 4, overlapSize: 0 } };
    const commandIds = new Map(sessions.map((s) => [s, randomUUID()]));
    for (const s of sessions) await publishCommand(nats.client.js, subject(s, 'compact'), summarize, { msgId: commandIds.get(s) });
    for (const s of sessions) await results(s, 1);
    for (const s of sessions)
      await harness
        .http()
        .post(`/v1/sessions/${s}/events`)
        .send({ events: turns(6, 'more').map((e) => ({ ...e, id: `m-${e.id}` })) })
        .expect(201);
    for (const s of sessions) await harness.http().post(`/v1/sessions/${s}/compactions`).set('X-Request-Id', `http-compact-${s}`).send(compactBody).expect(200);
    const feed = `${prefix}.decisions.default.*`;
    const audited = (got: ReadMessage[]) => got.filter((m) => String(m.body.sessionId).startsWith('audit-'));
    const first = audited(await readStream(nats.client, names.decisionStream, feed, (got) => audited(got).length >= 6, { durable: 'audit' }));
    expect(first).toHaveLength(6);

    // The service restarts (its feed resumes after its checkpoint) and a session is erased meanwhile.
    await harness.restart();
    await harness.http().delete('/v1/sessions/audit-c').set('X-Request-Id', 'http-erase-audit-c').expect(200);
    const rest = audited(await readStream(nats.client, names.decisionStream, feed, 1, { durable: 'audit' }));
    // Anything published twice would arrive now.
    rest.push(...audited(await readStream(nats.client, names.decisionStream, feed, 100, { durable: 'audit', timeoutMs: 1500 })));

    const received = [...first, ...rest];
    const positions = received.map((m) => m.headers['Log-Position']);
    expect(new Set(positions).size).toBe(positions.length);
    for (const s of sessions) {
      const mine = received.filter((m) => m.body.sessionId === s).map((m) => BigInt(m.body.position));
      expect(mine).toEqual([...mine].sort((a, b) => (a < b ? -1 : 1)));
    }
    const types = (s: string) => received.filter((m) => m.body.sessionId === s).map((m) => m.body.type);
    expect(types('audit-a')).toEqual([COMPACTION_COMPLETED, COMPACTION_COMPLETED]);
    expect(types('audit-b')).toEqual([COMPACTION_FAILED, COMPACTION_COMPLETED]);
    expect(types('audit-c')).toEqual([COMPACTION_COMPLETED, COMPACTION_COMPLETED, 'SessionErased']);
    // What was published is exactly the log's decisions (audit-c's events are gone with its erasure).
    const logged = (await harness.service.store.readAll({ maxCount: 100_000 })).filter(
      (e) => [COMPACTION_COMPLETED, COMPACTION_FAILED].includes(e.type) && String(e.streamId).includes('.audit-'),
    );
    const publishedOfLog = received.filter((m) => m.body.sessionId !== 'audit-c').map((m) => m.headers['Log-Position']);
    expect(publishedOfLog).toEqual(logged.map((e) => e.position.toString()));
    const failed = received.find((m) => m.body.type === COMPACTION_FAILED)!;
    expect(failed.body.decision).toMatchObject({ stage: 'summarize', reason: expect.stringContaining('refused for the test') });
    expect(failed.body.decision.checkpoint).toBeUndefined();
    // Newcomer ncretention (A4): each decision and the erasure record say who ordered them (open mode: no key label).
    const requesters = (s: string) => received.filter((m) => m.body.sessionId === s).map((m) => m.body.decision.requestedBy);
    for (const s of sessions.slice(0, 2))
      expect(requesters(s)).toEqual([
        { requestId: commandIds.get(s), via: 'nats' },
        { requestId: `http-compact-${s}`, requestIdFrom: 'client', via: 'http' },
      ]);
    expect(requesters('audit-c')).toEqual([
      { requestId: commandIds.get('audit-c'), via: 'nats' },
      { requestId: 'http-compact-audit-c', requestIdFrom: 'client', via: 'http' },
      { requestId: 'http-erase-audit-c', requestIdFrom: 'client', via: 'http' },
    ]);
  });
});
