import { connectAllowHeader } from './connect-method';
import { RouteMethods } from './framework-answers';

describe('connectAllowHeader', () => {
  const routes = new RouteMethods();
  routes.add({ url: '/v1/sessions/:sessionId', method: ['GET', 'HEAD'] });
  routes.add({ url: '/v1/sessions/:sessionId', method: 'DELETE' });

  it("lists a path target's methods (query and fragment aside)", () => {
    expect(connectAllowHeader('/v1/sessions/x', routes)).toBe('DELETE, GET, HEAD');
    expect(connectAllowHeader('/v1/sessions/x?a=1', routes)).toBe('DELETE, GET, HEAD');
    expect(connectAllowHeader('/v1/sessions/x#y', routes)).toBe('DELETE, GET, HEAD');
  });

  it('is empty for an authority, *, or a path without routes', () => {
    expect(connectAllowHeader('127.0.0.1:443', routes)).toBe('');
    expect(connectAllowHeader('*', routes)).toBe('');
    expect(connectAllowHeader('/nope', routes)).toBe('');
  });
});
