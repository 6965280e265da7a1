/**
 * A small HTTP client of the session service for the replay: JSON in and out, one-line errors
 * when nothing answers, and patient retries only where the service asks for them (429 with
 * Retry-After, 503 `projection_behind` on reads).
 */
import type { Schemas } from '@lib/client';
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

/** Answer of `POST /v1/sessions/:id/messages` (the generated client's schema). */
export type AppendAnswer = Schemas['AppendResult'];

/** `GET /health` (the generated client's schema). */
export type HealthAnswer = Schemas['Health'];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function networkReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  if (cause?.code)
    return `${cause.code}${cause.message && !cause.message.includes(cause.code) ? ` (${cause.message})` : cause.message ? ` (${cause.message})` : ''}`;
  return (err as Error).message;
}

/** Client of one service base URL. */
export class ServiceClient {
  private readonly base: string;

  /** @param baseUrl e.g. `http://127.0.0.1:3000`; a trailing slash is ignored. */
  constructor(
    baseUrl: string,
    private readonly apiKey?: string,
  ) {
    this.base = baseUrl.replace(/\/+$/, '');
  }

  /** The base URL requests go to. */
  get url(): string {
    return this.base;
  }

  /**
   * Checks that a session service answers at the URL (`GET /health`).
   * @throws ReplayError (one line) when nothing answers, or something that is not the service does.
   */
  async probe(timeoutMs = 5000): Promise<HealthAnswer> {
    let res: Response;
    try {
      res = await fetch(`${this.base}/health`, { signal: AbortSignal.timeout(timeoutMs) });
    } catch (err) {
      const reason = (err as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : networkReason(err);
      throw new ReplayError(`no session service answers at ${this.base}: ${reason}`);
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!body || typeof body !== 'object' || !('status' in body) || !('projector' in body)) {
      throw new ReplayError(`${this.base} answered GET /health with ${res.status} but is not the session service`);
    }
    if (res.status !== 200) throw new ReplayError(`the session service at ${this.base} is unhealthy: ${JSON.stringify(body)}`);
    return body as HealthAnswer;
  }

  /**
   * One request. Retries 429 (after Retry-After) and, for GET, 503 `projection_behind`, a bounded
   * number of times; any other non-2xx answer throws {@link ServiceHttpError}.
   */
  async request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(`${this.base}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      } catch (err) {
        throw new ReplayError(`the session service at ${this.base} stopped answering (${method} ${path.split('?')[0]}): ${networkReason(err)}`);
      }
      const text = await res.text();
      let json: unknown;
      try {
        json = text ? JSON.parse(text) : undefined;
      } catch {
        json = undefined;
      }
      if (res.ok) return json as T;
      const code = (json as { code?: string } | undefined)?.code;
      const message = (json as { message?: string } | undefined)?.message ?? text.slice(0, 200);
      const retriable = res.status === 429 || (method === 'GET' && res.status === 503 && code === 'projection_behind');
      if (retriable && attempt < 20) {
        const after = Number(res.headers.get('retry-after'));
        await sleep(Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 10_000) : 200 * (attempt + 1));
        continue;
      }
      const details = json !== null && typeof json === 'object' && !Array.isArray(json) ? (json as Record<string, unknown>) : undefined;
      throw new ServiceHttpError(method, path.split('?')[0], res.status, code, String(message).replace(/\s*\n\s*/g, ' '), details);
    }
  }

  /**
   * Prefix the read side needs in front of session ids: '' when reads answer under the session id
   * (correct), `default.` when they only answer under the store key `<tenant>.<sessionId>` (a
   * service bug, see README); undefined until the first session read tells.
   */
  readPrefix: string | undefined;

  /** Called once when reads need the `<tenant>.` prefix (the replay reports it). */
  onReadWorkaround?: (message: string) => void;

  /** The id a read endpoint knows `sessionId` under (see {@link readPrefix}). */
  readId(sessionId: string): string {
    return `${this.readPrefix ?? ''}${sessionId}`;
  }

  /**
   * `GET /v1/sessions/<id><suffix>`. When the service answers 404 `session_not_found` for a
   * session that was just appended to, retries under `default.<id>` (the open-mode store key);
   * if that answers, every later read uses it and {@link onReadWorkaround} is told once.
   */
  async getSession<T>(sessionId: string, suffix: string): Promise<T> {
    const at = (id: string) => this.request<T>('GET', `/v1/sessions/${encodeURIComponent(id)}${suffix}`);
    if (this.readPrefix !== undefined) return at(this.readId(sessionId));
    try {
      const answer = await at(sessionId);
      this.readPrefix ??= '';
      return answer;
    } catch (err) {
      if (!(err instanceof ServiceHttpError) || err.status !== 404 || err.code !== 'session_not_found') throw err;
      let answer: T;
      try {
        answer = await at(`default.${sessionId}`);
      } catch {
        throw err;
      }
      if (this.readPrefix === undefined) {
        this.readPrefix = 'default.';
        this.onReadWorkaround?.(
          `service bug: GET /v1/sessions/${sessionId}${suffix.split('?')[0]} answers 404 session_not_found right after an append, but the same read under "default.${sessionId}" answers: the read models key sessions by the store key <tenant>.<sessionId>; the replay reads under that key`,
        );
      }
      return answer;
    }
  }

  /** `GET /health`. */
  health(): Promise<HealthAnswer> {
    return this.request('GET', '/health');
  }
}
