import { EventStoreClosedError, EventStoreCorruptError, EventStoreUnavailableError, PostgresNoAnswerError, WriteOutcomeUnknownError } from '@lib/event-store';
import { connectFailure } from '../../../../libs/event-store/src/postgres/postgres-errors';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Client } from 'pg';
import Fastify from 'fastify';
import { CountingTimeoutError, CountingTooCostlyError, ReadModelsFullError, SessionNotFoundError } from '@lib/session';
import { ErrorBodySchema } from './response-schemas';
import { humanBytes, payloadTooLarge, storeUnavailable, toApiError, WRITE_OUTCOME_UNKNOWN_MESSAGE } from './api-error.filter';
import { answerErrorsWithFilter } from './testing/answer-errors-with-filter';

describe('413 payload_too_large', () => {
  it('gives sizes for people in binary units', () => {
    expect([512, 1024, 20_000, 5 * 1024 * 1024, 3 * 1024 ** 3].map(humanBytes)).toEqual(['512 bytes', '1 KiB', '19.5 KiB', '5 MiB', '3 GiB']);
  });

  it("names MAX_BODY_BYTES and its value: body-parser's error carries the limit", () => {
    const err = Object.assign(new Error('request entity too large'), { type: 'entity.too.large', limit: 5 * 1024 * 1024 });
    expect(toApiError(err)).toEqual({
      status: 413,
      body: { code: 'payload_too_large', message: 'request body is larger than MAX_BODY_BYTES (5242880 bytes, 5 MiB); send a smaller body' },
    });
    expect(payloadTooLarge().message).toBe('request body is larger than the limit (MAX_BODY_BYTES); send a smaller body');
    expect(payloadTooLarge(10, '/v1/sessions/s/events?x=1').message).toBe(
      'request body is larger than MAX_BODY_BYTES (10 bytes, 10 bytes); split the events into several requests, in order',
    );
  });
});

