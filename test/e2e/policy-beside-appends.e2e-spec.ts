/**
 * `PUT …/policy` sent without `expectedRevision` ("any": no check, the service retries by itself)
 * on a session that other clients keep appending to through the same process is applied, never
 * refused. Newcomer ncrace74 F2: the PUT raced this process's appends (it did not wait in their
 * per-session queue) and gave up after 8 tries, answering 409 `wrong_expected_revision` with an
 * `expected` revision the client never sent (45 of 150 PUTs beside 6 appenders). In one process a
 * session's PUTs and appends now queue one after another. Triggers that never fire: no compaction
 * writes here, only the clients. A PUT waiting in that queue holds up no erasure of the session
 * (erasures do not queue there: a DELETE in the appends' queue once waited behind a held append).
 * In-process service (SQLite), about 10 s.
 */
import type { EventStore } from '@lib/event-store';
import { COMMAND_EVENT_STORE } from '@lib/session';
import { useService } from '../support/service-harness';
import { holdAppends } from '../support/held-appends';

describe('PUT …/policy without expectedRevision beside appends to the same session', () => {
  const harness = useService();
  const policies = [
    { strategy: { type: 'rolling-summary', keepTurns: 2, summarizeAtTokens: 60 }, trigger: { type: 'token-count', threshold: 10_000_000 } },
    { strategy: { type: 'sliding-window', maxEvents: 8 }, trigger: { type: 'turn-count', maxTurns: 100_000 } },
  ];

  it('applies every PUT (200) while 6 clients append to the session through the same process', async () => {
    const session = 'busy';
    const answers: Record<string, number> = {};
    const refused: unknown[] = [];
    const count = (method: string, status: number, body: { code?: string }) => {
      const key = `${method} ${status}${body.code ? ` ${body.code}` : ''}`;
      answers[key] = (answers[key] ?? 0) + 1;
      if (status >= 400) refused.push({ method, status, body });
    };
    let appending = true;
    const appender = async (writer: number) => {
      for (let i = 0; appending; i++) {
        const res = await harness
          .http()
          .post(`/v1/sessions/${session}/events`)
          .send({
            events: [
              { id: `w${writer}-${i}`, type: 'user', text: `hello ${i}` },
              { id: `w${writer}-${i}b`, type: 'assistant', text: `answer ${i}` },
            ],
          });
        count('POST', res.status, res.body as { code?: string });
      }
    };
    const writers = Array.from({ length: 6 }, (_, w) => appender(w));
    let last: { strategy: unknown; revision: string } | undefined;
    try {
      for (let i = 0; i < 40; i++) {
        const res = await harness
          .http()
          .put(`/v1/sessions/${session}/policy`)
          .send(policies[i % 2]);
        count('PUT', res.status, res.body as { code?: string });
        if (res.status === 200) last = res.body as { strategy: unknown; revision: string };
      }
    } finally {
      appending = false;
      await Promise.all(writers);
    }
    expect(refused).toEqual([]);
    expect(answers['PUT 200']).toBe(40);
    expect(answers['POST 201']).toBeGreaterThan(40);
    // The last PUT's policy is the one in force.
    const current = await harness.http().get(`/v1/sessions/${session}/policy`).expect(200);
    expect(current.body.strategy).toEqual(last?.strategy);
    expect(current.body.revision).toBe(last?.revision);
  });

  it('a PUT queued behind a held append of its session holds up no DELETE of it; both writes then meet the erasure (409 session_erased)', async () => {
    const session = 'held';
    await harness
      .http()
      .post(`/v1/sessions/${session}/events`)
      .send({ events: [{ id: 'first', type: 'user', text: 'hi' }] })
      .expect(201);
    const held = holdAppends(harness.service.app.get<EventStore>(COMMAND_EVENT_STORE), (stream) => stream.endsWith(`.${session}`), { firstOnly: true });
    try {
      const append = harness
        .http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: [{ id: 'held', type: 'user', text: 'held' }] })
        .then((res) => res);
      await held.reached;
      const put = harness
        .http()
        .put(`/v1/sessions/${session}/policy`)
        .send(policies[1])
        .then((res) => res);
      // The PUT is in the session's queue behind the held append; the DELETE does not wait there.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await harness.http().delete(`/v1/sessions/${session}`).expect(200);
      held.open();
      expect([(await append).status, (await append).body.code]).toEqual([409, 'session_erased']);
      expect([(await put).status, (await put).body.code]).toEqual([409, 'session_erased']);
    } finally {
      held.open();
    }
    // Sent again, the PUT is written in the session's new life.
    await harness.http().put(`/v1/sessions/${session}/policy`).send(policies[1]).expect(200);
  });
});
