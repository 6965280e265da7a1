import { EventStoreCorruptError, EventStoreUnavailableError, WriteOutcomeUnknownError } from '@lib/event-store';
import { humanBytes, payloadTooLarge, storeUnavailable, toApiError, WRITE_OUTCOME_UNKNOWN_MESSAGE } from './api-error.filter';

describe('413 payload_too_large', () => {
  it('gives sizes for people in binary units', () => {
    expect([512, 1024, 20_000, 5 * 1024 * 1024, 3 * 1024 ** 3].map(humanBytes)).toEqual(['512 bytes', '1 KiB', '19.5 KiB', '5 MiB', '3 GiB']);
  });

  it("names MAX_BODY_BYTES and its value: body-parser's error carries the limit", () => {
    const err = Object.assign(new Error('request entity too large'), { type: 'entity.too.large', limit: 5 * 1024 * 1024 });
    expect(toApiError(err)).toEqual({
      status: 413,
      body: { code: 'payload_too_large', message: 'request body is larger than MAX_BODY_BYTES (5242880 bytes, 5 MiB); split the events into several requests' },
    });
    expect(payloadTooLarge().message).toBe('request body is larger than the limit (MAX_BODY_BYTES); split the events into several requests');
  });
});

describe('503 store_unavailable', () => {
  // ncsdk repro 17: which of the two it was showed only in the English message.
  it('says a write whose outcome the store could not confirm may have been written, and to resend it unchanged: mayHaveBeenWritten true', () => {
    const lost = new WriteOutcomeUnknownError('PostgreSQL event store', 'append', 'session-x', 10_000, new Error('Connection terminated unexpectedly'));
    expect(toApiError(lost)).toEqual({ status: 503, body: { code: 'store_unavailable', message: WRITE_OUTCOME_UNKNOWN_MESSAGE, mayHaveBeenWritten: true } });
    expect(WRITE_OUTCOME_UNKNOWN_MESSAGE).toMatch(/may have been written; send the same request again unchanged/);
    // e.g. a KurrentDB write the server did not answer (the service does not run it again to learn its outcome)
    const unanswered = new EventStoreUnavailableError('KurrentDB did not answer the append to session-x', undefined, true);
    expect(toApiError(unanswered)).toEqual({
      status: 503,
      body: { code: 'store_unavailable', message: WRITE_OUTCOME_UNKNOWN_MESSAGE, mayHaveBeenWritten: true },
    });
  });

  it('says a store that does not answer wrote nothing: mayHaveBeenWritten false', () => {
    expect(toApiError(new EventStoreUnavailableError('refused'))).toEqual({
      status: 503,
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
