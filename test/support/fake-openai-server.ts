/**
 * A local OpenAI-compatible chat-completions server for tests, the conformance runner and the
 * model-fault tests (issue 7 §4). It listens on 127.0.0.1 on a free port (port 0), speaks just
 * enough of `POST /v1/chat/completions` for the `openai` package, and is fully programmable:
 *
 * - a **default behaviour** answers every request (a fixed reply unless told otherwise);
 * - a **queue** of behaviours is consumed first, one per request, oldest first, so "the first N
 *   requests fail, then it succeeds" is `server.enqueue(fault, fault).setDefault('ok')`;
 * - a behaviour is a fixed reply (string or {@link FakeReply}), a function of the request (which
 *   may return a promise, to hold the call), or a
 *   {@link FakeFault}: `timeout` (never answers), `status500`, `status429` (with `Retry-After`
 *   in seconds), `blank` (a whitespace-only reply), `malformed-json` (a truncated JSON body),
 *   `refusal` (`message.refusal` set, `content` null), `content-filter` (finish_reason
 *   `content_filter`), `no-choices` (valid JSON without choices);
 * - every request is recorded ({@link RecordedRequest}: model, messages, the text of all
 *   messages) so tests can assert what the model was sent and how many calls were made;
 * - every successful answer carries `usage` figures (deterministic: ⌈characters / 4⌉ unless the
 *   behaviour gives its own).
 *
 * The server never logs message text. The `Authorization` header is not recorded; only whether
 * one was present ({@link RecordedRequest.hadAuthorization}).
 *
 * ```ts
 * const server = new FakeOpenAiServer({ defaultBehaviour: 'SUMMARY' });
 * const { url, close } = await server.start();   // url = http://127.0.0.1:<port>/v1
 * server.enqueue({ fault: 'status429', retryAfterSeconds: 0 });
 * // ... point an OpenAI client at `url` ...
 * expect(server.calls).toBe(2);
 * await close();
 * ```
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/** Token usage returned with a completion (the OpenAI `usage` object, snake_case). */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** A successful reply: `content` becomes `choices[0].message.content`. */
export interface FakeReply {
  reply: string;
  /** Usage to report; missing figures are computed as ⌈characters / 4⌉. */
  usage?: Partial<FakeUsage>;
  /** `choices[0].finish_reason`; default `stop`. */
  finishReason?: 'stop' | 'length' | 'content_filter';
  /**
   * The `usage` object sent as it is, replacing the computed one: `null` leaves `usage` out, any
   * other value (strings, only `total_tokens`, …) is sent verbatim. Overrides {@link FakeReply.usage}.
   */
  rawUsage?: unknown;
  /** The `model` the reply names; default the model of the request. */
  model?: string;
  /**
   * The reply's `model` sent as it is, replacing the one named: `null` leaves `model` out, any
   * other value (a number, an empty or huge string, …) is sent verbatim. Overrides {@link FakeReply.model}.
   */
  rawModel?: unknown;
  /** Milliseconds to wait before answering (the answer is still sent after a client gave up). */
  delayMs?: number;
}

/**
 * A model fault.
 * - `timeout`: the request is accepted and never answered (the socket stays open until the
 *   client gives up or the server closes).
 * - `status500`: HTTP 500 with an OpenAI-style error body.
 * - `status401`: HTTP 401 with an OpenAI-style `invalid_api_key` error body (a wrong key).
 * - `status404`: HTTP 404 with an OpenAI-style `model_not_found` error body (a model the endpoint does not have).
 * - `status400`: HTTP 400 with an OpenAI-style error body whose `code` is `code` (default
 *   `context_length_exceeded`): an endpoint may put any text there.
 * - `status429`: HTTP 429 with `Retry-After: <retryAfterSeconds>` (default 1; whole or
 *   fractional seconds, as the header allows; null: no `Retry-After`), and `retry-after-ms:
 *   <retryAfterMs>` when given (OpenAI's header, in milliseconds).
 * - `blank`: HTTP 200 whose message content is whitespace only (`text`, default `"  \n\t "`).
 * - `malformed-json`: HTTP 200, `content-type: application/json`, a truncated JSON body.
 * - `text-content-type`: HTTP 200, a valid JSON completion sent as `content-type: text/plain`.
 * - `text-parts`: HTTP 200 whose message content is the array `parts` (content parts, as some proxies answer).
 * - `streamed`: HTTP 200, `content-type: text/event-stream`, the reply as server-sent `data:` chunks (unasked).
 * - `refusal`: HTTP 200 with `message.content` null and `message.refusal` set.
 * - `content-filter`: HTTP 200 with finish_reason `content_filter` and null content.
 * - `no-choices`: HTTP 200 with valid JSON and an empty `choices` array.
 * - `reset-mid-answer`: HTTP 200 headers and the start of a body, then the connection is destroyed.
 * - `reset`: the request is read whole, then the connection is destroyed with no answer at all.
 * - `redirect`: HTTP `status` (default 307) with `Location: <location>`, no body.
 */
