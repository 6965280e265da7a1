/**
 * A NATS command body whose object gives a member name twice is refused as over HTTP (newcomer
 * ncverify50 F1): 400 `malformed_json` naming the member, its path and where, and no command runs
 * (JSON.parse kept the last `events` and appended it).
 */
import type { CommandBus } from '@nestjs/cqrs';
import type { EventStore } from '@lib/event-store';
import { requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from './nats-command-executor';
import { commandSubject } from './nats-names';

describe('a NATS command body giving a member name twice', () => {
  const ran: object[] = [];
  const commandBus = {
    execute: (command: object) => Promise.resolve(ran.push(command)).then(() => ({ revision: '0', position: '1' })),
  } as unknown as CommandBus;
  const executor = new NatsCommandExecutor(commandBus, {} as EventStore, requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 }), {
    prefix: 'smc',
    tenants: new Set(['t']),
    maxBodyBytes: 1 << 20,
  });
  const send = (kind: 'append' | 'messages' | 'compact' | 'policy', text: string) =>
    executor.execute({ subject: commandSubject('smc', 't', 's', kind), data: new TextEncoder().encode(text), commandId: 'c1', redelivered: false });
  beforeEach(() => void ran.splice(0));

  it.each([
    [
      'append',
      '{"events":[{"id":"d1","type":"user","text":"A"}],"events":[{"id":"d2","type":"user","text":"B"}]}',
      'message body gives the member "events" twice in one object, at events: first at line 1, column 2, again at line 1, column 50 (position 49); send each member once (JSON parsers differ on which one they keep)',
    ],
    [
      'append',
      '\uFEFF{"events":[{"id":"d1","type":"user","text":"A",\n"\\u0074ext":"B"}]}',
      'message body gives the member "text" twice in one object, at events[0].text: first at line 1, column 37, again at line 2, column 1 (position 48); send each member once (JSON parsers differ on which one they keep)',
    ],
    [
      'policy',
      '{"strategy":{"type":"turn-window","maxTurns":2,"maxTurns":50}}',
      expect.stringContaining('"maxTurns" twice in one object, at strategy.maxTurns: '),
    ],
    ['compact', '{"dryRun":true,"dryRun":false}', expect.stringContaining('"dryRun" twice in one object, at dryRun: ')],
  ] as const)('%s %s: 400 malformed_json, nothing run', async (kind, text, message) => {
    const answer = await send(kind, text);
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 400, body: { code: 'malformed_json', message } });
    expect(ran).toEqual([]);
  });

  it('the same name in two objects runs as before', async () => {
    const answer = await send('append', '{"events":[{"id":"a","type":"user","text":"id"},{"id":"b","type":"user","text":"text"}]}');
    expect(answer.status).toBe(201);
    expect(ran).toHaveLength(1);
  });
});
