/**
 * A NATS answer that tells the client to send the command again (409 `session_erased`, 409
 * `wrong_expected_revision`, 404 `session_not_found` of a compaction whose session was erased and
 * written again while it ran) says to send it with a new `Nats-Msg-Id`: JetStream drops a resend
 * under the same id within its 2-minute duplicate window, unanswered (newcomer ncnats73 F2). The
 * HTTP wording stays as it was; other refusals are unchanged.
 */
import type { CommandBus } from '@nestjs/cqrs';
import type { EventStore } from '@lib/event-store';
import { RevisionConflictError, SessionErasedMeanwhileError, SessionNotFoundError } from '@lib/session';
import { requestSchemas } from '../http/request-schemas';
import { toApiError } from '../http/api-error.filter';
import { NatsCommandExecutor } from './nats-command-executor';
import { NEW_COMMAND_ID_ADVICE } from './nats-command-errors';
import { commandSubject } from './nats-names';

describe('NATS answers that tell to send the command again', () => {
  let failure: Error;
  const commandBus = { execute: () => Promise.reject(failure) } as unknown as CommandBus;
  const executor = new NatsCommandExecutor(commandBus, {} as EventStore, requestSchemas({ maxEventsPerRequest: 100, maxTextLength: 100_000 }), {
    prefix: 'smc',
    tenants: new Set(['t']),
    maxBodyBytes: 1 << 20,
  });
  const append = () =>
    executor.execute({
      subject: commandSubject('smc', 't', 's', 'append'),
      data: new TextEncoder().encode(JSON.stringify({ events: [{ id: 'e1', type: 'user', text: 'hi' }] })),
      commandId: 'c1',
      redelivered: false,
    });

  it.each([
    ['session_erased', 409, () => new SessionErasedMeanwhileError('s')],
    ['wrong_expected_revision', 409, () => new RevisionConflictError('5', '0')],
    ['session_not_found', 404, () => new SessionNotFoundError('s', '2026-12-07T06:00:00.000Z', undefined, true)],
  ])('%s: the message says to send it with a new Nats-Msg-Id; the HTTP one is unchanged', async (code, status, make) => {
    failure = make();
    const http = toApiError(failure).body as { message: string };
    expect(http.message).not.toContain('Nats-Msg-Id');
    const answer = await append();
    expect(answer.status).toBe(status);
    expect(answer.body).toMatchObject({ code, message: `${http.message}; ${NEW_COMMAND_ID_ADVICE}` });
    expect((answer.body as { message: string }).message).toContain('new Nats-Msg-Id');
  });

  it('a refusal that does not tell to send it again is as over HTTP', async () => {
    failure = new SessionNotFoundError('s');
    const answer = await append();
    expect(answer.body).toEqual(toApiError(failure).body);
  });
});
