/**
 * A write's unusable `X-Request-Id` is refused, not replaced (newcomer ncbounds): a DELETE sent
 * with a 129-character id erased under a made-up UUID, and its resend, replaced too, was not
 * recognised and erased the life written since. Reads keep the replacement.
 */
import type { ExecutionContext } from '@nestjs/common';
import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import { InvalidRequestError } from '@lib/session';
import { toApiError } from './api-error.filter';
import { MAX_REQUEST_ID_LENGTH } from '../observability/request-id';
import { WriteRequestIdGuard, writeRequestIdRefusal } from './write-request-id.guard';

/** A raw request carrying `values` as X-Request-Id header lines (none: no header), as Node parses them (repeated lines joined with `, `). */
const rawWith = (...values: string[]): Pick<IncomingMessage, 'headers' | 'rawHeaders'> => ({
  headers: values.length === 0 ? {} : { 'x-request-id': values.join(', ') },
  rawHeaders: ['Host', 'x', ...values.flatMap((v, i) => [i % 2 ? 'x-request-id' : 'X-Request-Id', v])],
});

const contextOf = (method: string, raw: Pick<IncomingMessage, 'headers' | 'rawHeaders'>) =>
  ({ switchToHttp: () => ({ getRequest: () => ({ method, raw }) }) }) as unknown as ExecutionContext;

/** The 400 body a write with `values` as its X-Request-Id lines is answered (fails the test when it is let through). */
function refusedBody(...values: string[]) {
  const refusal = writeRequestIdRefusal(rawWith(...values));
  expect(refusal).toBeInstanceOf(InvalidRequestError);
  return toApiError(refusal);
}

describe('writeRequestIdRefusal (a write with an unusable X-Request-Id)', () => {
  const longest = 'a'.repeat(MAX_REQUEST_ID_LENGTH);

  it('lets a write through without the header, or with 1 to 128 printable ASCII characters without spaces', () => {
    for (const ok of [[], ['r'], [longest], ['del-r1-0001'], ['~!#$%&*+/:;<=>?@[]^_`{|}']]) expect(writeRequestIdRefusal(rawWith(...ok))).toBeUndefined();
  });

  it('refuses a 129-character id with 400 validation_failed, parameter X-Request-Id, saying the rule and what to fix', () => {
    expect(refusedBody(`${longest}b`)).toEqual({
      status: 400,
      body: {
        code: 'validation_failed',
        parameter: 'X-Request-Id',
        message:
          'X-Request-Id: the id is 129 characters long, over the 128 allowed: shorten it (a UUID or a hash of your id fits). ' +
          'A write takes an X-Request-Id of 1 to 128 printable ASCII characters (letters, digits, punctuation) without spaces, or none; ' +
          'send the same one on every resend of the write, so that the resend is recognised. Nothing was written',
      },
    });
  });

  it.each<[string, string[], string]>([
    ['a space', ['approved by CISO'], 'X-Request-Id: the id holds a space at character 9: remove or replace it (e.g. by - or _). '],
    ['a tab', ['a\tb'], 'X-Request-Id: the id holds a tab at character 2: remove or replace it'],
    [
      'a byte outside ASCII (UTF-8 é as Node reads it, latin1)',
      [Buffer.from('caf\u00e9').toString('latin1')],
      'X-Request-Id: the id holds 0xC3, not printable ASCII, at character 4: ',
    ],
    ['nothing', [''], 'X-Request-Id: the id is empty: send an id, or leave the header out. '],
    ['two header lines', ['a', 'b'], 'X-Request-Id: the id is sent on 2 header lines: send it once. '],
  ])('refuses an id with %s, naming the problem and the rule', (_case, values, start) => {
    const { status, body } = refusedBody(...values);
    expect({ status, code: body.code, parameter: body.parameter }).toEqual({ status: 400, code: 'validation_failed', parameter: 'X-Request-Id' });
    expect(body.message.startsWith(start)).toBe(true);
    expect(body.message).toContain('1 to 128 printable ASCII characters');
  });

  it('refuses exactly the values a request id cannot be (the one rule: isUsableRequestId)', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 140 }), (value) => {
        const usable = value.length >= 1 && value.length <= MAX_REQUEST_ID_LENGTH && [...value].every((c) => c > ' ' && c <= '~');
        expect(writeRequestIdRefusal(rawWith(value)) === undefined).toBe(usable);
      }),
    );
  });
});

describe('WriteRequestIdGuard', () => {
  const guard = new WriteRequestIdGuard();
  const tooLong = 'x'.repeat(MAX_REQUEST_ID_LENGTH + 1);

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('refuses a %s with an unusable X-Request-Id, lets one with a usable id or none through', (method) => {
    expect(() => guard.canActivate(contextOf(method, rawWith(tooLong)))).toThrow(InvalidRequestError);
    expect(() => guard.canActivate(contextOf(method, rawWith('has space')))).toThrow(/X-Request-Id: the id holds a space/);
    expect(guard.canActivate(contextOf(method, rawWith('erase-7f3a')))).toBe(true);
    expect(guard.canActivate(contextOf(method, rawWith()))).toBe(true);
  });

  it.each(['GET', 'HEAD'])('lets a %s through whatever its X-Request-Id (a read keeps the made-up id, in the logs only)', (method) => {
    expect(guard.canActivate(contextOf(method, rawWith(tooLong)))).toBe(true);
    expect(guard.canActivate(contextOf(method, rawWith('has space')))).toBe(true);
  });
});
