/**
 * Over NATS, an append is written in the life its session was in when this replica received it,
 * or refused 409 `session_erased` (`checkWriteAdmission`'s rule 3), also when it waited behind its
 * session's earlier commands (newcomer ncretry's F4: such an append, published and received before
 * an HTTP erasure, was written into the session's next life). Needs NATS at `NATS_TEST_URL` (own prefix).
 */
import type { EventStore } from '@lib/event-store';
import { COMMAND_EVENT_STORE } from '@lib/session';
import { useService } from '../support/service-harness';
import { holdAppends } from '../support/held-appends';
import { NATS_TEST_URL, describeWithNats, eventually, publishCommand, readStream, uniquePrefix, useNatsSuite } from '../support/nats-test';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';

const prefix = uniquePrefix();
const names = natsNames(prefix);
const user = (id: string) => ({ events: [{ id, type: 'user', text: `text of ${id}` }] });

describeWithNats('NATS life at arrival')('a NATS append is written in the life its session was in when it was received', () => {
  jest.setTimeout(60_000);
  const harness = useService({ env: { NATS_URL: NATS_TEST_URL, NATS_PREFIX: prefix, NATS_ACK_WAIT_MS: '10000' } });
  const nats = useNatsSuite('NATS life at arrival', { prefixes: [prefix], quiet: true });
  afterAll(() => nats.close());

  it('refuses 409 session_erased an append received before an erasure and queued behind its session’s earlier command', async () => {
    await harness.http().post('/v1/sessions/q1/events').send(user('old')).expect(201);
    const store = harness.service.app.get<EventStore>(COMMAND_EVENT_STORE);
    // The first NATS append's write is held: the second command of the session waits behind it, received.
    const held = holdAppends(store, (stream) => stream.endsWith('q1'), { firstOnly: true });
    try {
      await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'q1', 'append'), user('n1'), { msgId: 'q1-c1' });
      await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'q1', 'append'), user('n2'), { msgId: 'q1-c2' });
      await held.reached;
      await eventually(
        async () => (await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).num_ack_pending === 2,
        20_000,
        'both commands delivered to the replica',
      );
      // Both received; erased and written again over HTTP meanwhile.
      await harness.http().delete('/v1/sessions/q1').expect(200);
      const rewritten = harness
        .http()
        .post('/v1/sessions/q1/events')
        .send(user('new'))
        .then((res) => res);
      await new Promise((resolve) => setTimeout(resolve, 200));
      held.open();
      expect((await rewritten).status).toBe(201);
    } finally {
      held.open();
    }
    const answers = await readStream(nats.client, names.resultStream, `${prefix}.results.default.q1`, 2);
    expect(answers.map((a) => ({ command: a.headers['Command-Id'], status: a.headers.Status, code: a.body.code }))).toEqual([
      { command: 'q1-c1', status: '409', code: 'session_erased' },
      { command: 'q1-c2', status: '409', code: 'session_erased' },
    ]);
    const log = await harness.http().get('/v1/sessions/q1/events').expect(200);
    expect((log.body.events as { eventId?: string }[]).map((e) => e.eventId)).toEqual(['new']);
  });

  it('refuses, or drops unanswered, every append the command stream stored before an erasure, also those received after it (newcomer ncnats66 F1)', async () => {
    await harness.http().post('/v1/sessions/q2/events').send(user('old2')).expect(201);
    const store = harness.service.app.get<EventStore>(COMMAND_EVENT_STORE);
    // The first NATS append's write is held: the backlog behind it waits, part received by the replica, the rest in the stream.
    const held = holdAppends(store, (stream) => stream.endsWith('q2'), { firstOnly: true });
    const backlog = Array.from({ length: 40 }, (_, i) => `b${i}`);
    try {
      for (const id of backlog) await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'q2', 'append'), user(id), { msgId: `q2-${id}` });
      await held.reached;
      await harness.http().delete('/v1/sessions/q2').expect(200);
      // Commands published after the erasure are of the new life.
      await new Promise((resolve) => setTimeout(resolve, 50));
      await publishCommand(nats.client.js, commandSubject(prefix, 'default', 'q2', 'append'), user('after'), { msgId: 'q2-after' });
      held.open();
    } finally {
      held.open();
    }
    await eventually(
      async () => ((await harness.http().get('/v1/sessions/q2/events')).body.events ?? []).some((e: { eventId?: string }) => e.eventId === 'after'),
      30_000,
      'the command published after the erasure written',
    );
    // Every backlog command is answered 409 session_erased or was removed from the stream unanswered: none is in the new life.
    await eventually(
      async () => (await nats.client.jsm.consumers.info(names.commandStream, names.commandConsumer)).num_ack_pending === 0,
      30_000,
      'the backlog handled',
    );
    const log = await harness.http().get('/v1/sessions/q2/events').expect(200);
    expect((log.body.events as { eventId?: string }[]).map((e) => e.eventId)).toEqual(['after']);
    const answers = await readStream(nats.client, names.resultStream, `${prefix}.results.default.q2`, (got) =>
      got.some((a) => a.headers['Command-Id'] === 'q2-after'),
    );
    const backlogAnswers = answers.filter((a) => a.headers['Command-Id'] !== 'q2-after');
    expect(backlogAnswers.filter((a) => a.body.code !== 'session_erased')).toEqual([]);
  });
});
