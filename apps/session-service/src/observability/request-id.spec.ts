import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import pinoHttp from 'pino-http';
import fc from 'fast-check';
import {
  echoRequestIds,
  FASTIFY_REQUEST_ID_OPTIONS,
  isUsableRequestId,
  MAX_REQUEST_ID_LENGTH,
  requestIdOf,
  requestIdOfRawHead,
  requestIdProblem,
} from './request-id';
import { requestLogSerializers } from './request-log';

/** A Fastify app with the service's request id options, echo hook and pino-http request line (as nestjs-pino wires it), and the lines it logged. */
async function idApp() {
  const lines: Array<{ req: { id?: string } }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as { req: { id?: string } });
      callback();
    },
  });
  const logger = pinoHttp({ level: 'info', serializers: requestLogSerializers, genReqId: requestIdOf }, stream);
  const app = Fastify({ ...FASTIFY_REQUEST_ID_OPTIONS });
  app.addHook('onRequest', (request, reply, done) => logger(request.raw, reply.raw, () => done()));
  echoRequestIds(app);
  app.get('/ok', async (request) => ({ id: request.id }));
  app.get('/fails', async () => {
    throw Object.assign(new Error('nope'), { statusCode: 409 });
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const get = async (path: string, id?: string) => {
    const before = lines.length;
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: id === undefined ? {} : { 'x-request-id': id } });
    const body = (await res.json()) as { id?: string };
    for (let i = 0; i < 50 && lines.length === before; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    return { status: res.status, header: res.headers.get('x-request-id'), handlerId: body.id, loggedId: lines[lines.length - 1]?.req.id };
  };
  return { get, close: () => app.close() };
}

describe('request ids', () => {
  it("take a client's short printable X-Request-Id, else a UUID; the handler, the request line and the answer's header carry the same, error answers too", async () => {
    const app = await idApp();
    try {
      expect(await app.get('/ok', 'client-id-1')).toEqual({ status: 200, header: 'client-id-1', handlerId: 'client-id-1', loggedId: 'client-id-1' });
      expect(await app.get('/fails', 'client-id-2')).toEqual({ status: 409, header: 'client-id-2', handlerId: undefined, loggedId: 'client-id-2' });
      expect(await app.get('/nowhere', 'client-id-3')).toMatchObject({ status: 404, header: 'client-id-3', loggedId: 'client-id-3' });
      const made = await app.get('/ok');
      expect(made.header).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(made).toEqual({ status: 200, header: made.header, handlerId: made.header, loggedId: made.header });
      // Too long, or with spaces: replaced by a made-up id (never logged nor echoed).
      for (const unusable of ['x'.repeat(MAX_REQUEST_ID_LENGTH + 1), 'has space']) {
        const answer = await app.get('/ok', unusable);
        expect(answer.header).not.toBe(unusable);
        expect(answer).toEqual({ status: 200, header: expect.stringMatching(/^[0-9a-f-]{36}$/), handlerId: answer.header, loggedId: answer.header });
      }
    } finally {
      await app.close();
    }
  });

  it('usable ids are exactly 1 to 128 printable ASCII characters without spaces', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 140 }), (value) => {
        const usable = value.length >= 1 && value.length <= MAX_REQUEST_ID_LENGTH && [...value].every((c) => c > ' ' && c <= '~');
        expect(isUsableRequestId(value)).toBe(usable);
        // The one rule: what is wrong is said exactly when the id is not usable.
        expect(requestIdProblem(value) === undefined).toBe(usable);
      }),
    );
  });

  it('says what makes an id unusable and what to fix', () => {
    expect(requestIdProblem('x'.repeat(MAX_REQUEST_ID_LENGTH + 1))).toBe(
      'is 129 characters long, over the 128 allowed: shorten it (a UUID or a hash of your id fits)',
    );
    expect(requestIdProblem('x'.repeat(MAX_REQUEST_ID_LENGTH))).toBeUndefined();
    expect(requestIdProblem('has space')).toBe('holds a space at character 4: remove or replace it (e.g. by - or _)');
    expect(requestIdProblem('a\u007fb')).toBe('holds 0x7F, not printable ASCII, at character 2: remove or replace it (e.g. by - or _)');
    expect(requestIdProblem('')).toBe('is empty: send an id, or leave the header out');
  });
});

describe('requestIdOfRawHead (the id of a request Node could not parse)', () => {
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  const raw = (head: string) => Buffer.from(head, 'latin1');

  it("takes one usable X-Request-Id header of the head's bytes, in any case of its name", () => {
    expect(requestIdOfRawHead(raw('FOO / HTTP/1.1\r\nHost: x\r\nx-REQUEST-id:  abc-1 \r\n\r\n'))).toBe('abc-1');
  });

  it('makes a UUID up when there is none, two, an unusable one, one in the body, or no bytes (a timeout)', () => {
    for (const packet of [
      raw('FOO / HTTP/1.1\r\nHost: x\r\n\r\n'),
      raw('FOO / HTTP/1.1\r\nX-Request-Id: a\r\nX-Request-Id: b\r\n\r\n'),
      raw('FOO / HTTP/1.1\r\nX-Request-Id: with spaces\r\n\r\n'),
      raw('FOO / HTTP/1.1\r\nX-Request-Id: é\r\n\r\n'),
      raw('FOO / HTTP/1.1\r\nHost: x\r\n\r\nX-Request-Id: in-the-body\r\n'),
      raw('X-Request-Id: the-request-line / HTTP/1.1\r\n\r\n'),
      undefined,
    ])
      expect(requestIdOfRawHead(packet)).toMatch(uuid);
  });
});
