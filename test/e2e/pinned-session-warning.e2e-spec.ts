/**
 * Several writers whose tool answers land after another writer's next user message pin a session
 * (newcomer ncagentloop F3): DESIGN §3.3 rule 3 moves the cut back turn after turn to the first
 * call, so every automatic pass is a `noop` `open-tool-call` naming it while the trigger fires.
 * The contract stays; the service says so in one warn line per recorded noop.
 */
import { AutoCompactionScheduler } from '@lib/session';
import { captureLogLines } from '../support/captured-log-lines';
import { useService } from '../support/service-harness';

describe('a session pinned by interleaved writers (open-tool-call over the trigger) is named in a warn line', () => {
  const service = useService();
  afterEach(() => jest.restoreAllMocks());

  it('logs one warn line naming the first call when the automatic pass archives nothing while the trigger fires', async () => {
    const lines = captureLogLines(['warn']);
    const http = service.http;
    const call = (w: string, t: number) => ({
      id: `c${w}${t}`,
      type: 'assistant',
      text: null,
      toolCalls: [{ id: `call${w}${t}`, name: 'f', arguments: '{}' }],
    });
    const answer = (w: string, t: number) => ({ id: `r${w}${t}`, type: 'tool', responses: [{ toolCallId: `call${w}${t}`, name: 'f', data: '{"ok":true}' }] });
    // two workers in a pipeline: each posts its next user message and call, then the other's previous answer lands
    const events = [
      { id: 'uA0', type: 'user', text: 'worker A task 0' },
      call('A', 0),
      { id: 'uB0', type: 'user', text: 'worker B task 0' },
      call('B', 0),
      answer('A', 0),
      { id: 'uA1', type: 'user', text: 'worker A task 1' },
      call('A', 1),
      answer('B', 0),
      { id: 'uB1', type: 'user', text: 'worker B task 1' },
      call('B', 1),
      answer('A', 1),
    ];
    for (const e of events)
      await http()
        .post('/v1/sessions/pinned/events')
        .send({ events: [e] })
        .expect(201);
    // the policy comes once the session is pinned; the next append starts the automatic pass
    await http()
      .put('/v1/sessions/pinned/policy')
      .send({ strategy: { type: 'turn-window', maxTurns: 1 }, trigger: { type: 'turn-count', maxTurns: 2 } })
      .expect(200);
    await http()
      .post('/v1/sessions/pinned/events')
      .send({ events: [{ id: 'uA2', type: 'user', text: 'worker A task 2' }, call('A', 2), answer('B', 1)] })
      .expect(201);
    await service.service.app.get(AutoCompactionScheduler).whenIdle();
    const pinned = lines.filter((l) => l.includes('is over its trigger and its automatic pass archived nothing'));
    expect(pinned.length).toBeGreaterThanOrEqual(1);
    expect(pinned[0]).toContain('session "pinned"');
    expect(pinned[0]).toContain('tool call "callA0"');
    expect(pinned[0]).toContain("post each tool answer before the session's next user message");
    // the audit trail names the same call (DESIGN §3.6 "with the call id and the event that holds it"; newcomer ncauditor60 F1)
    const history = await http().get('/v1/sessions/pinned/compactions').expect(200);
    expect(history.body.compactions[0]).toMatchObject({ outcome: 'noop', reason: 'open-tool-call', toolCallId: 'callA0', eventId: 'cA0' });
    // the contract: a commanded pass answers the same noop (nothing archived)
    const res = await http()
      .post('/v1/sessions/pinned/compactions')
      .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
      .expect(200);
    expect(res.body).toMatchObject({ outcome: 'noop', reason: 'open-tool-call', toolCallId: 'callA0' });
  });
});
