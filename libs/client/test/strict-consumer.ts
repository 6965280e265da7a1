/**
 * A consumer's code, type-checked by `client-types.spec.ts` under the options an integrator's
 * strict project may set (`strict`, `noUncheckedIndexedAccess`, `exactOptionalPropertyTypes`) and
 * by the repository's own `tsc`. Never run: every call is behind a function nobody calls. Each
 * `@ts-expect-error` is an assertion too (an unused one is an error).
 */
import {
  createSessionServiceClient,
  isOpenAiWindow,
  type EventsWindow,
  type ClientPaths,
  type FetchResponse,
  type LogEvent,
  type Middleware,
  type NativeEventInput,
  type OpenAiWindow,
  type paths,
  type RecallHit,
  type Schemas,
} from '../src';

declare const maybeUser: string | undefined;
declare const maybeCursor: string | null | undefined;

/** Optional query parameters take `undefined` and `null` (left out), as the README says (newcomer ncsdkuser F1). */
export async function optionalQueryParameters(): Promise<void> {
  const client = createSessionServiceClient('http://localhost:3000');
  await client.GET('/v1/sessions', { params: { query: { userId: maybeUser } } });
  await client.GET('/v1/sessions', { params: { query: { userId: null, cursor: null, limit: undefined } } });
  await client.GET('/v1/sessions', { params: { query: { cursor: maybeCursor, updatedSince: undefined } } });
  await client.GET('/v1/recall', { params: { query: { q: 'x', from: undefined, to: null, sessionId: maybeUser } } });
  await client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId: 's' }, query: { atTime: null, minPosition: undefined } } });
  // a required parameter still takes its value only
  // @ts-expect-error q is required: not undefined
  await client.GET('/v1/recall', { params: { query: { q: undefined } } });
  // @ts-expect-error q is required: not null
  await client.GET('/v1/recall', { params: { query: { q: null } } });
  // @ts-expect-error an unknown parameter is still refused
  await client.GET('/v1/sessions', { params: { query: { userID: null } } });
  // @ts-expect-error a Date only for the time parameters
  await client.GET('/v1/sessions', { params: { query: { userId: new Date() } } });
}

declare const maybeFlag: boolean | undefined;
declare const maybeDate: string | undefined;
declare const maybeRevision: number | undefined;
declare const maybeEstimator: 'cl100k_base' | 'o200k_base' | 'chars' | undefined;

/** Optional body fields, at every depth, take an explicit `undefined` (sent absent), as the README says. */
export async function optionalBodyFields(): Promise<void> {
  const client = createSessionServiceClient('http://localhost:3000');
  const path = { sessionId: 's' };
  // top level
  await client.POST('/v1/sessions/{sessionId}/compactions', {
    params: { path },
    body: { strategy: { type: 'turn-window' }, dryRun: maybeFlag, estimator: maybeEstimator, trigger: undefined },
  });
  await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [], expectedRevision: maybeRevision, userId: undefined } });
  // nested: a strategy's parameter (beside a composite trigger: the type is recursive)
  await client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: { strategy: { type: 'sliding-window', maxEvents: undefined } } });
  await client.POST('/v1/sessions/{sessionId}/compactions', {
    params: { path },
    body: { strategy: { type: 'rolling-summary', shadowPrompt: undefined }, trigger: { type: 'any-of', triggers: [{ type: 'token-count', threshold: 10 }] } },
  });
  // an event's optional fields (array items, each member of the union)
  await client.POST('/v1/sessions/{sessionId}/events', {
    params: { path },
    body: {
      events: [
        { type: 'user', text: 'hi', id: undefined, createdAt: maybeDate, metadata: undefined, name: undefined },
        { type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }], refusal: undefined },
      ],
    },
  });
  const event: NativeEventInput = { id: 'u1', type: 'user', text: 'hello', createdAt: maybeDate };
  void event;
  // OpenAI messages, a tool call's optional type inside tool_calls
  await client.POST('/v1/sessions/{sessionId}/messages', {
    params: { path },
    body: {
      messages: [
        { role: 'user', content: 'hi', name: undefined, createdAt: maybeDate },
        { role: 'assistant', content: undefined, tool_calls: [{ id: 'c1', type: undefined, function: { name: 'f', arguments: '{}' } }] },
      ],
      expectedRevision: undefined,
    },
  });
  await client.PUT('/v1/sessions/{sessionId}/policy', {
    params: { path },
    body: {
      strategy: { type: 'token-count', maxTokens: undefined },
      trigger: undefined,
      estimator: maybeEstimator,
      expectedRevision: maybeRevision,
      revision: undefined,
    },
  });
  // required members still take their value only, and a wrong type stays wrong
  // @ts-expect-error events is required: not undefined
  await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: undefined } });
  // @ts-expect-error a strategy's type is required: not undefined
  await client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: { strategy: { type: undefined } } });
  // @ts-expect-error a nested required member (a trigger's threshold) is not undefined either
  await client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: { strategy: null, trigger: { type: 'token-count', threshold: undefined } } });
  // @ts-expect-error a user event's text is required: not undefined
  await client.POST('/v1/sessions/{sessionId}/events', { params: { path }, body: { events: [{ type: 'user', text: undefined }] } });
  // @ts-expect-error dryRun is a boolean
  await client.POST('/v1/sessions/{sessionId}/compactions', { params: { path }, body: { strategy: { type: 'turn-window' }, dryRun: 'yes' } });
  // @ts-expect-error expectedRevision is refused null by the service, so the type has no null
  await client.PUT('/v1/sessions/{sessionId}/policy', { params: { path }, body: { strategy: null, expectedRevision: null } });
  // @ts-expect-error an OpenAI message field the service does not keep is refused (400 invalid_message), so the type has none (newcomer ncopenapifuzz F3)
  await client.POST('/v1/sessions/{sessionId}/messages', { params: { path }, body: { messages: [{ role: 'user', content: 'x', audio: { id: 'a' } }] } });
  await client.POST('/v1/sessions/{sessionId}/messages', {
    params: { path },
    // @ts-expect-error nor in a text part
    body: { messages: [{ role: 'user', content: [{ type: 'text', text: 'x', cache_control: {} }] }] },
  });
  // a message object with null fields the service ignores (an SDK reply appended as returned) is taken as it is
  const reply = { role: 'assistant' as const, content: 'done', refusal: null, audio: null, annotations: [] };
  await client.POST('/v1/sessions/{sessionId}/messages', { params: { path }, body: { messages: [reply] } });
}

