/**
 * Issue 17 through the HTTP API: the largest revisions are 4xx or empty pages, never 500s
 * (item 2); recall finds words inside scripts written without spaces and emoji (item 5);
 * unrecorded compaction answers carry no id that leads nowhere, and a resent event is answered
 * the same way through /events and /messages (item 6).
 */
import { useService } from '../support/service-harness';

describe('issue 17 hardening', () => {
  const harness = useService({ env: { MAX_WAIT_MS: '0' } });
  const http = () => harness.http();

  describe('numbers at the edge of their range (item 2)', () => {
    beforeAll(async () => {
      await http()
        .post('/v1/sessions/edge/events')
        .send({ events: [{ id: 'u1', type: 'user', text: 'hi' }] })
        .expect(201);
    });

    it('reads an empty log page from the largest revision', async () => {
      const res = await http().get('/v1/sessions/edge/events?fromRevision=9223372036854775807&limit=1000');
      expect(res.status).toBe(200);
      expect(res.body.events ?? res.body.items).toEqual([]);
    });

    it('answers 400 naming the parameter one past the range', async () => {
      for (const [path, name] of [
        ['/v1/sessions/edge/events?fromRevision=9223372036854775808', 'fromRevision'],
        ['/v1/sessions/edge/window?atRevision=9999999999999999999', 'atRevision'],
        ['/v1/sessions/edge/window?minPosition=18446744073709551616', 'minPosition'],
        ['/v1/recall?q=hi&limit=101', 'limit'],
      ]) {
        const res = await http().get(path);
        expect({ status: res.status, code: res.body.code, parameter: res.body.parameter }).toEqual({ status: 400, code: 'validation_failed', parameter: name });
      }
    });
  });

  describe('recall in scripts written without spaces, and emoji (item 5)', () => {
    const texts: Record<string, string> = {
      ja: '日本語のテキストを検索できますか',
      zh: '请帮我把周五从上海飞往东京的航班改签到周六',
      th: 'ฉันอยากเปลี่ยนเที่ยวบินไปกรุงเทพพรุ่งนี้',
      emoji: 'Great trip 😀 see you at gate B12',
      en: 'The reservation XK42Q9 moves to Saturday',
    };
    beforeAll(async () => {
      const events = Object.entries(texts).map(([id, text]) => ({ id, type: 'user', text }));
      const res = await http().post('/v1/sessions/scripts/events').send({ events }).expect(201);
      await http().get(`/v1/sessions/scripts/window?minPosition=${res.body.position}`);
      // give the projector the moment minPosition=0-wait does not
      for (let i = 0; i < 50; i++) {
        const found = await http().get('/v1/recall?q=XK42Q9');
        if (found.body.items?.length) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    });
    const hits = async (q: string) => {
      const res = await http().get(`/v1/recall?q=${encodeURIComponent(q)}&sessionId=scripts`);
      expect(res.status).toBe(200);
      return (res.body.items as Array<{ eventId: string; snippet: string }>).map((h) => h.eventId);
    };

    it.each([
      ['Japanese word inside a run', 'テキスト', 'ja'],
      ['Japanese two-character word', '検索', 'ja'],
      ['Chinese place names', '上海', 'zh'],
      ['Chinese phrase inside a run', '飞往东京', 'zh'],
      ['Thai word inside a run', 'เที่ยวบิน', 'th'],
      ['one emoji', '😀', 'emoji'],
      ['emoji with a Latin word', '😀 gate', 'emoji'],
      ['Chinese with a Latin word of another event finds nothing', '上海 XK42Q9', null],
    ])('%s: %s', async (_name, q, expected) => {
      expect(await hits(q)).toEqual(expected ? [expected] : []);
    });

    it('keeps word search with BM25 for other queries', async () => {
      expect(await hits('reservation saturday')).toEqual(['en']);
      expect(await hits('reserv')).toEqual([]); // whole words, not substrings, outside those scripts
    });

    it('marks the match in a trigram snippet', async () => {
      const res = await http().get(`/v1/recall?q=${encodeURIComponent('テキスト')}`);
      expect(res.body.items[0].snippet).toContain('<mark>テキスト</mark>');
    });
  });

  describe('compaction ids and retries (item 6)', () => {
    beforeAll(async () => {
      await http()
        .post('/v1/sessions/ids/events')
        .send({
          events: [1, 2, 3].flatMap((n) => [
            { id: `u${n}`, type: 'user', text: `question ${n}` },
            { id: `a${n}`, type: 'assistant', text: `answer ${n}` },
          ]),
        })
        .expect(201);
    });

    it('gives a compactionId only to recorded answers, and every given id is readable', async () => {
      const answers = [
        await http()
          .post('/v1/sessions/ids/compactions')
          .send({ strategy: { type: 'sliding-window', maxEvents: 20 } }),
        await http()
          .post('/v1/sessions/ids/compactions')
          .send({ strategy: { type: 'sliding-window', maxEvents: 1 }, trigger: { type: 'turn-count', maxTurns: 50 } }),
        await http()
          .post('/v1/sessions/ids/compactions')
          .send({ strategy: { type: 'sliding-window', maxEvents: 1 }, dryRun: true }),
      ];
      expect(answers.map((a) => a.body.outcome)).toEqual(['noop', 'not-triggered', 'compacted']);
      for (const a of answers) {
        expect(a.body.recorded).toBe(false);
        expect(a.body).not.toHaveProperty('compactionId');
      }
      const recorded = await http()
        .post('/v1/sessions/ids/compactions')
        .send({ strategy: { type: 'sliding-window', maxEvents: 1 } });
      expect(recorded.body.recorded).toBe(true);
      await http().get(`/v1/sessions/ids/compactions/${recorded.body.compactionId}`).expect(200);
    });

    const call = { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
    const routes = {
      events: {
        path: '/v1/sessions/retry-events/events',
        batch: [
          { id: 'x1', type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
          { id: 'x2', type: 'tool', responses: [{ toolCallId: 'c1', name: 'lookup', data: 'ok' }] },
          { id: 'x3', type: 'assistant', text: 'done' },
        ],
        body: (items: unknown[]) => ({ events: items }),
      },
      messages: {
        path: '/v1/sessions/retry-messages/messages',
        batch: [
          { id: 'x1', role: 'assistant', content: null, tool_calls: [call] },
          { id: 'x2', role: 'tool', tool_call_id: 'c1', content: 'ok' },
          { id: 'x3', role: 'assistant', content: 'done' },
        ],
        body: (items: unknown[]) => ({ messages: items }),
      },
    };

    it.each(Object.keys(routes))('through /%s: resending any part of a batch answers its original result; other content under an id is 409', async (name) => {
      const route = routes[name as keyof typeof routes];
      const first = await http().post(route.path).send(route.body(route.batch)).expect(201);
      const results = [];
      for (const part of [[0], [1], [2], [0, 1], [1, 2], [0, 1, 2]]) {
        const res = await http()
          .post(route.path)
          .send(route.body(part.map((i) => route.batch[i])));
        results.push([res.status, res.body.revision]);
      }
      expect(results).toEqual([
        [201, '0'],
        [201, '1'],
        [201, '2'],
        [201, '1'],
        [201, '2'],
        [201, first.body.revision],
      ]);
      const changed = JSON.parse(JSON.stringify(route.batch[2]));
      if ('text' in changed) changed.text = 'other';
      else changed.content = 'other';
      const clash = await http()
        .post(route.path)
        .send(route.body([changed]));
      expect({ status: clash.status, code: clash.body.code }).toEqual({ status: 409, code: 'duplicate_event_id' });
    });

    it('writes nothing when a clear finds no policy ever set, and answers the clear again when it was cleared', async () => {
      await post('no-policy', { events: [p1] }).expect(201);
      const head = await harness.service.store.headPosition();
      const clear = await http().put('/v1/sessions/no-policy/policy').send({ strategy: null }).expect(200);
      expect(clear.body).toMatchObject({ sessionId: 'no-policy', strategy: null, trigger: null, revision: '0' });
      expect(clear.body).not.toHaveProperty('setAt');
      expect(await harness.service.store.headPosition()).toBe(head);
      await http()
        .put('/v1/sessions/no-policy/policy')
        .send({ strategy: { type: 'sliding-window', maxEvents: 5 } })
        .expect(200);
      const cleared = await http().put('/v1/sessions/no-policy/policy').send({ strategy: null }).expect(200);
      const afterClear = await harness.service.store.headPosition();
      const again = await http().put('/v1/sessions/no-policy/policy').send({ strategy: null }).expect(200);
      expect(again.body.revision).toBe(cleared.body.revision);
      expect(await harness.service.store.headPosition()).toBe(afterClear);
    });

    // userId is the session's attribute, not the event's content: adding or leaving it out does not
    // turn a resend into a conflict; a different user on an owned session stays user_id_conflict.
    const post = (session: string, body: object) => http().post(`/v1/sessions/${session}/events`).send(body);
    const p1 = { id: 'p1', type: 'user', text: 'hello' };

    it('answers a resend that adds the userId with the original result, and the session gets no owner from it', async () => {
      const first = await post('uid-added', { events: [p1] }).expect(201);
      const resend = await post('uid-added', { events: [p1], userId: 'mallory' });
      expect({ status: resend.status, revision: resend.body.revision }).toEqual({ status: 201, revision: first.body.revision });
      const log = await http().get('/v1/sessions/uid-added/events').expect(200);
      expect(log.body.events).toHaveLength(1);
    });

    it('answers a resend that leaves the userId out with the original result', async () => {
      const first = await post('uid-dropped', { events: [p1], userId: 'alice' }).expect(201);
      const resend = await post('uid-dropped', { events: [p1] });
      expect({ status: resend.status, revision: resend.body.revision }).toEqual({ status: 201, revision: first.body.revision });
    });

    it('refuses a resend naming another user of an owned session with user_id_conflict', async () => {
      await post('uid-other', { events: [p1], userId: 'alice' }).expect(201);
      const resend = await post('uid-other', { events: [p1], userId: 'mallory' });
      expect({ status: resend.status, code: resend.body.code }).toEqual({ status: 409, code: 'user_id_conflict' });
    });

    it('answers the same event sent through /events, then through /messages (with and without userId), as a retry', async () => {
      const first = await post('uid-routes', { events: [{ id: 'm1', type: 'user', text: 'hi there' }], userId: 'alice' }).expect(201);
      for (const userId of [undefined, 'alice']) {
        const resend = await http()
          .post('/v1/sessions/uid-routes/messages')
          .send({ messages: [{ id: 'm1', role: 'user', content: 'hi there' }], ...(userId ? { userId } : {}) });
        expect({ status: resend.status, revision: resend.body.revision }).toEqual({ status: 201, revision: first.body.revision });
      }
    });

    it('takes a native system event named "notice" as a notice, as /messages does: never pinned, the same event through either route; notice false with that name is refused', async () => {
      const session = 'notice-by-name';
      await http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: [{ id: 's0', type: 'system', text: 'You are AirlineBot.' }] })
        .expect(201);
      const named = { id: 'n1', type: 'system', name: 'notice', text: 'File x.pdf attached' };
      const first = await http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: [named] })
        .expect(201);
      const resent = await http()
        .post(`/v1/sessions/${session}/messages`)
        .send({ messages: [{ id: 'n1', role: 'system', name: 'notice', content: 'File x.pdf attached' }] })
        .expect(201);
      expect(resent.body.revision).toBe(first.body.revision);
      const window = await http().get(`/v1/sessions/${session}/window?format=openai`).expect(200);
      expect(window.body.messages).toEqual([
        { role: 'system', content: 'You are AirlineBot.' },
        { role: 'system', name: 'notice', content: 'File x.pdf attached' },
      ]);
      const refused = await http()
        .post(`/v1/sessions/${session}/events`)
        .send({ events: [{ ...named, id: 'n2', notice: false }] });
      expect({ status: refused.status, code: refused.body.code, parameter: refused.body.parameter }).toEqual({
        status: 400,
        code: 'validation_failed',
        parameter: 'events[0].notice',
      });
    });

    it('answers a notice sent through one route and resent through the other (system or developer) as a retry, and stores it once', async () => {
      const native = { id: 'n1', type: 'system', text: 'The user switched to the mobile app.', notice: true };
      const openai = (role: string) => ({ id: 'n1', role, name: 'notice', content: 'The user switched to the mobile app.' });
      for (const [session, send] of [
        [
          'notice-events-first',
          [
            { path: 'events', body: { events: [native] } },
            ...['system', 'developer'].map((role) => ({ path: 'messages', body: { messages: [openai(role)] } })),
          ],
        ],
        [
          'notice-messages-first',
          [
            { path: 'messages', body: { messages: [openai('system')] } },
            { path: 'events', body: { events: [native] } },
          ],
        ],
      ] as const) {
        await http()
          .post(`/v1/sessions/${session}/events`)
          .send({ events: [{ id: 'u0', type: 'user', text: 'hello' }] })
          .expect(201);
        const answers = [];
        for (const { path, body } of send) answers.push(await http().post(`/v1/sessions/${session}/${path}`).send(body));
        expect(answers.map((a) => a.status)).toEqual(send.map(() => 201));
        expect(new Set(answers.map((a) => a.body.revision))).toEqual(new Set(['1']));
        const log = await http().get(`/v1/sessions/${session}/events`).expect(200);
        expect(log.body.events.map((e: { eventId: string }) => e.eventId)).toEqual(['u0', 'n1']);
        const window = await http().get(`/v1/sessions/${session}/window?format=openai`).expect(200);
        expect(window.body.messages.at(-1)).toMatchObject({ role: 'system', name: 'notice', content: native.text });
      }
    });
  });
});