describe('503 store_unavailable', () => {
  // ncsdk repro 17: which of the two it was showed only in the English message.
  it('says a write whose outcome the store could not confirm may have been written, and to resend it unchanged: mayHaveBeenWritten true', () => {
    const lost = new WriteOutcomeUnknownError('PostgreSQL event store', 'append', 'session-x', 10_000, new Error('Connection terminated unexpectedly'));
    expect(toApiError(lost)).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: { code: 'store_unavailable', message: WRITE_OUTCOME_UNKNOWN_MESSAGE, mayHaveBeenWritten: true },
    });
    expect(WRITE_OUTCOME_UNKNOWN_MESSAGE).toMatch(/may have been written; send the same request again unchanged/);
    // e.g. a KurrentDB write the server did not answer (the service does not run it again to learn its outcome)
    const unanswered = new EventStoreUnavailableError('KurrentDB did not answer the append to session-x', undefined, true);
    expect(toApiError(unanswered)).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: { code: 'store_unavailable', message: WRITE_OUTCOME_UNKNOWN_MESSAGE, mayHaveBeenWritten: true },
    });
  });

  it('names the bound on an answer when PostgreSQL did not answer (a frozen server): nothing written for a read, may have been for a write', () => {
    const noAnswer = new PostgresNoAnswerError(35_000, new Error('Query read timeout'));
    expect(toApiError(new EventStoreUnavailableError('PostgreSQL event store: DATABASE_URL=…: no answer …', noAnswer))).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: {
        code: 'store_unavailable',
        message: 'the event store is unavailable: PostgreSQL did not answer within 35000 ms (frozen, overloaded or cut off); nothing was written; retry later',
        mayHaveBeenWritten: false,
      },
    });
    // a connection closed while opened, before any answer of PostgreSQL's: DATABASE_URL names another service (newcomer ncops65 F8)
    expect(
      toApiError(new EventStoreUnavailableError('PostgreSQL event store: …', connectFailure(new Error('Connection terminated unexpectedly')))).body,
    ).toEqual({
      code: 'store_unavailable',
      message:
        'the event store is unavailable: the server DATABASE_URL names closed the connection before answering as PostgreSQL (another service, or a proxy without a PostgreSQL behind it; GET /health names the address); nothing was written; retry later',
      mayHaveBeenWritten: false,
    });
    for (const connect of ['timeout exceeded when trying to connect', 'Connection terminated due to connection timeout'])
      expect(toApiError(new EventStoreUnavailableError('PostgreSQL event store: …', new Error(connect))).body.message).toBe(
        'the event store is unavailable: PostgreSQL gave no connection within the 10 s connect timeout (down, frozen, overloaded or cut off); nothing was written; retry later',
      );
    expect(toApiError(new WriteOutcomeUnknownError('PostgreSQL event store', 'append', 'session-x', 10_000, noAnswer))).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: {
        code: 'store_unavailable',
        message:
          'PostgreSQL did not answer this write within 35000 ms (frozen, overloaded or cut off), nor a check of it afterwards: it may have been written; send the same request again unchanged (events with your own ids are then answered as the original, or written now; events without an id get new ids and would be written again)',
        mayHaveBeenWritten: true,
      },
    });
  });

  it('says the store was closed by the shutdown (a request that waited for a connection then): nothing written', () => {
    expect(toApiError(new EventStoreClosedError('PostgreSQL'))).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: {
        code: 'store_unavailable',
        message: 'the event store is closed: the service is shutting down; nothing was written; retry on another replica or once it is back',
        mayHaveBeenWritten: false,
      },
    });
  });

  it('names a refused or cut PostgreSQL connection in the 503 message (ncpg67 F2), from the errors node-postgres gives', async () => {
    // A port nothing listens on: the real error of a refused connection.
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const refused = await new Client({ host: '127.0.0.1', port, user: 'postgres', connectionTimeoutMillis: 2000 }).connect().then(
      () => null,
      (error: unknown) => error,
    );
    const messageFor = (cause: unknown) => toApiError(new EventStoreUnavailableError('PostgreSQL event store: detail not for clients', cause)).body.message;
    expect(messageFor(refused)).toBe(
      'the event store is unavailable: PostgreSQL refused the connection: no server listens at the address DATABASE_URL names (ECONNREFUSED); retry later',
    );
    expect(messageFor(new Error('Connection terminated unexpectedly'))).toBe(
      'the event store is unavailable: the connection to PostgreSQL was closed while in use (the server stopped or restarted, or the network cut it); retry later',
    );
    expect(messageFor(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toMatch(
      /the connection to PostgreSQL was cut .* \(ECONNRESET\); retry later$/,
    );
    expect(messageFor(Object.assign(new Error('x'), { code: '57P03' }))).toBe(
      'the event store is unavailable: PostgreSQL cannot accept connections now (starting up, shutting down or in recovery) (SQLSTATE 57P03); retry later',
    );
    expect(messageFor(new Error('something else'))).toBe('the event store is unavailable; retry later');
  });

  it.each([
    ['53300', 'PostgreSQL has too many connections (SQLSTATE 53300)'],
    ['57014', 'a PostgreSQL statement was canceled by its statement timeout (e.g. waiting for a lock) (SQLSTATE 57014)'],
    ['55P03', 'a PostgreSQL lock was not available within the lock timeout (SQLSTATE 55P03)'],
    ['25006', 'PostgreSQL is read-only (a standby or a read-only database) (SQLSTATE 25006)'],
    ['53100', "PostgreSQL's disk is full (SQLSTATE 53100)"],
  ])('names the cause SQLSTATE %s tells in the 503 message, code and mayHaveBeenWritten unchanged', (code, cause) => {
    const error = new EventStoreUnavailableError('PostgreSQL event store: DATABASE_URL=…: detail not for clients', Object.assign(new Error('x'), { code }));
    expect(toApiError(error)).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: { code: 'store_unavailable', message: `the event store is unavailable: ${cause}; retry later`, mayHaveBeenWritten: false },
    });
  });

  it("says a full disk, the event store's or the read models' (writes refused while they cannot be written), without a path", () => {
    const storeFull = new EventStoreUnavailableError(
      'SQLite event store: the disk holding /srv/data/events.sqlite is full (0 bytes free, fewer than 1048576): free space on its file system',
      Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' }),
    );
    expect(toApiError(storeFull)).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: {
        code: 'store_unavailable',
        message: 'the event store is unavailable: its disk is full; nothing was written: retry once space is freed',
        mayHaveBeenWritten: false,
      },
    });
    // Their file's I/O failing (a file-size limit, a quota: newcomer ncops67 F1) is said as such, the event store's too.
    expect(
      toApiError(
        new ReadModelsFullError('the read models cannot be written: reading or writing /srv/data/read-models.sqlite fails (SqliteError: disk I/O error)'),
      ),
    ).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: {
        code: 'store_unavailable',
        message:
          "the read models cannot be written: their file's reads or writes fail (a file-size limit, a disk quota or a failing disk); nothing was written: retry once that is fixed (GET /health names the file and the error)",
        mayHaveBeenWritten: false,
      },
    });
    const storeIo = new EventStoreUnavailableError(
      'SQLite event store: disk I/O error',
      Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' }),
    );
    expect(toApiError(storeIo).body.message).toBe(
      "the event store is unavailable: its file's reads or writes fail (a file-size limit, a disk quota or a failing disk; GET /health shows the error); retry once that is fixed",
    );
    const readModelsFull = new ReadModelsFullError('the read models cannot be written: the disk holding /srv/data/read-models.sqlite is full (…)');
    expect(toApiError(readModelsFull)).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: {
        code: 'store_unavailable',
        message: 'the read models cannot be written: their disk is full; nothing was written: retry once space is freed (GET /health names the file)',
        mayHaveBeenWritten: false,
      },
    });
  });

  it('says a store that does not answer wrote nothing: mayHaveBeenWritten false', () => {
    expect(toApiError(new EventStoreUnavailableError('refused'))).toEqual({
      status: 503,
      headers: { 'retry-after': '2' },
      body: { code: 'store_unavailable', message: 'the event store is unavailable; retry later', mayHaveBeenWritten: false },
    });
    expect(storeUnavailable(false, 'not ready: another log')).toEqual({
      code: 'store_unavailable',
      message: 'not ready: another log',
      mayHaveBeenWritten: false,
    });
  });
});

