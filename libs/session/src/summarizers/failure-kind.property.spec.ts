/**
 * A failed model call's reason and its kind are chosen in one place (`describeCallError`), so they
 * never disagree: for any fault the `openai` client can report (any HTTP status and error code, a
 * too-long Retry-After, the endpoint's pause, timeouts, connection errors, aborts, parse errors,
 * unknown errors), the kind is one of the closed set, and the reason falls under exactly one of the
 * documented reason shapes, the one of that kind.
 */
import fc from 'fast-check';
import OpenAI from 'openai';
import { COMPACTION_FAILURE_KINDS, type CompactionFailureKind } from '@lib/compaction';
import { EndpointPausedError } from './endpoint-pause';
import { RetryWaitTooLongError } from './model-call-retries';
import { describeCallError, KNOWN_ERROR_CODES } from './openai-summarizer';

/** The documented shapes of a failed call's reason (docs/configuration.md "Failure kinds"), each with its kind. */
const REASON_SHAPES: Array<[RegExp, CompactionFailureKind]> = [
  [/^the model endpoint rejected the credentials: HTTP 40[13]( \([a-z_]+\))?; check OPENAI_API_KEY$/, 'credentials'],
  [/^model endpoint rejected the request: HTTP \d+( \([a-z_]+\))?; check SUMMARIZER_MODEL and OPENAI_BASE_URL$/, 'model_not_found'],
  [/^rate limited: /, 'rate_limited'],
  [/^timed out after \d+ ms per attempt/, 'timeout'],
  [/^(could not reach the model endpoint|the last attempt could not connect to the model endpoint) /, 'unreachable'],
  [/^the connection to the model endpoint (was lost while its answer arrived|failed after the request was sent) /, 'connection_lost'],
  [/^model endpoint error/, 'endpoint_error'],
  [/^model endpoint rejected the request: HTTP \d+( \([a-z_]+\))?$/, 'request_rejected'],
  [/^the model endpoint answered a redirect: HTTP 3\d\d; redirects are not followed /, 'request_rejected'],
  [/^malformed JSON in the model reply$/, 'invalid_reply'],
  [/^aborted$/, 'aborted'],
  [/^unexpected error: /, 'other'],
];

const code = fc.option(fc.oneof(fc.constantFrom(...KNOWN_ERROR_CODES), fc.string({ maxLength: 20 })), { nil: undefined });
const status = fc.oneof(fc.integer({ min: 100, max: 599 }), fc.constantFrom(400, 401, 403, 404, 408, 409, 422, 429, 500, 503));

/** An HTTP error answer as the `openai` client reports it. */
const apiError = fc
  .record({ status, code })
  .map(({ status: s, code: c }) => OpenAI.APIError.generate(s, { error: c === undefined ? {} : { code: c } }, 'echoed input', new Headers()));

const fault: fc.Arbitrary<unknown> = fc.oneof(
  apiError,
  fc.record({ code }).map(({ code: c }) => new OpenAI.APIError(undefined, c === undefined ? undefined : { code: c }, 'no status', undefined)),
  fc.tuple(apiError, fc.integer({ min: 60_001, max: 10_000_000 })).map(([failure, wait]) => new RetryWaitTooLongError(failure, wait, 60_000)),
  fc.integer({ min: 60_001, max: 3_600_000 }).map((left) => new EndpointPausedError(left, 60_000, Date.UTC(2026, 11, 6) + left)),
  fc.constant(new OpenAI.APIConnectionTimeoutError()),
  fc.constant(new OpenAI.APIUserAbortError()),
  fc
    .constantFrom('ECONNREFUSED', 'ENOTFOUND', 'ECONNRESET', 'EPIPE', undefined)
    .map((c) => new OpenAI.APIConnectionError({ cause: Object.assign(new Error('x'), c ? { code: c } : {}) })),
  fc.constant(new OpenAI.APIConnectionError({ cause: Object.assign(new Error('cut'), { name: 'ReplyCutOffError' }) })),
  fc.constantFrom('SyntaxError', 'AbortError', 'TypeError', 'RangeError', 'Weird$Name').map((name) => Object.assign(new Error('m'), { name })),
  fc.anything(),
);

const ledger = fc.integer({ min: 0, max: 3 }).chain((reached) => fc.integer({ min: reached, max: 3 }).map((made) => ({ made, reached })));

describe('describeCallError: the reason and the kind of a failed call agree', () => {
  it('every reason falls under exactly one documented shape, whose kind is the failureKind (one of COMPACTION_FAILURE_KINDS)', () => {
    fc.assert(
      fc.property(fault, ledger, (err, attempts) => {
        const { reason, failureKind } = describeCallError(err, attempts, { timeoutMs: 60_000 });
        expect(COMPACTION_FAILURE_KINDS).toContain(failureKind);
        const shapes = REASON_SHAPES.filter(([shape]) => shape.test(reason));
        expect(shapes.map(([, kind]) => kind)).toEqual([failureKind]);
        // never the endpoint's own text
        expect(reason).not.toContain('echoed input');
      }),
      { numRuns: 500 },
    );
  });

  // Newcomer ncoperator F7: an unreachable endpoint said `(connection error, 2 retries)` (SUMMARIZER_MAX_RETRIES) beside `retries: 0`, `calls: 0`.
  it('names the retries made (the attempts after the first), whatever SUMMARIZER_MAX_RETRIES allows', () => {
    fc.assert(
      fc.property(fault, ledger, (err, attempts) => {
        const { reason } = describeCallError(err, attempts, { timeoutMs: 60_000 });
        const named = /\b(no retry|1 retry|(\d+) retries)\b/.exec(reason);
        if (named) expect(named[1] === 'no retry' ? 0 : named[1] === '1 retry' ? 1 : Number(named[2])).toBe(Math.max(0, attempts.made - 1));
      }),
      { numRuns: 300 },
    );
    const refused = new OpenAI.APIConnectionError({ cause: Object.assign(new Error('x'), { code: 'ECONNREFUSED' }) });
    expect(describeCallError(refused, { made: 3, reached: 0 }, { timeoutMs: 60_000 }).reason).toBe(
      'could not reach the model endpoint (connection error, 2 retries; no attempt connected, so none is counted in calls or retries); check OPENAI_BASE_URL and that the endpoint is up',
    );
    expect(describeCallError(refused, { made: 1, reached: 0 }, { timeoutMs: 60_000 }).reason).toMatch(
      /^could not reach the model endpoint \(connection error, no retry; /,
    );
    const unavailable = OpenAI.APIError.generate(503, { error: {} }, 'm', new Headers({ 'x-should-retry': 'false' }));
    expect(describeCallError(unavailable, { made: 1, reached: 1 }, { timeoutMs: 60_000 }).reason).toBe('model endpoint error: HTTP 503, not retried');
  });

  it('examples: 401 credentials, 404 model_not_found, 429 rate_limited, 503 endpoint_error, 422 request_rejected', () => {
    const kind = (s: number, c?: string) =>
      describeCallError(OpenAI.APIError.generate(s, { error: c ? { code: c } : {} }, 'm', new Headers()), { made: 1, reached: 1 }, { timeoutMs: 1 })
        .failureKind;
    expect([kind(401), kind(403), kind(404), kind(400, 'model_not_found'), kind(429), kind(503), kind(408), kind(409), kind(422)]).toEqual([
      'credentials',
      'credentials',
      'model_not_found',
      'model_not_found',
      'rate_limited',
      'endpoint_error',
      'endpoint_error',
      'endpoint_error',
      'request_rejected',
    ]);
  });
});
