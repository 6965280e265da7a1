import { Writable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import pinoHttp from 'pino-http';
import { EventStoreUnavailableError } from '@lib/event-store';
import { CountingTimeoutError, ProjectionBehindError } from '@lib/session';
import { answerErrorsWithFilter } from '../http/testing/answer-errors-with-filter';
import { answerWhileShuttingDown } from '../http/framework-answers';
import { requestLogLevelOptions } from './request-log-level';
import { RateLimitedWarnings } from './rate-limited-lines';
import { logAnswerCodes, requestLogSerializers } from './request-log';
import { ThrottlerStorageService } from '@nestjs/throttler';
import { checkKeyBeforeBody } from '../auth/key-check-before-body';
import * as http from 'node:http';
import { refuseTransferCodings } from '../http/transfer-codings';

/** A Fastify app logging each request with pino-http, our level options and serializers (as nestjs-pino wires them), and the JSON lines it logged. */
function loggedApp(): { app: FastifyInstance; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      callback();
    },
  });
  const logger = pinoHttp({ level: 'debug', ...requestLogLevelOptions('debug'), serializers: requestLogSerializers }, stream);
  const app = Fastify();
  app.addHook('onRequest', (request, reply, done) => logger(request.raw, reply.raw, () => done()));
  return { app, lines };
}

/**
 * The JSON request log lines of a Fastify app logging with pino-http and our level options (as
 * nestjs-pino wires them), after `requests` requests (default 1); `refused` is how many of them
 * answerWhileShuttingDown counted.
 */
async function logLinesOf(
  shuttingDown: boolean,
  answer: { status: number; body: object } | { throws: unknown },
  requests = 1,
): Promise<Array<Record<string, unknown>> & { refused?: number }> {
  const { app, lines } = loggedApp();
  // as the key check does with API_KEYS
  app.addHook('onRequest', (request, _reply, done) => (((request as { tenantId?: string }).tenantId = 'tenant-7'), done()));
  logAnswerCodes(app);
  const refusals = answerWhileShuttingDown(app, () => shuttingDown);
  // Errors answered by our Nest filter, as in the service (the adapter's reply is Fastify's).
  answerErrorsWithFilter(app);
  app.get('/x', async (_request, reply) => {
    if ('throws' in answer) throw answer.throws;
    return reply.code(answer.status).send(answer.body);
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  try {
    const { port } = app.server.address() as AddressInfo;
    for (let n = 0; n < requests; n++) {
      const res = await fetch(`http://127.0.0.1:${port}/x`);
      await res.text();
    }
    // pino-http logs on the response's finish: give it a moment to reach the stream
    for (let i = 0; i < 50 && lines.length < requests; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  } finally {
    await app.close();
  }
  return Object.assign(lines, { refused: refusals.count });
}

describe('request log line of an answer (pino-http with requestLogLevelOptions)', () => {
  it('logs each 503 shutting_down at debug (the shutdown logs their count), without an error or stack trace', async () => {
    const lines = await logLinesOf(true, { status: 200, body: {} }, 3);
    expect(lines).toHaveLength(3);
    for (const line of lines) {
      expect(line).toMatchObject({ level: 20, res: { statusCode: 503 }, msg: 'request completed' });
      expect(line).not.toHaveProperty('err');
      expect(JSON.stringify(line)).not.toMatch(/stack|failed with status code/);
    }
    expect(lines.refused).toBe(3);
    expect((await logLinesOf(false, { status: 200, body: {} })).refused).toBe(0);
  });

  it("logs a 501 unsupported_transfer_coding (the client's fault) at debug without an error, not at error with a stack trace (newcomer ncfresh63 F1)", async () => {
    const { app, lines } = loggedApp();
    app.addHook('onRequest', refuseTransferCodings());
    app.get('/health', async () => ({ status: 'ok' }));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      const status = await new Promise<number>((resolve, reject) => {
        const req = http.request({ host: '127.0.0.1', port, path: '/health', headers: { 'transfer-encoding': 'gzip, chunked' } }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode!));
        });
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(501);
      for (let i = 0; i < 50 && lines.length < 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await app.close();
    }
    expect(lines.map((l) => [l.level, l.err === undefined])).toEqual([[20, true]]);
  });

  it('still logs another 503 (projection_behind) at warn, and a 500 at error', async () => {
    const behind = await logLinesOf(false, { status: 503, body: { code: 'projection_behind' } });
    expect(behind[0]).toMatchObject({ level: 40, res: { statusCode: 503 } });
    const fault = await logLinesOf(false, { status: 500, body: { code: 'internal' } });
    expect(fault[0]).toMatchObject({ level: 50, res: { statusCode: 500, code: 'internal' } });
  });

  it('names the tenant of a success, without a code', async () => {
    const [line] = await logLinesOf(false, { status: 200, body: { code: 'not-an-error-code' } });
    expect(line.res).toEqual({ statusCode: 200, tenant: 'tenant-7' });
  });

  it.each([
    ['projection_behind', new ProjectionBehindError(10n, 5n)],
    ['store_unavailable', new EventStoreUnavailableError('connection refused')],
    ['counting_timeout', new CountingTimeoutError('counting the tokens of this request', 2000)],
  ])('logs 503 %s (answered by ApiErrorFilter) at warn in one line naming the code and the tenant, without an error or stack trace', async (code, error) => {
    const lines = await logLinesOf(false, { throws: error });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 40, res: { statusCode: 503, code, tenant: 'tenant-7' }, msg: 'request completed' });
    expect(lines[0]).not.toHaveProperty('err');
    expect(JSON.stringify(lines[0])).not.toMatch(/stack|failed with status code/);
  });

  it('logs the first 10 503 lines of a minute at warn and the rest at debug: retrying clients during an outage no longer write one warn line each (newcomer ncdiskfull F4)', async () => {
    const lines = await logLinesOf(false, { throws: new EventStoreUnavailableError('SQLite event store: database or disk is full') }, 14);
    expect(lines.map((line) => line.level)).toEqual([...Array<number>(10).fill(40), ...Array<number>(4).fill(20)]);
    for (const line of lines) expect(line).toMatchObject({ res: { statusCode: 503, code: 'store_unavailable' }, msg: 'request completed' });
  });
});