describe('503 store_corrupt and read_models_damaged (newcomer ncstorage: writes into a damaged file answered 201, damaged read models 500 internal)', () => {
  it('answers a damaged event store file 503 store_corrupt, without the file path', () => {
    const { status, body } = toApiError(new EventStoreCorruptError('/srv/data/events.sqlite', 'database disk image is malformed'));
    expect(status).toBe(503);
    expect(body.code).toBe('store_corrupt');
    expect(body.message).toMatch(/damaged: nothing was written.*restores it from a backup/);
    expect(body.message).not.toContain('/srv/data');
  });

  it("answers SQLite's own corruption errors (the read models': the store wraps its own) 503 read_models_damaged, saying a restart rebuilds them", () => {
    for (const code of ['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_INDEX']) {
      const { status, body } = toApiError(Object.assign(new Error('database disk image is malformed'), { code }));
      expect(status).toBe(503);
      expect(body.code).toBe('read_models_damaged');
      expect(body.message).toMatch(/read-models\.sqlite.*restart the service.*rebuilds it from the log/);
    }
  });
});

// ncimport F3: 503 counting_timeout answers carried no Retry-After (429 and 503 shutting_down do), which an importer's retry keys on.
describe('503 counting_timeout', () => {
  it('says when to retry in Retry-After, in whole seconds, as the counting queue estimated it', () => {
    const refused = new CountingTimeoutError('counting the tokens of this request', 30_000, true, 4);
    expect(toApiError(refused)).toEqual({
      status: 503,
      // Refused at once: no deadline passed, so none is named; the body says why.
      body: { code: 'counting_timeout', message: refused.message, refusal: 'queue_full' },
      headers: { 'retry-after': '4' },
    });
    const timedOut = new CountingTimeoutError('counting the tokens of this request', 30_000, false, 2);
    expect(toApiError(timedOut).body).toEqual({ code: 'counting_timeout', message: timedOut.message, refusal: 'deadline_passed', deadlineMs: 30_000 });
    expect(toApiError(new CountingTimeoutError('counting the tokens of this request', 30_000)).headers).toEqual({ 'retry-after': '1' });
  });

  // ncsqliteops F3: a text too costly to count within the deadline even alone was answered 503 with Retry-After: 1.
  it('given a count that missed its deadline alone, then 413 counting_too_costly without Retry-After, saying what to send instead', () => {
    const tooCostly = new CountingTooCostlyError('counting the tokens of this request', 30_000);
    expect(toApiError(tooCostly)).toEqual({ status: 413, body: { code: 'counting_too_costly', message: tooCostly.message, deadlineMs: 30_000 } });
    expect(tooCostly.message).toContain('send less text per request');
  });

  it('sends the Retry-After header with the answer (through the exception filter, on Fastify)', async () => {
    const app = Fastify();
    answerErrorsWithFilter(app);
    app.get('/x', () => {
      throw new CountingTimeoutError('counting the tokens of this request', 30_000, true, 3);
    });
    app.get('/y', () => {
      throw new EventStoreUnavailableError('refused');
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    try {
      const { port } = app.server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/x`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('3');
      expect(((await res.json()) as { code: string }).code).toBe('counting_timeout');
      // A store_unavailable gets one too: a moment before retrying (newcomer ncops67 F6).
      const other = await fetch(`http://127.0.0.1:${port}/y`);
      await other.text();
      expect(other.headers.get('retry-after')).toBe('2');
    } finally {
      await app.close();
    }
  });
});

// ncaudit2 F2: HTTP and NATS answers (both through toApiError) of a compaction whose session was erased while the summarizer ran
describe('404 session_not_found of a compaction cut short by an erasure', () => {
  it('carries erasedAt and the calls the pass made (discardedSummarizerCalls), in the documented error shape', () => {
    const calls = {
      kind: 'openai-compatible',
      model: 'm',
      calls: 1,
      promptTokens: 777,
      completionTokens: 77,
      retries: 0,
      unreportedUsageCalls: 0,
      answeredModels: ['m-1'],
    };
    const { status, body } = toApiError(new SessionNotFoundError('s', '2026-12-03T10:00:00.000Z', calls));
    expect(status).toBe(404);
    expect(ErrorBodySchema.parse(body)).toEqual({
      code: 'session_not_found',
      message:
        'session "s" was erased at 2026-12-03T10:00:00.000Z (its content is gone; GET /v1/erasures lists the erasures) and has not been written since; the compaction\'s 1 summarizer call(s) made before were spent all the same (discardedSummarizerCalls)',
      erasedAt: '2026-12-03T10:00:00.000Z',
      discardedSummarizerCalls: calls,
    });
  });
});
