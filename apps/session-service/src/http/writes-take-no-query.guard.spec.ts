import type { ExecutionContext } from '@nestjs/common';
import { InvalidRequestError } from '@lib/session';
import { WritesTakeNoQueryGuard } from './writes-take-no-query.guard';

const contextOf = (method: string, query: Record<string, unknown>) =>
  ({ switchToHttp: () => ({ getRequest: () => ({ method, query }) }) }) as unknown as ExecutionContext;

describe('WritesTakeNoQueryGuard', () => {
  const guard = new WritesTakeNoQueryGuard();

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('refuses a query parameter on %s with 400 validation_failed naming it', (method) => {
    let thrown: unknown;
    try {
      guard.canActivate(contextOf(method, { dryRun: 'true' }));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(InvalidRequestError);
    expect(thrown).toMatchObject({ code: 'validation_failed', parameter: 'dryRun', message: 'dryRun: unknown query parameter "dryRun": remove it' });
  });

  it('lets a write without query parameters through', () => {
    expect(guard.canActivate(contextOf('POST', {}))).toBe(true);
  });

  it('leaves reads to their own query schemas', () => {
    expect(guard.canActivate(contextOf('GET', { limit: '5' }))).toBe(true);
    expect(guard.canActivate(contextOf('HEAD', { limit: '5' }))).toBe(true);
  });
});
