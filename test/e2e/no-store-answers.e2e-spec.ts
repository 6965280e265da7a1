/**
 * Answers holding conversation text are not kept by caches (pentest A4): every /v1 answer, error
 * answers included, and /health (the audit page's other read) carry Cache-Control: no-store; the
 * page's own files do not.
 */
import { useService } from '../support/service-harness';

const KEY = 'no-store-key-tenant-a';

describe('Cache-Control: no-store on data answers', () => {
  const harness = useService({ env: { API_KEYS: `${KEY}:tenantA` } });
  const http = () => harness.http();

  it('marks /v1 answers (success, 401, 404, 400) and /health no-store', async () => {
    await http()
      .post('/v1/sessions/cached/events')
      .set('Authorization', `Bearer ${KEY}`)
      .send({ events: [{ type: 'user', text: 'private words' }] })
      .expect(201)
      .expect('cache-control', 'no-store');
    for (const [path, auth, status] of [
      ['/v1/sessions/cached/window', true, 200],
      ['/v1/recall?q=private', true, 200],
      ['/v1/sessions', false, 401],
      ['/v1/sessions/none/window', true, 404],
      ['/v1/sessions/cached/window?atRevision=x', true, 400],
      ['/health', false, 200],
    ] as const) {
      const req = http().get(path);
      const res = await (auth ? req.set('Authorization', `Bearer ${KEY}`) : req);
      expect({ path, status: res.status, cacheControl: res.headers['cache-control'] }).toEqual({ path, status, cacheControl: 'no-store' });
    }
  });

  it('leaves the page files cacheable', async () => {
    const res = await http().get('/ui/app.js').expect(200);
    expect(res.headers['cache-control']).not.toBe('no-store');
  });
});
