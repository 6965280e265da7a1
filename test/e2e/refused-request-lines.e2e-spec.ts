/**
 * Requests refused before they reach a route, in the real service: their warn lines are capped at
 * 10 per 60 s (a path that is not valid percent-encoded UTF-8, Fastify's `frameworkErrors`: one
 * line each before, anyone could flood the log without a key), the count of the ones not logged is
 * told when the service shuts down (before, it was lost with the timer), and the answer to a request
 * Node could not parse carries an `X-Request-Id` (the client's, else a UUID), named in its line
 * (before: none, the one answer without it).
 */
import { sendRaw } from '../support/raw-http';
import type { AddressInfo } from 'node:net';
import { captureLogLines } from '../support/captured-log-lines';
import { startService, type Harness } from '../support/service-harness';

/** The value of `name` in the head of a raw HTTP answer (undefined without it). */
function headerOf(answer: string, name: string): string | undefined {
  const head = answer.split('\r\n\r\n')[0].split('\r\n');
  return head
    .find((line) => line.toLowerCase().startsWith(`${name}:`))
    ?.slice(name.length + 1)
    .trim();
}

describe('requests refused before a route', () => {
  let harness: Harness | undefined;
  afterEach(async () => {
    jest.restoreAllMocks();
    await harness?.stop();
  });

  it('log at most 10 warn lines per 60 s each kind, and the service tells the rest when it shuts down', async () => {
    harness = await startService();
    await harness.service.app.listen(0, '127.0.0.1');
    const { port } = harness.service.app.getHttpServer().address() as AddressInfo;
    const lines = captureLogLines(['warn']);
    for (let i = 0; i < 25; i++) expect((await harness.http().get('/v1/sessions/%zz/window')).status).toBe(400);
    for (let i = 0; i < 15; i++) expect(await sendRaw(port, 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
    const badPath = lines.filter((line) => line === 'refused GET /v1/sessions/%zz/window: 400 invalid_path');
    const unparseable = lines.filter((line) => line.startsWith('refused a request Node could not parse (HPE_INVALID_METHOD): 400 malformed_request'));
    expect([badPath.length, unparseable.length]).toEqual([10, 10]);
    expect(lines).toHaveLength(20);

    await harness.stop();
    harness = undefined;
    expect(lines.slice(20).sort()).toEqual([
      '15 more requests refused before reaching a route (path, Host or Expect header) in the last 60 s, not logged one by one: 15 × 400 invalid_path',
      '5 more requests refused as Node could not parse them (or timed out) in the last 60 s, not logged one by one: 5 × HPE_INVALID_METHOD: 400 malformed_request',
    ]);
  });

  it("answers a request Node could not parse with an X-Request-Id: the client's when usable, else a UUID; its line names it", async () => {
    harness = await startService();
    await harness.service.app.listen(0, '127.0.0.1');
    const { port } = harness.service.app.getHttpServer().address() as AddressInfo;
    const lines = captureLogLines(['warn']);
    const echoed = await sendRaw(port, 'FOO / HTTP/1.1\r\nHost: x\r\nX-Request-Id: garbage-7\r\n\r\n');
    expect(echoed).toMatch(/^HTTP\/1\.1 400 /);
    expect(headerOf(echoed, 'x-request-id')).toBe('garbage-7');
    const made = await sendRaw(port, 'FOO / HTTP/1.1\r\nHost: x\r\nX-Request-Id: with spaces\r\n\r\n');
    expect(headerOf(made, 'x-request-id')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(lines).toEqual([
      'refused a request Node could not parse (HPE_INVALID_METHOD): 400 malformed_request (request id garbage-7)',
      `refused a request Node could not parse (HPE_INVALID_METHOD): 400 malformed_request (request id ${headerOf(made, 'x-request-id')})`,
    ]);
  });
});
