import type { ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { InvalidRequestError } from '@lib/session';
import { BodyFields, ForeignBodyFields, WritesTakeNoQueryGuard } from './writes-take-no-query.guard';
import { POLICY_FOREIGN_FIELDS } from '../commands/misplaced-field';
import { requestSchemas } from './request-schemas';

const schemas = requestSchemas({ maxEventsPerRequest: 1000, maxTextLength: 1000 });

/** Route handlers as the controller declares them: the compaction route's body takes `dryRun`, the policy route's does not. */
class Routes {
  @BodyFields(schemas.compact)
  compact(): void {}

  @BodyFields(schemas.policy)
  @ForeignBodyFields(POLICY_FOREIGN_FIELDS)
  policy(): void {}

  @BodyFields(schemas.appendEvents)
  appendEvents(): void {}

  erase(): void {}
}

const contextOf = (method: string, query: Record<string, unknown>, handler: keyof Routes = 'erase') =>
  ({
    switchToHttp: () => ({ getRequest: () => ({ method, query }) }),
    getHandler: () => Object.getOwnPropertyDescriptor(Routes.prototype, handler)!.value as unknown,
  }) as unknown as ExecutionContext;

/** What the guard throws for `context` (fails the test when it lets the request through). */
function refusal(guard: WritesTakeNoQueryGuard, context: ExecutionContext): InvalidRequestError {
  try {
    guard.canActivate(context);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidRequestError);
    return err as InvalidRequestError;
  }
  throw new Error('expected a refusal');
}

describe('WritesTakeNoQueryGuard', () => {
  const guard = new WritesTakeNoQueryGuard(new Reflector());

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('refuses an unknown query parameter on %s with 400 validation_failed naming it', (method) => {
    expect(refusal(guard, contextOf(method, { dryRun: 'true' }))).toMatchObject({
      code: 'validation_failed',
      parameter: 'dryRun',
      message: 'dryRun: unknown query parameter "dryRun": remove it',
    });
  });

  // Newcomer ncverify53: POST …/compactions?dryrun=true was told "remove it", and the compaction then written for real.
  it('asks a near miss of a body field whether it meant that field, in the body', () => {
    expect(refusal(guard, contextOf('POST', { dryrun: 'true' }, 'compact'))).toMatchObject({
      code: 'validation_failed',
      parameter: 'dryrun',
      message: 'dryrun: unknown query parameter: did you mean the JSON body\'s field "dryRun"? Send it in the body, e.g. {"dryRun": true}',
    });
    expect(refusal(guard, contextOf('POST', { estimater: 'chars' }, 'compact')).message).toMatch(
      /did you mean the JSON body's field "estimator"\? .*\{"estimator": "chars"\}$/,
    );
    expect(refusal(guard, contextOf('POST', { zzz: '1' }, 'compact')).message).toBe('zzz: unknown query parameter "zzz": remove it');
  });

  // Newcomer ncverify52: PUT …/policy?dryRun=true was told "remove it", the body's dryRun why.
  it('gives a query parameter that a policy does not take but a compaction does the advice the body gets', () => {
    const refused = refusal(guard, contextOf('PUT', { dryRun: 'true' }, 'policy'));
    expect(refused).toMatchObject({ code: 'validation_failed', parameter: 'dryRun' });
    expect(refused.message).toBe(`dryRun: ${POLICY_FOREIGN_FIELDS.dryRun}`);
    expect(refused.message).toMatch(/^dryRun: a policy has no dry run: /);
    expect(refusal(guard, contextOf('PUT', { foo: '1' }, 'policy')).message).toBe('foo: unknown query parameter "foo": remove it');
  });

  it("tells a query parameter that is a field of the route's body where it belongs: the JSON body, with an example", () => {
    expect(refusal(guard, contextOf('POST', { dryRun: 'true' }, 'compact'))).toMatchObject({
      code: 'validation_failed',
      parameter: 'dryRun',
      message: 'dryRun: a field of the JSON body, not a query parameter: send it in the body, e.g. {"dryRun": true}',
    });
    // A boolean field given otherwise (?dryRun=1) still gets a body that is right.
    expect(refusal(guard, contextOf('POST', { dryRun: '1' }, 'compact')).message).toMatch(/e\.g\. \{"dryRun": true\}$/);
    expect(refusal(guard, contextOf('POST', { estimator: 'chars' }, 'compact')).message).toMatch(/^estimator: .*e\.g\. \{"estimator": "chars"\}$/);
    // No example that would be wrong: a strategy is an object, an estimator this route does not know.
    expect(refusal(guard, contextOf('POST', { strategy: 'sliding-window' }, 'compact')).message).toBe(
      'strategy: a field of the JSON body, not a query parameter: send it in the body (see /docs for its shape)',
    );
    expect(refusal(guard, contextOf('POST', { estimator: 'bytes' }, 'compact')).message).toMatch(/send it in the body \(see \/docs for its shape\)$/);
    expect(refusal(guard, contextOf('POST', { expectedRevision: '3' }, 'appendEvents')).message).toMatch(/send it in the body, e\.g\. \{"expectedRevision": /);
  });

  it('lets a write without query parameters through', () => {
    expect(guard.canActivate(contextOf('POST', {}, 'compact'))).toBe(true);
  });

  it('leaves reads to their own query schemas', () => {
    expect(guard.canActivate(contextOf('GET', { limit: '5' }))).toBe(true);
    expect(guard.canActivate(contextOf('HEAD', { limit: '5' }))).toBe(true);
  });
});

describe('WritesTakeNoQueryGuard: HTTP precondition headers on writes (newcomer ncgocurl A5)', () => {
  const guard = new WritesTakeNoQueryGuard(new Reflector());
  const withHeaders = (method: string, headers: Record<string, string>, handler: keyof Routes) =>
    ({
      switchToHttp: () => ({ getRequest: () => ({ method, query: {}, headers }) }),
      getHandler: () => Object.getOwnPropertyDescriptor(Routes.prototype, handler)!.value as unknown,
    }) as unknown as ExecutionContext;

  it.each(['If-Match', 'If-None-Match', 'If-Unmodified-Since', 'If-Modified-Since'])(
    'refuses %s on a write with 400 validation_failed naming it and expectedRevision (was: ignored, the write done)',
    (name) => {
      expect(refusal(guard, withHeaders('POST', { [name.toLowerCase()]: '"stale"' }, 'appendEvents'))).toMatchObject({
        code: 'validation_failed',
        parameter: name,
        message: expect.stringMatching(
          new RegExp(`^${name}: HTTP preconditions are not supported \\(no ETag is sent\\): .*send expectedRevision in the JSON body`),
        ),
      });
      expect(refusal(guard, withHeaders('DELETE', { [name.toLowerCase()]: '*' }, 'erase')).message).toMatch(
        /this route takes no precondition: leave the header out$/,
      );
    },
  );

  it('lets reads with them through (GET/HEAD ignore them), and writes without them', () => {
    expect(guard.canActivate(withHeaders('GET', { 'if-none-match': '"x"' }, 'erase'))).toBe(true);
    expect(guard.canActivate(withHeaders('POST', { 'content-type': 'application/json' }, 'appendEvents'))).toBe(true);
  });
});