/** Whether two types are the same (not only assignable either way). */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
/** Every operation's `responses`, by path and method. */
type ResponsesOf<P> = { [R in keyof P]: { [M in keyof P[R]]: P[R][M] extends { responses: infer X } ? X : never } };
/** The answers keep the generated types: only query parameters and request bodies are widened. */
export const responsesUnchanged: Same<ResponsesOf<ClientPaths>, ResponsesOf<paths>> = true;

/** The window's two formats have names, and the guard narrows an answer to one (F2). */
export async function windowFormats(): Promise<Schemas['OpenAiMessage'][]> {
  const client = createSessionServiceClient('http://localhost:3000');
  const path = { sessionId: 's' };
  const { data } = await client.GET('/v1/sessions/{sessionId}/window', { params: { path, query: { format: 'openai' } } });
  if (!data) return [];
  if (isOpenAiWindow(data)) {
    const openAi: OpenAiWindow = data;
    return openAi.messages;
  }
  const events: EventsWindow = data;
  const ids: string[] = events.events.map((e) => e.id);
  void ids;
  return [];
}

/** The README's other narrowing, `'messages' in data`. */
export function messagesOf(data: Schemas['Window']): Schemas['OpenAiMessage'][] {
  return 'messages' in data ? data.messages : data.events.map((e) => ({ role: 'user', content: e.id }));
}

/** The types a consumer names without a long `paths[…]` chain, and openapi-fetch's without depending on it (F5). */
export async function namedTypes(): Promise<void> {
  const client = createSessionServiceClient('http://localhost:3000');
  const requestIds: Middleware = {
    onRequest({ request }) {
      request.headers.set('X-Request-Id', 'r1');
      return request;
    },
  };
  client.use(requestIds);
  const events: NativeEventInput[] = [
    { id: 'u1', type: 'user', text: 'hello', createdAt: null },
    { id: 'a1', type: 'assistant', text: null, toolCalls: [{ id: 'c1', name: 'lookup', arguments: '{}' }] },
  ];
  await client.POST('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 's' } }, body: { events } });
  const recall = await client.GET('/v1/recall', { params: { query: { q: 'hello' } } });
  const hits: RecallHit[] = recall.data?.items ?? [];
  const best: number | undefined = hits[0]?.score;
  void best;
  const log = await client.GET('/v1/sessions/{sessionId}/events', { params: { path: { sessionId: 's' } } });
  const entries: LogEvent[] = log.data?.events ?? [];
  const positions: string[] = entries.map((e) => e.position);
  void positions;
}

/** A recall call's answer, named with openapi-fetch's `FetchResponse` (re-exported). */
type RecallAnswer = FetchResponse<ClientPaths['/v1/recall']['get'], object, 'application/json'>;
export function recallOnce(q: string): Promise<RecallAnswer> {
  return createSessionServiceClient('http://localhost:3000').GET('/v1/recall', { params: { query: { q } } });
}

/** Every operation takes the X-Request-Id header parameter, typed: text, under that name only (e.g. an erasure's id, sent again on its resend). */
export async function requestIdHeader(eraseId: string): Promise<void> {
  const client = createSessionServiceClient('http://localhost:3000');
  await client.DELETE('/v1/sessions/{sessionId}', { params: { path: { sessionId: 's' }, header: { 'X-Request-Id': eraseId } } });
  await client.GET('/health', { params: { header: { 'X-Request-Id': 'probe-1' } } });
  await client.POST('/v1/sessions/{sessionId}/events', {
    params: { path: { sessionId: 's' }, header: { 'X-Request-Id': 'append-1' } },
    body: { events: [{ type: 'user', text: 'hi' }] },
  });
  // @ts-expect-error the id is text
  await client.GET('/health', { params: { header: { 'X-Request-Id': 42 } } });
  // @ts-expect-error no other header is a declared parameter
  await client.GET('/health', { params: { header: { 'X-Trace-Id': 'x' } } });
}

/**
 * A strategy sent is `Schemas['StrategyInput']` (parameters optional), the answers' `Schemas['Strategy']` has every
 * parameter; a policy read with GET is sent back with PUT as it is (client README, "Named types"; newcomer ncagent69 F1).
 */
export async function strategyTypes(): Promise<void> {
  const client = createSessionServiceClient('http://localhost:3000');
  const sent: Schemas['StrategyInput'] = { type: 'rolling-summary', keepTurns: 2 };
  await client.POST('/v1/sessions/{sessionId}/compactions', { params: { path: { sessionId: 's' } }, body: { strategy: sent } });
  // @ts-expect-error the answers' Strategy has every parameter: it does not type a request's partial strategy
  const answered: Schemas['Strategy'] = { type: 'rolling-summary', keepTurns: 2 };
  void answered;
  const { data } = await client.GET('/v1/sessions/{sessionId}/policy', { params: { path: { sessionId: 's' } } });
  if (data?.strategy) await client.PUT('/v1/sessions/{sessionId}/policy', { params: { path: { sessionId: 's' } }, body: data });
}
