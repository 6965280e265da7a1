/**
 * How the replay talks to the session service: the shared typed client (`createSessionServiceClient`
 * of `@lib/client`, openapi-fetch over the generated OpenAPI types, so a changed API breaks the
 * replay's compile) with a transport of the replay's own: one-line {@link ReplayError}s when
 * nothing answers, patient retries only where the service asks for them (429 with Retry-After,
 * 503 `projection_behind` on reads, 503 `counting_timeout`, which wrote nothing), and every other
 * non-2xx answer thrown as a
 * {@link ServiceHttpError}.
 */
import { createSessionServiceClient, type Schemas, type SessionServiceClient } from '@lib/client';
import { ReplayError } from './replay-error';

/** An HTTP answer that was not 2xx: the status and the service's `{ code, message }`. */
export class ServiceHttpError extends Error {
  override readonly name = 'ServiceHttpError';
  constructor(
    readonly method: string,
    readonly path: string,
    readonly status: number,
    readonly code: string | undefined,
    /** The service's `message` (or the start of a body that is not its JSON). */
    readonly detail: string,
    /** The whole JSON body when there was one (`parameter`, `field`, … besides `code` and `message`). */
    readonly body?: Record<string, unknown>,
  ) {
    super(`${method} ${path} answered ${status}${code ? ` ${code}` : ''}: ${detail}`);
  }

  /** True for a 4xx answer: the service refused the request (it is not a failure of the service). */
  get isClientError(): boolean {
    return this.status >= 400 && this.status < 500;
  }
}

/** `GET /health` (the generated client's schema). */
export type HealthAnswer = Schemas['Health'];

/** Attempts of one request that the service answers 429, (GET) 503 `projection_behind` or 503 `counting_timeout` before its answer is thrown. */
const MAX_RETRIES = 20;

/** Longest wait between two attempts, ms (a larger Retry-After is cut to it). */
const MAX_RETRY_WAIT_MS = 10_000;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code) return `${cause.code}${cause.message ? ` (${cause.message})` : ''}`;
  return (err as Error).message;
}

function parseJson(text: string): unknown {
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The replay's transport (openapi-fetch's `fetch` option): sends the request, retries a 429
 * (after Retry-After seconds, at most {@link MAX_RETRY_WAIT_MS}), a GET's 503
 * `projection_behind` and any request's 503 `counting_timeout` (the service wrote nothing and says
 * to retry shortly: counting on a busy machine missed its deadline) (after 200 ms × attempt when no
 * Retry-After) up to {@link MAX_RETRIES} times, and returns only 2xx answers. The first 429
 * `rate_limited` writes one line to `warn` (stderr by default): a service started with its default
 * `RATE_LIMIT_PER_MINUTE` (6,000) throttles the replay's recall checks, which otherwise looked like a
 * stall (newcomer ncreplay46).
 * @throws ReplayError (one line) when the service stops answering (connection refused, reset, …).
 * @throws ServiceHttpError for any other non-2xx answer, or a retried one after the last attempt.
 */
export function replayTransport(
  baseUrl: string,
  warn: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): (request: Request) => Promise<Response> {
  let toldRateLimit = false;
  return async (request) => {
    const path = new URL(request.url).pathname;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(request.clone());
      } catch (err) {
        throw new ReplayError(`the session service at ${baseUrl} stopped answering (${request.method} ${path}): ${networkReason(err)}`);
      }
      if (res.ok) return res;
      const text = await res.text();
      const json = parseJson(text);
      const body = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
      const code = typeof body?.code === 'string' ? body.code : undefined;
      const retriable =
        res.status === 429 || (res.status === 503 && (code === 'counting_timeout' || (request.method === 'GET' && code === 'projection_behind')));
      if (retriable && attempt < MAX_RETRIES) {
        const after = Number(res.headers.get('retry-after'));
        if (res.status === 429 && code === 'rate_limited' && !toldRateLimit) {
          toldRateLimit = true;
          warn(
            `replay: the service at ${baseUrl} rate-limits this client (429 rate_limited${Number.isFinite(after) && after > 0 ? `, Retry-After ${after} s` : ''}): the replay waits and retries, ` +
              'slowly; start the service with RATE_LIMIT_PER_MINUTE=0 (or a higher limit), or check fewer sessions with --fidelity-sessions N or --no-fidelity, to run at full speed',
          );
        }
        await sleep(Number.isFinite(after) && after > 0 ? Math.min(after * 1000, MAX_RETRY_WAIT_MS) : 200 * (attempt + 1));
        continue;
      }
      const message = typeof body?.message === 'string' ? body.message : text.slice(0, 200);
      throw new ServiceHttpError(request.method, path, res.status, code, message.replace(/\s*\n\s*/g, ' '), body);
    }
  };
}

/**
 * The typed client of the service at `baseUrl` (e.g. `http://127.0.0.1:3000`) with the replay's
 * transport: a call either answers 2xx or throws ({@link ReplayError}, {@link ServiceHttpError}).
 * Unwrap its answers with {@link ok}.
 * @param apiKey sent as `Authorization: Bearer <apiKey>` (a service with API_KEYS needs one).
 */
export function createReplayClient(baseUrl: string, apiKey?: string): SessionServiceClient {
  const base = baseUrl.replace(/\/+$/, '');
  return createSessionServiceClient(base, { apiKey, headers: { accept: 'application/json' }, fetch: replayTransport(base) });
}

/**
 * The 2xx body of a call of a {@link createReplayClient} client, typed by the route's schema (its
 * transport has already thrown every non-2xx answer).
 * @throws Error when the answer has no body (the schema promises one).
 */
export async function ok<D>(call: Promise<{ data?: D; response: Response }>): Promise<D> {
  const { data, response } = await call;
  if (data === undefined) throw new Error(`${new URL(response.url).pathname} answered ${response.status} without the body its schema promises`);
  return data;
}

/**
 * Checks that a session service answers at `baseUrl` (`GET /health` through the typed client).
 * @throws ReplayError (one line) when nothing answers within `timeoutMs` (ms), something that is
 *   not the service answers, or the service answers that it is unhealthy (an error, or a status
 *   other than `ok`: its store does not answer, or its last write failed).
 */
export async function probe(client: SessionServiceClient, baseUrl: string, timeoutMs = 5000): Promise<HealthAnswer> {
  const base = baseUrl.replace(/\/+$/, '');
  const { data, error, response } = await client.GET('/health', {
    signal: AbortSignal.timeout(timeoutMs),
    // its own transport: no retries, and an answer that is not the service's health is refused here
    fetch: async (request: Request) => {
      let res: Response;
      try {
        res = await fetch(request);
      } catch (err) {
        const reason = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : networkReason(err);
        throw new ReplayError(`no session service answers at ${base}: ${reason}`);
      }
      const text = await res.text();
      const body = parseJson(text);
      if (!body || typeof body !== 'object' || !('status' in body) || !('projector' in body)) {
        throw new ReplayError(`${base} answered GET /health with ${res.status} but is not the session service`);
      }
      return new Response(text, { status: res.status, statusText: res.statusText, headers: res.headers });
    },
  });
  if (response.status !== 200 || data === undefined) throw new ReplayError(`the session service at ${base} is unhealthy: ${JSON.stringify(error)}`);
  // Liveness answers 200 while its store is away, saying so in `status`.
  if (data.status !== 'ok') throw new ReplayError(`the session service at ${base} is unhealthy: ${JSON.stringify(data)}`);
  return data;
}
