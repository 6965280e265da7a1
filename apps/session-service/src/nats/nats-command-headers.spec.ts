/**
 * Newcomer ncnatsops F3: a command with a valid inbox in a `reply-to` or `REPLY-TO` header was
 * applied and nothing went to the inbox, without a word (an empty `Reply-To` the same), though the
 * docs/nats.md says an unusable `Reply-To` is refused. `Reply-To` is now read in any letter case (as HTTP
 * reads header names); empty, or given twice with different values, it is refused
 * (`invalid_reply_to`). `Nats-Msg-Id` is JetStream's, de-duplicated on that exact spelling only: a
 * look-alike spelling alone is refused (`invalid_command_id`) naming the one to use.
 */
import { brotliCompressSync, deflateSync } from 'node:zlib';
import type { CommandBus } from '@nestjs/cqrs';
import { headers } from '@nats-io/transport-node';
import { SqliteEventStore } from '@lib/event-store';
import { requestSchemas } from '../http/request-schemas';
import { NatsCommandExecutor } from './nats-command-executor';
import { readCommandHeaders } from './nats-command-headers';
import { commandSubject } from './nats-names';

function hdrs(entries: Array<[string, string]>) {
  const h = headers();
  for (const [k, v] of entries) h.append(k, v);
  return h;
}

describe('readCommandHeaders', () => {
  it.each(['Reply-To', 'reply-to', 'REPLY-TO', 'rEpLy-To'])('reads %s as Reply-To', (name) => {
    expect(readCommandHeaders(hdrs([[name, '_INBOX.abc']]))).toEqual({
      msgId: null,
      replyTo: '_INBOX.abc',
      replyToConflict: null,
      msgIdSpelling: null,
      contentEncoding: null,
    });
  });

  it('an empty Reply-To is given (empty), not absent; two different ones conflict; the same twice is one', () => {
    expect(readCommandHeaders(hdrs([['Reply-To', '']])).replyTo).toBe('');
    expect(
      readCommandHeaders(
        hdrs([
          ['Reply-To', '_INBOX.a'],
          ['reply-to', '_INBOX.b'],
        ]),
      ),
    ).toMatchObject({
      replyTo: null,
      replyToConflict: ['Reply-To: "_INBOX.a"', 'reply-to: "_INBOX.b"'],
    });
    expect(
      readCommandHeaders(
        hdrs([
          ['Reply-To', '_INBOX.a'],
          ['REPLY-TO', '_INBOX.a'],
        ]),
      ),
    ).toMatchObject({ replyTo: '_INBOX.a', replyToConflict: null });
    expect(readCommandHeaders(undefined)).toEqual({ msgId: null, replyTo: null, replyToConflict: null, msgIdSpelling: null, contentEncoding: null });
  });

  it('reads Nats-Msg-Id in its exact spelling only, naming a look-alike given without it', () => {
    expect(readCommandHeaders(hdrs([['Nats-Msg-Id', 'c-1']]))).toMatchObject({ msgId: 'c-1', msgIdSpelling: null });
    expect(readCommandHeaders(hdrs([['nats-msg-id', 'c-1']]))).toMatchObject({ msgId: null, msgIdSpelling: 'nats-msg-id' });
    expect(
      readCommandHeaders(
        hdrs([
          ['Nats-Msg-Id', 'c-1'],
          ['NATS-MSG-ID', 'c-2'],
        ]),
      ),
    ).toMatchObject({ msgId: 'c-1', msgIdSpelling: null });
  });
});

describe('a command whose headers the executor refuses', () => {
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
      tenants: new Set(['default']),
      maxBodyBytes: 1 << 20,
    });
  });
  afterEach(() => store.close());

  const send = (entries: Array<[string, string]>) =>
    executor.execute({
      subject: commandSubject('smc', 'default', 's', 'append'),
      data: new TextEncoder().encode(JSON.stringify({ events: [{ id: 'u1', type: 'user', text: 'hi' }] })),
      commandId: 'c',
      redelivered: false,
      ...readCommandHeaders(hdrs(entries)),
    });

  it('runs a command with reply-to in any case (its answer goes there: nats-reply-to-case.e2e-spec.ts)', async () => {
    expect((await send([['reply-to', '_INBOX.abc']])).status).toBe(201);
    expect((await send([['REPLY-TO', '_INBOX.abc']])).status).toBe(201);
    expect(ran).toBe(2);
  });

  it('refuses an unusable reply-to in any case, an empty one, and two different ones (invalid_reply_to), running nothing', async () => {
    const lowered = await send([['reply-to', 'smc.commands.default.other.policy']]);
    expect(lowered).toMatchObject({ status: 400, body: { code: 'invalid_reply_to' } });
    const empty = await send([['Reply-To', '']]);
    expect(empty).toMatchObject({ status: 400, body: { code: 'invalid_reply_to', message: expect.stringMatching(/^Reply-To "" is empty: /) } });
    const two = await send([
      ['Reply-To', '_INBOX.a'],
      ['reply-to', '_INBOX.b'],
    ]);
    expect(two).toMatchObject({ status: 400, body: { code: 'invalid_reply_to' } });
    expect((two.body as { message: string }).message).toBe(
      'Reply-To is given 2 times with different values (Reply-To: "_INBOX.a", reply-to: "_INBOX.b"; header names are matched in any letter case): send one Reply-To; the command was not applied (the answer is also on the results subject)',
    );
    expect(ran).toBe(0);
  });

  it('names the Content-Encoding of a compressed command, which is never decompressed (newcomer ncverify71 F9), running nothing', async () => {
    for (const [encoding, data] of [
      ['deflate', deflateSync(JSON.stringify({ events: [{ id: 'u1', type: 'user', text: 'hi' }] }))],
      ['br', brotliCompressSync(JSON.stringify({ events: [{ id: 'u1', type: 'user', text: 'hi' }] }))],
    ] as const) {
      const answer = await executor.execute({
        subject: commandSubject('smc', 'default', 's', 'append'),
        data: new Uint8Array(data),
        commandId: 'c',
        redelivered: false,
        ...readCommandHeaders(hdrs([['content-encoding', encoding]])),
      });
      // a compressed body that happens to be valid UTF-8 is then malformed JSON instead; these are not
      expect(answer).toMatchObject({
        status: 400,
        body: {
          code: 'malformed_body',
          message: `the body is not valid UTF-8: it was sent with Content-Encoding "${encoding}"; NATS commands are read as sent, never decompressed: send the JSON text, encoded as UTF-8, without Content-Encoding`,
        },
      });
    }
    expect(ran).toBe(0);
  });

  it('refuses nats-msg-id without Nats-Msg-Id (invalid_command_id) naming the spelling to use, running nothing', async () => {
    const answer = await send([['nats-msg-id', 'c-1']]);
    expect(answer).toMatchObject({ status: 400, body: { code: 'invalid_command_id' } });
    expect((answer.body as { message: string }).message).toBe(
      'header "nats-msg-id" is not Nats-Msg-Id: JetStream de-duplicates commands on the header spelled exactly Nats-Msg-Id, and the service reads its command id there; send the id as Nats-Msg-Id (the command was not applied)',
    );
    expect(ran).toBe(0);
  });
});
