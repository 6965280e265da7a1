/**
 * NATS commands are held to the write admission rule the HTTP routes are (`checkWriteAdmission`,
 * docs/http-api.md "Write deadline"): the executor marks each append and policy command with its arrival (the
 * start of its execution) and `WRITE_DEADLINE_MS`, and answers a command whose write could not
 * start in time 503 `request_expired` (a transient code: the consumer retries it in place).
 */
import type { CommandBus } from '@nestjs/cqrs';
import { SqliteEventStore } from '@lib/event-store';
import { admissionOf, checkWriteAdmission } from '@lib/session';
import { requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from './nats-command-executor';
import { TRANSIENT_CODES } from './nats-command-consumer';
import { commandSubject } from './nats-names';

describe('a NATS write command under WRITE_DEADLINE_MS', () => {
  let store: SqliteEventStore;
  afterEach(() => store.close());

  /** An executor whose command bus runs `handle` on each command. */
  function executorWith(handle: (command: object) => unknown, writeDeadlineMs?: number) {
    store = SqliteEventStore.open(':memory:');
    const commandBus = { execute: (command: object) => Promise.resolve().then(() => handle(command)) } as unknown as CommandBus;
    return new NatsCommandExecutor(commandBus, store, requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 }), {
      prefix: 'smc',
      tenants: new Set(['default']),
      maxBodyBytes: 1 << 20,
      writeDeadlineMs,
    });
  }
  const send = (executor: NatsCommandExecutor, kind: 'append' | 'policy', body: unknown) =>
    executor.execute({
      subject: commandSubject('smc', 'default', 's', kind),
      data: new TextEncoder().encode(JSON.stringify(body)),
      commandId: 'c-1',
      redelivered: false,
      msgId: 'c-1',
    });

  it('marks append and policy commands with their arrival and the deadline', async () => {
    const seen: object[] = [];
    const executor = executorWith((command) => {
      seen.push(command);
      return { revision: '0', position: '1' };
    }, 2500);
    await send(executor, 'append', { events: [{ id: 'u1', type: 'user', text: 'hi' }] });
    await send(executor, 'policy', { strategy: { type: 'sliding-window', maxEvents: 10 } });
    expect(seen.map((c) => admissionOf(c)?.deadlineMs)).toEqual([2500, 2500]);
    for (const c of seen) expect(admissionOf(c)!.clientGone()).toBe(false);
  });

  it('answers 503 request_expired (a transient code, retried in place) when the write could not start in time', async () => {
    const executor = executorWith((command) => {
      // the handler's check right before the write, reached 200 ms past a 100 ms deadline
      checkWriteAdmission(command, 's', { atArrival: 0n, now: 0n }, admissionOf(command)!.arrivedAtMs + 200);
      return { revision: '0', position: '1' };
    }, 100);
    const answer = await send(executor, 'append', { events: [{ id: 'u1', type: 'user', text: 'hi' }] });
    expect(answer).toMatchObject({ status: 503, body: { code: 'request_expired', deadlineMs: 100 } });
    expect(TRANSIENT_CODES.has('request_expired')).toBe(true);
  });

  it('sets no deadline without WRITE_DEADLINE_MS', async () => {
    const seen: object[] = [];
    const executor = executorWith((command) => {
      seen.push(command);
      return { revision: '0', position: '1' };
    });
    await send(executor, 'append', { events: [{ id: 'u1', type: 'user', text: 'hi' }] });
    // Admitted (its session's life is still fenced), with no deadline.
    expect(admissionOf(seen[0])?.deadlineMs).toBe(Number.POSITIVE_INFINITY);
  });
});
