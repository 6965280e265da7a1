/**
 * A NATS append redelivered after an upgrade (newcomer ncsre, upgrade finding 1, transport side):
 * the command was applied by a build before 3771ca3 to a session erased and written again, whose
 * ids leave the incarnation out. The redelivery must be answered from the events it wrote, through
 * the same id rule as HTTP (`isStoredEventOf`), without running the command again.
 */
import type { CommandBus } from '@nestjs/cqrs';
import { SqliteEventStore, deterministicEventId } from '@lib/event-store';
import { sessionKey, sessionStream } from '@lib/session';
import { requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from './nats-command-executor';
import { commandSubject } from './nats-names';

describe('a NATS append redelivered after an upgrade', () => {
  it('is answered from the events an earlier build wrote under its id form, without running the command', async () => {
    const store = SqliteEventStore.open(':memory:');
    try {
      const key = sessionKey('t', 's');
      const stream = sessionStream(key);
      const legacy = (clientId: string) => deterministicEventId('session-memory-compaction/event', `${key}\u0000${clientId}`);
      // Written, erased, written again by the earlier build (ids without the incarnation).
      await store.appendToStream(stream, [{ id: legacy('u1'), type: 'ConversationEventAppended', data: {} }]);
      await store.deleteStream(stream);
      const original = await store.appendToStream(stream, [{ id: legacy('u1'), type: 'ConversationEventAppended', data: {} }]);
      const commandBus = { execute: () => Promise.reject(new Error('must not run: the command was applied')) } as unknown as CommandBus;
      const executor = new NatsCommandExecutor(commandBus, store, requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 }), {
        prefix: 'smc',
        tenants: new Set(['t']),
        maxBodyBytes: 1 << 20,
      });
      const answer = await executor.execute({
        subject: commandSubject('smc', 't', 's', 'append'),
        data: new TextEncoder().encode(JSON.stringify({ events: [{ id: 'u1', type: 'user', text: 'hi' }] })),
        commandId: 'c1',
        redelivered: true,
      });
      expect(answer).toMatchObject({ status: 201, body: { revision: original.nextExpectedRevision.toString(), position: original.position.toString() } });
    } finally {
      await store.close();
    }
  });
});