export type FakeFault =
  | { fault: 'timeout' }
  | { fault: 'status500' }
  | { fault: 'status401' }
  | { fault: 'status404' }
  | { fault: 'status400'; code?: string }
  | { fault: 'status429'; retryAfterSeconds?: number | null; retryAfterMs?: number }
  | { fault: 'blank'; text?: string }
  | { fault: 'malformed-json' }
  | { fault: 'text-content-type' }
  | { fault: 'text-parts'; parts: unknown[] }
  | { fault: 'streamed' }
  | { fault: 'refusal' }
  | { fault: 'content-filter' }
  | { fault: 'no-choices' }
  | { fault: 'reset-mid-answer' }
  | { fault: 'reset' }
  | { fault: 'redirect'; location: string; status?: number };

/** The names of the faults of {@link FakeFault}. */
export type FakeFaultName = FakeFault['fault'];

/** What the server does with one request: a reply text, a {@link FakeReply}, or a {@link FakeFault}. */
export type FakeOutcome = string | FakeReply | FakeFault;

/**
 * A behaviour: a fixed outcome, or a function of the recorded request (and its 0-based index
 * among all requests this server received) returning one, or a promise of one (the request is
 * answered when it settles: a model call held until a test lets it answer). A function that
 * throws (or whose promise rejects) answers 500.
 */
export type FakeBehaviour = FakeOutcome | ((request: RecordedRequest, index: number) => FakeOutcome | Promise<FakeOutcome>);

/** One chat message as received (content as sent: a string, null, or content parts). */
export interface RecordedMessage {
  role: string;
  content: unknown;
  [key: string]: unknown;
}

/** One request the server received on the chat-completions route. */
export interface RecordedRequest {
  /** 0-based, in arrival order. */
  index: number;
  /** `model` of the request body. */
  model: string | undefined;
  /** `messages` of the request body, as sent. */
  messages: RecordedMessage[];
  /** Every message's text (string content, or the text parts joined) joined by `\n\n`, in order. */
  text: string;
  /** The whole parsed body. */
  body: Record<string, unknown>;
  /** Whether an `Authorization` header was present (its value is never recorded). */
  hadAuthorization: boolean;
  /** The request target as sent: the path and its query, e.g. `/v1/chat/completions?api-version=2024-10-21`. */
  target: string;
  /** What the server did: `reply` or the fault name. */
  answeredWith: 'reply' | FakeFaultName;
}

/** Options of {@link FakeOpenAiServer}. */
export interface FakeOpenAiServerOptions {
  /** Behaviour when the queue is empty. Default: the reply `"SUMMARY"`. */
  defaultBehaviour?: FakeBehaviour;
  /** When set, requests whose bearer token differs get HTTP 401 (and are still recorded). */
  requireApiKey?: string;
}