describe('RateLimitedWarnings.admit: lines another logger writes, limited and told as its own', () => {
  afterEach(() => jest.useRealTimers());

  it('admits the first lines of a window, counts the rest by reason, and tells them in one warn line when the window ends', () => {
    jest.useFakeTimers();
    const told: unknown[] = [];
    const lines = new RateLimitedWarnings({ warn: (line: unknown) => void told.push(line) }, 'requests answered 503 (their lines at debug)', 2, 1000);
    const admitted = ['store_unavailable', 'store_unavailable', 'store_unavailable', 'projection_behind', 'store_unavailable'].map((code) => lines.admit(code));
    expect(admitted).toEqual([true, true, false, false, false]);
    expect(told).toEqual([]);
    jest.advanceTimersByTime(1000);
    expect(told).toEqual([
      '3 more requests answered 503 (their lines at debug) in the last 1 s, not logged one by one: 2 × store_unavailable; 1 × projection_behind',
    ]);
    expect(lines.admit('store_unavailable')).toBe(true);
  });
});

// Verifier (ncverify2): a 429 to a known key's request did not name the tenant whose budget it spent.
describe('request log line of an answer given before the body (the key check)', () => {
  it("names the tenant of a known key on its 429, and no tenant on an unknown key's 401", async () => {
    const { app, lines } = loggedApp();
    checkKeyBeforeBody(app, { apiKeys: new Map([['alpha-key-1234', 'alpha']]), rateLimitPerMinute: 1, storage: new ThrottlerStorageService() });
    logAnswerCodes(app);
    app.get('/v1/x', async () => ({}));
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      for (const key of ['alpha-key-1234', 'alpha-key-1234', 'unknown-key-99']) {
        const res = await fetch(`http://127.0.0.1:${port}/v1/x`, { headers: { authorization: `Bearer ${key}` } });
        await res.text();
      }
      for (let i = 0; i < 50 && lines.length < 3; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      await app.close();
    }
    expect(lines.map((line) => line.res)).toEqual([
      { statusCode: 200, tenant: 'alpha' },
      { statusCode: 429, tenant: 'alpha', code: 'rate_limited' },
      { statusCode: 401, code: 'unauthorized' }, // an unknown key spends its address's own budget
    ]);
  });
});
