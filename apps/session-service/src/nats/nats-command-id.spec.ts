/**
 * With `API_KEYS`, a command's `Nats-Msg-Id` is `<tenant>:<command id>` (docs/nats.md, Command ids).
 * `tenant-a:` alone was accepted (newcomer ncops): every command with it shares one
 * de-duplication id, so JetStream drops all but the first within its window and the service would
 * answer each as the first. It is refused with `invalid_command_id`, nothing run.
 */
import type { CommandBus } from '@nestjs/cqrs';
import { SqliteEventStore } from '@lib/event-store';
import { requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from './nats-command-executor';
import { commandSubject } from './nats-names';

describe('the Nats-Msg-Id of a command with API_KEYS', () => {
  let store: SqliteEventStore;
  let ran: number;
  let executor: NatsCommandExecutor;
  beforeEach(() => {
    store = SqliteEventStore.open(':memory:');
    ran = 0;
    const commandBus = {
      execute: () => {
        ran++;
        return Promise.resolve({ revision: 1n, position: 1n });
      },
    } as unknown as CommandBus;
    executor = new NatsCommandExecutor(commandBus, store, requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 }), {
      prefix: 'smc',
      tenants: new Set(['tenant-a']),
      maxBodyBytes: 1 << 20,
      openMode: false,
    });
  });
  afterEach(() => store.close());

  const send = (msgId: string) =>
    executor.execute({
      subject: commandSubject('smc', 'tenant-a', 's', 'append'),
      data: new TextEncoder().encode(JSON.stringify({ events: [{ id: 'u1', type: 'user', text: 'hi' }] })),
      commandId: msgId,
      redelivered: false,
      msgId,
    });

  it('refuses "<tenant>:" with nothing after it (invalid_command_id), running nothing', async () => {
    const answer = await send('tenant-a:');
    expect(answer).toMatchObject({ status: 400, body: { code: 'invalid_command_id' } });
    expect((answer.body as { message: string }).message).toMatch(/^Nats-Msg-Id "tenant-a:" has no command id after "tenant-a:": /);
    expect(ran).toBe(0);
  });

  it('refuses an id without the tenant’s prefix, and runs one with a command id after it', async () => {
    expect(await send('c-1')).toMatchObject({
      status: 400,
      body: { code: 'invalid_command_id', message: expect.stringContaining('does not start with "tenant-a:"') },
    });
    expect(ran).toBe(0);
    expect((await send('tenant-a:c-1')).status).toBe(201);
    expect(ran).toBe(1);
  });
});
