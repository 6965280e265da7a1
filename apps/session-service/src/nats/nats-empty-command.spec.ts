/**
 * An empty NATS command body is `{}`, as an HTTP request with an empty body is (newcomer ncnats72
 * F5): a compact command compacts by the session's policy, and an append is told what it lacks
 * (`events: is required`), not that its JSON is malformed. A byte-order mark alone is empty too.
 */
import type { CommandBus } from '@nestjs/cqrs';
import type { EventStore } from '@lib/event-store';
import { CompactSessionCommand } from '@lib/session';
import { requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from './nats-command-executor';
import { commandSubject } from './nats-names';

describe('an empty NATS command body', () => {
  const ran: object[] = [];
  const commandBus = { execute: (command: object) => Promise.resolve(ran.push(command)).then(() => ({ outcome: 'noop' })) } as unknown as CommandBus;
  const executor = new NatsCommandExecutor(commandBus, {} as EventStore, requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 }), {
    prefix: 'smc',
    tenants: new Set(['t']),
    maxBodyBytes: 1 << 20,
  });
  const send = (kind: 'append' | 'compact', data: Uint8Array) =>
    executor.execute({ subject: commandSubject('smc', 't', 's', kind), data, commandId: 'c1', redelivered: false });
  beforeEach(() => void ran.splice(0));

  it.each([
    ['no byte', new Uint8Array()],
    ['a byte-order mark alone', new Uint8Array([0xef, 0xbb, 0xbf])],
  ])('with %s: a compact command compacts by the policy, as HTTP', async (_, data) => {
    await send('compact', data);
    expect(ran).toHaveLength(1);
    expect(ran[0]).toBeInstanceOf(CompactSessionCommand);
    expect(ran[0]).toMatchObject({ strategy: null, trigger: null, estimator: null });
  });

  it('an append is refused for what it lacks, as HTTP, nothing run', async () => {
    const answer = await send('append', new Uint8Array());
    expect(answer).toMatchObject({ status: 400, body: { code: 'validation_failed', message: expect.stringContaining('events: is required') } });
    expect(ran).toEqual([]);
  });
});