/** Handle returned by {@link FakeOpenAiServer.start}. */
export interface StartedFakeOpenAiServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:43121/v1` (what `OPENAI_BASE_URL` takes). */
  url: string;
  /** Stops listening and destroys open connections (including `timeout` requests). Idempotent. */
  close(): Promise<void>;
}

/** See the module documentation. One instance serves one `start()`/`close()` cycle. */
export class FakeOpenAiServer {
  /** Every request received on `/v1/chat/completions`, in arrival order. */
  readonly requests: RecordedRequest[] = [];
  private defaultBehaviour: FakeBehaviour;
  private readonly queue: FakeBehaviour[] = [];
  private server: http.Server | null = null;
  private baseUrl: string | null = null;
  private readonly requireApiKey: string | undefined;

  constructor(options: FakeOpenAiServerOptions = {}) {
    this.defaultBehaviour = options.defaultBehaviour ?? 'SUMMARY';
    this.requireApiKey = options.requireApiKey;
  }

  /** Number of chat-completion requests received so far (retries included). */
  get calls(): number {
    return this.requests.length;
  }

  /** Base URL including `/v1`; throws before {@link start}. */
  get url(): string {
    if (!this.baseUrl) throw new Error('FakeOpenAiServer: not started');
    return this.baseUrl;
  }

  /** Replaces the behaviour used when the queue is empty. Returns `this`. */
  setDefault(behaviour: FakeBehaviour): this {
    this.defaultBehaviour = behaviour;
    return this;
  }

  /** Appends behaviours to the queue; each is used for exactly one request, oldest first. Returns `this`. */
  enqueue(...behaviours: FakeBehaviour[]): this {
    this.queue.push(...behaviours);
    return this;
  }

  /** Behaviours still queued. */
  get queued(): number {
    return this.queue.length;
  }

  /** Forgets recorded requests and empties the queue (the default behaviour stays). */
  reset(): void {
    this.requests.length = 0;
    this.queue.length = 0;
  }

  /** Starts listening on 127.0.0.1, port 0 (a free port). */
  async start(): Promise<StartedFakeOpenAiServer> {
    if (this.server) throw new Error('FakeOpenAiServer: already started');
    const server = http.createServer((req, res) => {
      void this.handle(req, res);
    });
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}/v1`;
    return { url: this.baseUrl, close: () => this.close() };
  }

  /** Stops the server (see {@link StartedFakeOpenAiServer.close}). */
  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = null;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const path = (req.url ?? '').split('?')[0];
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      sendJson(res, 404, errorBody(`no route ${req.method} ${path}`, 'not_found'));
      return;
    }
    let body: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Record<string, unknown>;
    } catch {
      sendJson(res, 400, errorBody('request body is not a JSON object', 'invalid_request_error'));
      return;
    }
    const messages = Array.isArray(body.messages) ? (body.messages as RecordedMessage[]) : [];
    const record: RecordedRequest = {
      index: this.requests.length,
      model: typeof body.model === 'string' ? body.model : undefined,
      messages,
      text: messages.map((m) => contentText(m?.content)).join('\n\n'),
      body,
      hadAuthorization: typeof req.headers.authorization === 'string',
      target: req.url ?? '',
      answeredWith: 'reply',
    };
    this.requests.push(record);

    if (this.requireApiKey !== undefined && req.headers.authorization !== `Bearer ${this.requireApiKey}`) {
      sendJson(res, 401, errorBody('invalid api key', 'invalid_api_key'));
      return;
    }
    if (!Array.isArray(body.messages) || body.stream === true) {
      sendJson(
        res,
        400,
        errorBody(body.stream === true ? 'streaming is not supported by the fake server' : 'messages must be an array', 'invalid_request_error'),
      );
      return;
    }

    const behaviour = this.queue.length > 0 ? this.queue.shift()! : this.defaultBehaviour;
    let outcome: FakeOutcome;
    try {
      outcome = typeof behaviour === 'function' ? await behaviour(record, record.index) : behaviour;
    } catch {
      record.answeredWith = 'status500';
      sendJson(res, 500, errorBody('behaviour function threw', 'server_error'));
      return;
    }
    this.answer(res, record, outcome);
  }

  private answer(res: http.ServerResponse, record: RecordedRequest, outcome: FakeOutcome): void {
    const reply: FakeReply | null = typeof outcome === 'string' ? { reply: outcome } : 'reply' in outcome ? outcome : null;
    if (reply) {
      record.answeredWith = 'reply';
      const body = completion(record, reply.reply, reply.finishReason ?? 'stop', null, reply.usage);
      if (reply.model !== undefined) body.model = reply.model;
      if (reply.rawModel === null) delete body.model;
      else if (reply.rawModel !== undefined) body.model = reply.rawModel;
      if (reply.rawUsage === null) delete body.usage;
      else if (reply.rawUsage !== undefined) body.usage = reply.rawUsage;
      if (reply.delayMs) setTimeout(() => sendJson(res, 200, body), reply.delayMs);
      else sendJson(res, 200, body);
      return;
    }
    const fault = outcome as FakeFault;
    record.answeredWith = fault.fault;
    switch (fault.fault) {
      case 'timeout':
        // Never answer; close() destroys the socket.
        return;
      case 'status500':
        sendJson(res, 500, errorBody('the fake model failed', 'server_error'));
        return;
      case 'status401':
        sendJson(res, 401, errorBody('Incorrect API key provided: sk-model****', 'invalid_api_key'));
        return;
      case 'status404':
        sendJson(res, 404, errorBody('The model does not exist or you do not have access to it.', 'model_not_found'));
        return;
      case 'status400':
        sendJson(res, 400, errorBody('the request was refused', fault.code ?? 'context_length_exceeded'));
        return;
      case 'redirect':
        res.writeHead(fault.status ?? 307, { location: fault.location, 'content-length': '0' });
        res.end();
        return;
      case 'status429':
        sendJson(res, 429, errorBody('rate limit reached', 'rate_limit_exceeded'), {
          ...(fault.retryAfterSeconds === null ? {} : { 'retry-after': String(fault.retryAfterSeconds ?? 1) }),
          ...(fault.retryAfterMs === undefined ? {} : { 'retry-after-ms': String(fault.retryAfterMs) }),
        });
        return;
      case 'blank':
        sendJson(res, 200, completion(record, fault.text ?? '  \n\t ', 'stop', null));
        return;
      case 'malformed-json':
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "message": {"role": "assistant", "content": "trunc');
        return;
      case 'text-content-type': {
        const text = JSON.stringify(completion(record, 'A recap.', 'stop', null));
        res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(text) });
        res.end(text);
        return;
      }
      case 'text-parts': {
        const body = completion(record, '', 'stop', null);
        (body.choices as Array<{ message: { content: unknown } }>)[0].message.content = fault.parts;
        sendJson(res, 200, body);
        return;
      }
      case 'streamed':
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.end('data: {"id":"chatcmpl-s","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"A recap."}}]}\n\ndata: [DONE]\n\n');
        return;
      case 'refusal':
        sendJson(res, 200, completion(record, null, 'stop', 'I cannot help with that.'));
        return;
      case 'content-filter':
        sendJson(res, 200, completion(record, null, 'content_filter', null));
        return;
      case 'reset':
        res.socket?.destroy();
        return;
      case 'reset-mid-answer':
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': '500' });
        res.write('{"id": "chatcmpl-cut", "object": "chat.completion", "choices": [');
        setTimeout(() => res.socket?.destroy(), 20);
        return;
      case 'no-choices': {
        const body = completion(record, '', 'stop', null);
        body.choices = [];
        sendJson(res, 200, body);
        return;
      }
    }
  }
}

/** Creates a server with `options` and starts it; returns the server (its `url` is set). */
export async function startFakeOpenAiServer(options: FakeOpenAiServerOptions = {}): Promise<FakeOpenAiServer> {
  const server = new FakeOpenAiServer(options);
  await server.start();
  return server;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
      .join('\n');
  }
  return '';
}

function completion(
  record: RecordedRequest,
  content: string | null,
  finishReason: string,
  refusal: string | null,
  usage: Partial<FakeUsage> = {},
): Record<string, unknown> {
  const prompt = usage.prompt_tokens ?? Math.ceil(record.text.length / 4);
  const completionTokens = usage.completion_tokens ?? Math.ceil((content ?? refusal ?? '').length / 4);
  return {
    id: `chatcmpl-fake-${record.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: record.model ?? 'fake-model',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal }, finish_reason: finishReason, logprobs: null }],
    usage: { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: usage.total_tokens ?? prompt + completionTokens },
  };
}

function errorBody(message: string, code: string): Record<string, unknown> {
  return { error: { message, type: code, code, param: null } };
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}
