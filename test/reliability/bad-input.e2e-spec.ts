/**
 * Bad input (issue 7 item 3): a table of malformed requests across every endpoint. Each gets the
 * documented 4xx with a stable `code` and a `message` that names what to fix, and the store's
 * global head position is unchanged afterwards (a rejected request writes nothing).
 */
import { gzipSync } from 'node:zlib';
import { useService } from '../support/service-harness';
import { API_ERROR_CODES, type ApiErrorCode, type ErrorCodeInfo } from '../../apps/session-service/src/http/error-codes';

interface BadRequest {
  name: string;
  method: 'get' | 'post' | 'put' | 'delete';
  path: string;
  /** A JSON value to send, or `raw` for a body sent verbatim as application/json. */
  body?: unknown;
  raw?: string | Buffer;
  /** Extra request headers (they override the JSON content type). */
  headers?: Record<string, string>;
  status: number;
  code: string;
  /** What the message must name (the field, parameter or remedy). */
  mentions: RegExp;
  /** The `parameter` the answer must carry (the request path of the offending field). */
  parameter?: string;
}

const MAX_TEXT = 1000;
const MAX_EVENTS = 5;
const MAX_BODY = 20_000;

const S = '/v1/sessions/known';
const user = (id: string, text: unknown = 'hi') => ({ id, type: 'user', text });
const compact = (strategy: unknown, extra: Record<string, unknown> = {}) => ({ strategy, ...extra });
/** `{"<prefix>0": 1, …}` with `n` keys: as many unknown keys as fit in MAX_BODY (newcomer ncbounds; their cost: many-unknown-keys.spec.ts). */
const manyKeys = (n: number, prefix = 'k') => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, 1]));

const CASES: BadRequest[] = [
  // ---- POST /events: JSON and shape
  {
    name: 'broken JSON',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events": [',
    status: 400,
    code: 'malformed_json',
    mentions: /^request body is not valid JSON: the body ends before its JSON value is complete at line 1, column 13 \(position 12\)$/,
  },
  // The answer says where the body breaks: a missing comma at line 2, column 31 (offset 43, as JSON.parse counts) ...
  {
    name: 'broken JSON: a missing comma, located',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events": [\n  {"id": "e1", "type": "user" "text": "hi"}\n]}',
    status: 400,
    code: 'malformed_json',
    mentions: /^request body is not valid JSON: expected ',' or '}' after property value at line 2, column 31 \(position 43\)$/,
  },
  // ... and an unexpected token, for which JSON.parse names no position (its message quotes the text around it instead).
  {
    name: 'broken JSON: an unquoted string, located',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events": [{"id": "e1", "type": user}]}',
    status: 400,
    code: 'malformed_json',
    mentions: /^request body is not valid JSON: unexpected character "u" at line 1, column 34 \(position 33\)$/,
  },
  // Issue 17 hardening: every charset other than UTF-8 is one answer (utf-16 was 400 malformed_json, latin1 415).
  ...['utf-16', 'UTF-16LE', 'latin1', '"iso-8859-1"'].map((charset): BadRequest => ({
    name: `charset=${charset}`,
    method: 'post',
    path: `${S}/events`,
    raw: JSON.stringify({ events: [user('x1')] }),
    headers: { 'content-type': `application/json; charset=${charset}` },
    status: 415,
    code: 'unsupported_encoding',
    mentions: /UTF-8/,
  })),
  // Issue 17, item 1: refused before JSON.parse (2.5M levels held the event loop 0.5 s).
  {
    name: 'body opening 10,001 arrays (within MAX_BODY_BYTES here)',
    method: 'post',
    path: `${S}/events`,
    raw: `{"events":[{"id":"x1","type":"user","text":"hi","metadata":{"a":${'['.repeat(10_001)}`,
    status: 400,
    code: 'malformed_json',
    mentions: /deeper than 10000 levels/,
  },
  // Newcomer ncverify50 F1: a member name given twice was read as its last (the first events dropped, 201), on every body route.
  {
    name: 'events given twice: refused, not the last kept',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"d1","type":"user","text":"A"}],"events":[{"id":"d2","type":"user","text":"B"}]}',
    status: 400,
    code: 'malformed_json',
    mentions:
      /^request body gives the member "events" twice in one object, at events: first at line 1, column 2, again at line 1, column 50 \(position 49\); send each member once/,
  },
  {
    name: 'an event text given twice',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[\n  {"id":"d1","type":"user","text":"A","text":"B"}\n]}',
    status: 400,
    code: 'malformed_json',
    mentions:
      /^request body gives the member "text" twice in one object, at events\[0\]\.text: first at line 2, column 28, again at line 2, column 39 \(position 50\)/,
  },
  {
    name: 'a name given twice, once escaped',
    method: 'post',
    path: `${S}/messages`,
    raw: '{"messages":[{"role":"user","content":"A","\\u0063ontent":"B"}]}',
    status: 400,
    code: 'malformed_json',
    mentions: /^request body gives the member "content" twice in one object, at messages\[0\]\.content: /,
  },
  {
    name: 'a strategy parameter given twice',
    method: 'put',
    path: `${S}/policy`,
    raw: '{"strategy":{"type":"turn-window","maxTurns":2,"maxTurns":50}}',
    status: 400,
    code: 'malformed_json',
    mentions: /at strategy\.maxTurns: /,
  },
  {
    name: 'dryRun given twice',
    method: 'post',
    path: `${S}/compactions`,
    raw: '{"dryRun":true,"strategy":{"type":"turn-window","maxTurns":1},"dryRun":false}',
    status: 400,
    code: 'malformed_json',
    mentions: /at dryRun: /,
  },
  { name: 'body is an array', method: 'post', path: `${S}/events`, body: [user('x1')], status: 400, code: 'validation_failed', mentions: /\(body\)|object/ },
  { name: 'events missing', method: 'post', path: `${S}/events`, body: {}, status: 400, code: 'validation_failed', mentions: /^events/ },
  { name: 'events not an array', method: 'post', path: `${S}/events`, body: { events: 'hello' }, status: 400, code: 'validation_failed', mentions: /^events/ },
  { name: 'events empty', method: 'post', path: `${S}/events`, body: { events: [] }, status: 400, code: 'validation_failed', mentions: /events.*at least one/ },
  {
    name: 'unknown event type',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'robot', text: 'beep' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.type.*user, assistant, tool, system, summary/,
  },
  {
    name: 'event type missing',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', text: 'hi' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.type/,
  },
  {
    name: 'user text missing',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'user' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.text/,
  },
  // Issue 17 hardening: null text came back as content "" under format=openai (refused on the way in).
  {
    name: 'user text null',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1', null)] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.text.*need text/,
  },
  {
    name: 'system text null',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'system', text: null }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.text.*need text/,
  },
  {
    name: 'user text is a number',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1', 42)] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.text/,
  },
  {
    name: 'lone high surrogate in text',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"x1","type":"user","text":"broken \\ud800 text"}]}',
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.text.*surrogate/,
  },
  {
    name: 'lone low surrogate in a tool argument',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"x1","type":"assistant","text":null,"toolCalls":[{"id":"k1","name":"f","arguments":"\\udc00"}]}]}',
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.toolCalls\[0\]\.arguments.*surrogate/,
  },
  // Issue 17 hardening: one rule for lone surrogates, metadata keys and values included (JSON.stringify hid them).
  {
    name: 'lone surrogate in a metadata value',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"x1","type":"user","text":"hi","metadata":{"note":"a \\ud800 b"}}]}',
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.metadata.*surrogate/,
  },
  {
    name: 'lone surrogate in a nested metadata key',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"x1","type":"user","text":"hi","metadata":{"a":[{"\\udc00":1}]}}]}',
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.metadata.*surrogate/,
  },
  // Issue 17 hardening: ids with invisible or reordering characters (one rule on both routes).
  ...[
    ['right-to-left override', '\u202Eabc'],
    ['zero-width space', 'a\u200Bb'],
    ['first-strong isolate', '\u2068x'],
    ['byte-order mark', '\uFEFFx'],
    ['C1 control', 'x\u0085'],
    ['line separator', 'x\u2028'],
  ].flatMap(([what, id]): BadRequest[] => [
    {
      name: `event id with a ${what}`,
      method: 'post',
      path: `${S}/events`,
      body: { events: [user(id)] },
      status: 400,
      code: 'validation_failed',
      mentions: /^events\[0\]\.id: .*format characters/,
    },
    {
      name: `messages: id with a ${what}`,
      method: 'post',
      path: `${S}/messages`,
      body: { messages: [{ id, role: 'user', content: 'hi' }] },
      status: 400,
      code: 'invalid_message',
      mentions: /messages\[0\]\.id.*format characters/,
      parameter: 'messages[0].id',
    },
  ]),
  {
    name: 'tool call id with a right-to-left override',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'assistant', text: null, toolCalls: [{ id: 'k\u202E1', name: 'f', arguments: '{}' }] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.toolCalls\[0\]\.id.*format characters/,
  },
  {
    name: 'userId with a zero-width joiner',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], userId: 'ali\u200Dce' },
    status: 400,
    code: 'validation_failed',
    mentions: /userId.*format characters/,
  },
  {
    name: 'empty user text',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1', '')] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.text.*empty/,
  },
  {
    // newcomer ncapi66 F5: the OpenAI window rendered it as {"role":"user","content":""}, which /messages refuses
    name: 'empty summary shadow prompt',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'summary', shadowPrompt: '', text: 'Earlier: a recap.' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.shadowPrompt: must be a non-empty string: a summary is shown to the model as this user message/,
  },
  {
    name: 'empty assistant text and no tool calls',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'assistant', text: '' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\].*text, at least one tool call/,
  },
  {
    name: 'empty summary text',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'summary', shadowPrompt: 'recap', text: '' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.text.*empty/,
  },
  {
    name: 'oversized text',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1', 'x'.repeat(MAX_TEXT + 1))] },
    status: 400,
    code: 'validation_failed',
    mentions: new RegExp(
      `^events\\[0\\]\\.text: is longer than ${MAX_TEXT} .*, the limit set by MAX_TEXT_LENGTH: shorten it, or split a long text across several events$`,
    ),
  },
  {
    name: 'too many events in one request',
    method: 'post',
    path: `${S}/events`,
    body: { events: Array.from({ length: MAX_EVENTS + 1 }, (_, i) => user(`m${i}`)) },
    status: 400,
    code: 'validation_failed',
    mentions: new RegExp(
      `^events: at most ${MAX_EVENTS} events per request, the limit set by MAX_EVENTS_PER_REQUEST: split the events into several requests, in order$`,
    ),
  },
  {
    name: 'body over MAX_BODY_BYTES',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1', 'y'.repeat(MAX_BODY))] },
    status: 413,
    code: 'payload_too_large',
    // The limit's value, in bytes and for people (it named only the variable).
    mentions: /^request body is larger than MAX_BODY_BYTES \(20000 bytes, 19\.5 KiB\); split the events into several requests, in order$/,
  },
  {
    name: 'gzip body inflating past MAX_BODY_BYTES',
    method: 'post',
    path: `${S}/events`,
    raw: gzipSync(JSON.stringify({ events: [user('x1', 'y'.repeat(MAX_BODY))] })),
    headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
    status: 413,
    code: 'payload_too_large',
    mentions: /^request body is larger than MAX_BODY_BYTES \(20000 bytes, 19\.5 KiB\); split/,
  },
  {
    name: 'unknown field on an event',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ ...user('x1'), colour: 'red' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.colour.*unknown field/,
  },
  // Many unknown keys: five named, the rest counted, at the first near miss looked at; refused at about the cost of reading the body.
  {
    name: 'an event of 1,500 unknown keys',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ ...user('x1'), ...manyKeys(1500) }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.k0: unknown fields "k0", "k1", "k2", "k3", "k4" and 1495 more: remove them$/,
    parameter: 'events[0].k0',
  },
  {
    name: 'an OpenAI message of 1,500 unknown keys',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: 'hi', ...manyKeys(1500) }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.k0: unknown field "k0": remove it/,
    parameter: 'messages[0].k0',
  },
  {
    name: 'compact: a strategy of 1,000 near misses',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window', ...manyKeys(1000, 'maxEventz') }),
    status: 400,
    code: 'invalid_parameter',
    mentions:
      /^invalid strategy\.maxEventz0: must be absent \(allowed keys: type, maxEvents\) \(got an unknown key; did you mean "maxEvents"\? strategy has 999 other unknown keys: "maxEventz1", "maxEventz2", "maxEventz3", "maxEventz4" and 995 more\)$/,
    parameter: 'strategy.maxEventz0',
  },
  {
    name: 'policy: 1,500 unknown keys',
    method: 'put',
    path: `${S}/policy`,
    body: compact({ type: 'sliding-window' }, manyKeys(1500)),
    status: 400,
    code: 'validation_failed',
    mentions: /^k0: unknown fields "k0", "k1", "k2", "k3", "k4" and 1495 more: remove them$/,
    parameter: 'k0',
  },
  {
    name: 'unknown top-level field',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], sessionId: 'other' },
    status: 400,
    code: 'validation_failed',
    mentions: /sessionId.*unknown field/,
  },
  {
    name: 'assistant without text or tool calls',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'assistant' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /text, at least one tool call/,
  },
  {
    name: 'tool event with no responses',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'tool', responses: [] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.responses/,
  },
  {
    name: 'tool call with a non-string arguments',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'assistant', toolCalls: [{ id: 'k1', name: 'f', arguments: { a: 1 } }] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /toolCalls\[0\]\.arguments/,
  },
  {
    name: 'an assistant event making 129 tool calls',
    method: 'post',
    path: `${S}/events`,
    body: {
      events: [{ id: 'x1', type: 'assistant', text: null, toolCalls: Array.from({ length: 129 }, (_, i) => ({ id: `k${i}`, name: 'f', arguments: '{}' })) }],
    },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.toolCalls: must hold at most 128 tool calls/,
  },
  {
    name: 'an OpenAI assistant message making 129 tool calls',
    method: 'post',
    path: `${S}/messages`,
    body: {
      messages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: Array.from({ length: 129 }, (_, i) => ({ id: `k${i}`, type: 'function', function: { name: 'f', arguments: '{}' } })),
        },
      ],
    },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.tool_calls: must hold at most 128 tool calls/,
  },
  {
    name: 'an OpenAI assistant message giving one call id to two tool calls (the rule and code of /events)',
    method: 'post',
    path: `${S}/messages`,
    body: {
      messages: [
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'k1', type: 'function', function: { name: 'f', arguments: '{}' } },
            { id: 'k1', type: 'function', function: { name: 'g', arguments: '{}' } },
          ],
        },
      ],
    },
    status: 422,
    code: 'tool_call_conflict',
    mentions: /messages\[0\]\.tool_calls\[1\]\.id: call id "k1" appears twice in this event/,
  },
  {
    name: 'tool response without its call',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'tool', responses: [{ toolCallId: 'nope', name: 'f', data: '{}' }] }] },
    status: 422,
    code: 'unknown_tool_call',
    mentions: /events\[0\]\.responses\[0\]\.toolCallId.*append the assistant message/,
  },
  {
    name: 'same id with other content',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('u1', 'something else')] },
    status: 409,
    code: 'duplicate_event_id',
    mentions: /"u1".*new id/,
  },
  {
    name: 'same id twice in one request',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1'), user('x1', 'again')] },
    status: 400,
    code: 'invalid_request',
    mentions: /events\[1\]\.id.*twice/,
  },
  // The request's shape before the revision: a stale expectedRevision answered 409 first, then 400 once resent with the right one.
  {
    name: 'same id twice in one request with a stale expectedRevision',
    method: 'post',
    path: `${S}/events`,
    body: { expectedRevision: 5000, events: [user('x1'), user('x1', 'again')] },
    status: 400,
    code: 'invalid_request',
    mentions: /^events\[1\]\.id: id "x1" appears twice in this request/,
    parameter: 'events[1].id',
  },
  // One code on both append routes (/messages answered invalid_message).
  {
    name: 'messages: same id twice in one request',
    method: 'post',
    path: `${S}/messages`,
    body: {
      messages: [
        { id: 'x1', role: 'user', content: 'hi' },
        { id: 'x1', role: 'user', content: 'again' },
      ],
    },
    status: 400,
    code: 'invalid_request',
    mentions: /^messages\[1\]\.id: id "x1" appears twice in this request/,
    parameter: 'messages[1].id',
  },
  // Length limits count Unicode code points, and the messages say so (they said "characters" but counted UTF-16 code units).
  {
    name: 'event id of 257 emoji',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('😀'.repeat(257))] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.id: must be 1 to 256 characters \(Unicode code points\)/,
  },
  {
    name: 'messages: id of 257 emoji',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ id: '😀'.repeat(257), role: 'user', content: 'hi' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.id: must be 1 to 256 characters \(Unicode code points\)/,
  },
  {
    name: 'text of MAX_TEXT + 1 emoji',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1', '😀'.repeat(MAX_TEXT + 1))] },
    status: 400,
    code: 'validation_failed',
    mentions: new RegExp(`^events\\[0\\]\\.text: is longer than ${MAX_TEXT} characters \\(Unicode code points\\), the limit set by MAX_TEXT_LENGTH: `),
  },
  {
    name: 'id with a control character',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x\n1')] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.id/,
  },
  {
    name: 'createdAt not a date',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ ...user('x1'), createdAt: 'yesterday' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.createdAt.*ISO-8601/,
  },
  {
    name: 'expectedRevision malformed',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], expectedRevision: 'latest' },
    status: 400,
    code: 'validation_failed',
    mentions: /expectedRevision/,
  },
  {
    name: 'expectedRevision negative',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], expectedRevision: -1 },
    status: 400,
    code: 'validation_failed',
    mentions: /expectedRevision/,
  },
  {
    name: 'expectedRevision fractional',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], expectedRevision: 1.5 },
    status: 400,
    code: 'validation_failed',
    mentions: /expectedRevision/,
  },
  {
    name: 'expectedRevision stale',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], expectedRevision: 0 },
    status: 409,
    code: 'wrong_expected_revision',
    mentions: /expected revision 0.*retry with expectedRevision 3/,
  },
  {
    name: 'expectedRevision no_stream on an existing session',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], expectedRevision: 'no_stream' },
    status: 409,
    code: 'wrong_expected_revision',
    mentions: /expectedRevision/,
  },
  {
    name: 'expectedRevision stream_exists on an unknown session',
    method: 'post',
    path: '/v1/sessions/never-seen/events',
    body: { events: [user('x1')], expectedRevision: 'stream_exists' },
    status: 409,
    code: 'wrong_expected_revision',
    // Newcomer: it said "the session is at no_stream".
    mentions: /^expected the session to exist \(expectedRevision "stream_exists"\), but it has no events: .*"no_stream"/,
  },
  {
    name: 'userId empty',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], userId: '' },
    status: 400,
    code: 'validation_failed',
    mentions: /userId/,
  },
  {
    name: 'session id with a space',
    method: 'post',
    path: '/v1/sessions/bad%20id/events',
    body: { events: [user('x1')] },
    status: 400,
    code: 'invalid_session_id',
    mentions: /sessionId/,
  },
  {
    name: 'session id "..", which URL clients resolve away',
    method: 'post',
    path: '/v1/sessions/%2e%2e/events',
    body: { events: [user('x1')] },
    status: 400,
    code: 'invalid_session_id',
    mentions: /sessionId/,
  },
  {
    name: 'session id "."',
    method: 'post',
    path: '/v1/sessions/%2e/events',
    body: { events: [user('x1')] },
    status: 400,
    code: 'invalid_session_id',
    mentions: /sessionId/,
  },
  {
    name: 'session id too long',
    method: 'post',
    path: `/v1/sessions/${'s'.repeat(129)}/events`,
    body: { events: [user('x1')] },
    status: 400,
    code: 'invalid_session_id',
    mentions: /sessionId.*128/,
  },

  // ---- POST /messages
  {
    name: 'messages: broken JSON',
    method: 'post',
    path: `${S}/messages`,
    raw: '{"messages": [{"role": "user", "content": "hi"}',
    status: 400,
    code: 'malformed_json',
    mentions: /JSON/,
  },
  {
    name: 'messages: not an array',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: { role: 'user', content: 'hi' } },
    status: 400,
    code: 'validation_failed',
    mentions: /^messages/,
  },
  {
    name: 'messages: unknown role',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'robot', content: 'beep' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.role/,
  },
  {
    name: 'messages: content of the wrong type',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: 7 }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.content/,
  },
  {
    name: 'messages: tool message without tool_call_id',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'tool', content: '{}' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.tool_call_id/,
  },
  {
    name: 'messages: tool message answering no call',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'tool', tool_call_id: 'ghost', content: '{}' }] },
    status: 422,
    code: 'unknown_tool_call',
    mentions: /messages\[0\].*ghost/,
  },
  {
    name: 'messages: too many',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: Array.from({ length: MAX_EVENTS + 1 }, () => ({ role: 'user', content: 'hi' })) },
    status: 400,
    code: 'validation_failed',
    mentions: new RegExp(
      `^messages: at most ${MAX_EVENTS} messages per request, the limit set by MAX_EVENTS_PER_REQUEST: split the messages into several requests, in order$`,
    ),
  },
  {
    name: 'messages: lone surrogate',
    method: 'post',
    path: `${S}/messages`,
    raw: '{"messages":[{"role":"user","content":"a\\ud83d"}]}',
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\].*surrogate/,
  },

  // ---- POST /compactions
  {
    name: 'compact: broken JSON',
    method: 'post',
    path: `${S}/compactions`,
    raw: '{"strategy": {"type": "sliding-window",',
    status: 400,
    code: 'malformed_json',
    mentions: /JSON/,
  },
  // Without a strategy a compaction is by the session's stored policy: "known" has none.
  {
    name: 'compact: strategy missing, no policy',
    method: 'post',
    path: `${S}/compactions`,
    body: {},
    status: 400,
    code: 'invalid_parameter',
    parameter: 'strategy',
    mentions: /strategy/,
  },
  {
    name: 'compact: unknown strategy type',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'delete-everything' }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.type/,
  },
  {
    name: 'compact: zero maxEvents',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window', maxEvents: 0 }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.maxEvents/,
  },
  {
    name: 'compact: negative maxTurns',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'turn-window', maxTurns: -3 }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.maxTurns/,
  },
  {
    name: 'compact: fractional maxTokens',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'token-count', maxTokens: 10.5 }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.maxTokens/,
  },
  {
    name: 'compact: huge maxEvents',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window', maxEvents: 1e300 }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.maxEvents/,
  },
  {
    name: 'compact: maxEvents as a string',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window', maxEvents: '10' }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.maxEvents/,
  },
  {
    name: 'compact: overlapSize not below maxEventsToKeep',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 3 }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.overlapSize/,
  },
  {
    name: 'compact: unknown strategy parameter',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window', maxEvent: 3 }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.maxEvent/,
  },
  {
    name: 'compact: bad trigger',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window' }, { trigger: { type: 'token-count', threshold: -1 } }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /trigger\.threshold/,
  },
  {
    name: 'compact: unknown estimator',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window' }, { estimator: 'words' }),
    status: 400,
    code: 'validation_failed',
    mentions: /estimator/,
  },
  // Write routes take no query parameter: one there is refused before anything is written (?dryRun=true used to compact for real).
  {
    name: 'compact: dryRun as a query parameter',
    method: 'post',
    path: `${S}/compactions?dryRun=true`,
    body: compact({ type: 'sliding-window' }),
    status: 400,
    code: 'validation_failed',
    // It belongs in the body: the answer says so (it said "remove it", as of an unknown parameter).
    mentions: /^dryRun: a field of the JSON body, not a query parameter: send it in the body, e\.g\. \{"dryRun": true\}$/,
  },
  {
    name: 'policy: dryRun as a query parameter (no field of its body: a policy has no dry run)',
    method: 'put',
    path: `${S}/policy?dryRun=true`,
    body: { strategy: { type: 'sliding-window', maxEvents: 10 } },
    status: 400,
    code: 'validation_failed',
    mentions: /^dryRun: a policy has no dry run: "dryRun" is a field of a compaction request only /,
  },
  {
    name: 'append events: a query parameter',
    method: 'post',
    path: `${S}/events?foo=1`,
    body: { events: [{ id: 'query-1', type: 'user', text: 'hi' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /foo.*unknown query parameter/,
  },
  {
    name: 'append messages: a query parameter',
    method: 'post',
    path: `${S}/messages?bar=2`,
    body: { messages: [{ role: 'user', content: 'hi' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /bar.*unknown query parameter/,
  },
  {
    name: 'policy: a query parameter',
    method: 'put',
    path: `${S}/policy?foo=1`,
    body: { strategy: { type: 'sliding-window', maxEvents: 10 } },
    status: 400,
    code: 'validation_failed',
    mentions: /foo.*unknown query parameter/,
  },
  {
    name: 'compact: dryRun not a boolean',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window' }, { dryRun: 'yes' }),
    status: 400,
    code: 'validation_failed',
    mentions: /dryRun/,
  },
  {
    name: 'compact: unknown field',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window' }, { force: true }),
    status: 400,
    code: 'validation_failed',
    mentions: /force.*unknown field/,
  },
  {
    name: 'compact: unknown session',
    method: 'post',
    path: '/v1/sessions/never-seen/compactions',
    body: compact({ type: 'sliding-window', maxEvents: 2 }),
    status: 404,
    code: 'session_not_found',
    mentions: /"never-seen" does not exist: no event was appended/,
  },

  // ---- PUT /policy
  // Newcomer ncverify50 F2: was the generic `must be absent (allowed keys: type, maxTurns)`.
  {
    name: 'policy: dryRun in the strategy (a policy has no dry run)',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: { type: 'turn-window', maxTurns: 3, dryRun: true } },
    status: 400,
    code: 'invalid_parameter',
    mentions:
      /^strategy\.dryRun: unknown field "dryRun": a policy has no dry run: "dryRun" is a field of a compaction request only \(POST \/v1\/sessions\/\{sessionId\}\/compactions, NATS compact\); remove it/,
    parameter: 'strategy.dryRun',
  },
  // Was the generic `dryRun: unknown field "dryRun": remove it`.
  {
    name: 'policy: dryRun beside the strategy (a policy has no dry run)',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: { type: 'turn-window', maxTurns: 3 }, dryRun: true },
    status: 400,
    code: 'validation_failed',
    mentions:
      /^dryRun: unknown field "dryRun": a policy has no dry run: "dryRun" is a field of a compaction request only \(POST \/v1\/sessions\/\{sessionId\}\/compactions, NATS compact\); remove it/,
    parameter: 'dryRun',
  },
  { name: 'policy: broken JSON', method: 'put', path: `${S}/policy`, raw: '{"strategy": ', status: 400, code: 'malformed_json', mentions: /JSON/ },
  {
    name: 'policy: strategy with zero keepTurns',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: { type: 'rolling-summary', keepTurns: 0 } },
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.keepTurns/,
  },
  {
    name: 'policy: trigger of unknown type',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: { type: 'sliding-window' }, trigger: { type: 'sometimes' } },
    status: 400,
    code: 'invalid_parameter',
    mentions: /trigger\.type/,
  },
  // A trigger with a null strategy was recorded (an AutoCompactionPolicySet carrying it), read back as a clear, and a later clear was taken for its resend.
  {
    name: 'policy: a trigger and an estimator with a null strategy',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: null, trigger: { type: 'turn-count', maxTurns: 3 }, estimator: 'chars' },
    status: 400,
    code: 'invalid_parameter',
    mentions:
      /^trigger: a policy without a strategy has no trigger: to clear the policy send \{"strategy": null\} \(trigger null or left out\), or give a strategy/,
    parameter: 'trigger',
  },
  {
    name: 'policy: an estimator with a null strategy',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: null, estimator: 'chars' },
    status: 400,
    code: 'invalid_parameter',
    mentions: /^estimator: .*send \{"strategy": null\} \(estimator null or left out\)/,
    parameter: 'estimator',
  },
  {
    name: 'policy: a sessionId (read-only) naming another session',
    method: 'put',
    path: `${S}/policy`,
    body: { sessionId: 'someone-else', strategy: null },
    status: 400,
    code: 'invalid_parameter',
    mentions: /^sessionId: is "someone-else", another session than the .* this request is sent to: leave it out/,
    parameter: 'sessionId',
  },
  {
    name: 'policy: a read-only setAt that is no date-time',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: null, setAt: 'yesterday' },
    status: 400,
    code: 'validation_failed',
    mentions: /^setAt: must be an ISO-8601 date-time/,
  },
  {
    name: 'policy: unknown field',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: null, when: 'always' },
    status: 400,
    code: 'validation_failed',
    mentions: /when.*unknown field/,
  },

  // ---- GET /window
  { name: 'window: negative atRevision', method: 'get', path: `${S}/window?atRevision=-1`, status: 400, code: 'validation_failed', mentions: /atRevision/ },
  { name: 'window: fractional atRevision', method: 'get', path: `${S}/window?atRevision=1.5`, status: 400, code: 'validation_failed', mentions: /atRevision/ },
  {
    name: 'window: atRevision not a number',
    method: 'get',
    path: `${S}/window?atRevision=latest`,
    status: 400,
    code: 'validation_failed',
    mentions: /atRevision/,
  },
  {
    name: 'window: huge atRevision',
    method: 'get',
    path: `${S}/window?atRevision=99999999999999999999999`,
    status: 400,
    code: 'validation_failed',
    mentions: /atRevision/,
  },
  {
    name: 'window: atRevision repeated',
    method: 'get',
    path: `${S}/window?atRevision=1&atRevision=2`,
    status: 400,
    code: 'validation_failed',
    mentions: /atRevision/,
  },
  {
    name: 'window: malformed minPosition',
    method: 'get',
    path: `${S}/window?minPosition=0x10`,
    status: 400,
    code: 'validation_failed',
    mentions: /minPosition/,
  },
  {
    name: 'window: unknown format',
    method: 'get',
    path: `${S}/window?format=xml`,
    status: 400,
    code: 'validation_failed',
    mentions: /format.*events or openai/,
  },
  {
    name: 'window: unknown query parameter',
    method: 'get',
    path: `${S}/window?revision=1`,
    status: 400,
    code: 'validation_failed',
    mentions: /revision.*unknown query parameter/,
  },
  { name: 'window: unknown session', method: 'get', path: '/v1/sessions/never-seen/window', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },
  {
    name: 'window: unknown session at a revision',
    method: 'get',
    path: '/v1/sessions/never-seen/window?atRevision=0',
    status: 404,
    code: 'session_not_found',
    mentions: /"never-seen"/,
  },

  // ---- GET /events
  { name: 'log: limit zero', method: 'get', path: `${S}/events?limit=0`, status: 400, code: 'validation_failed', mentions: /limit.*1 to 1000/ },
  { name: 'log: negative limit', method: 'get', path: `${S}/events?limit=-5`, status: 400, code: 'validation_failed', mentions: /limit/ },
  { name: 'log: fractional limit', method: 'get', path: `${S}/events?limit=2.5`, status: 400, code: 'validation_failed', mentions: /limit/ },
  { name: 'log: huge limit', method: 'get', path: `${S}/events?limit=100000`, status: 400, code: 'validation_failed', mentions: /limit.*1 to 1000/ },
  {
    name: 'log: malformed fromRevision',
    method: 'get',
    path: `${S}/events?fromRevision=abc`,
    status: 400,
    code: 'validation_failed',
    mentions: /fromRevision/,
  },
  {
    name: 'log: unknown query parameter',
    method: 'get',
    path: `${S}/events?offset=3`,
    status: 400,
    code: 'validation_failed',
    mentions: /offset.*unknown query parameter/,
  },
  { name: 'log: unknown session', method: 'get', path: '/v1/sessions/never-seen/events', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },

  // ---- GET /compactions, /compactions/:id
  {
    name: 'compactions: unknown query parameter',
    method: 'get',
    path: `${S}/compactions?sort=asc`,
    status: 400,
    code: 'validation_failed',
    mentions: /sort.*unknown query parameter/,
  },
  {
    name: 'compactions: unknown session',
    method: 'get',
    path: '/v1/sessions/never-seen/compactions',
    status: 404,
    code: 'session_not_found',
    mentions: /"never-seen"/,
  },
  {
    name: 'compaction: unknown id',
    method: 'get',
    path: `${S}/compactions/00000000-0000-0000-0000-000000000000`,
    status: 404,
    code: 'compaction_not_found',
    mentions: /00000000-0000-0000-0000-000000000000/,
  },
  {
    name: 'compaction: unknown session',
    method: 'get',
    path: '/v1/sessions/never-seen/compactions/abc',
    status: 404,
    code: 'session_not_found',
    mentions: /"never-seen"/,
  },

  // ---- GET /recall
  // One code for every problem with q's value (q= was validation_failed, q=%20 invalid_query).
  { name: 'recall: q missing', method: 'get', path: '/v1/recall', status: 400, code: 'invalid_query', mentions: /^q: is required: give at least one word/ },
  { name: 'recall: q empty', method: 'get', path: '/v1/recall?q=', status: 400, code: 'invalid_query', mentions: /^q: give at least one word/ },
  { name: 'recall: q blank', method: 'get', path: '/v1/recall?q=%20', status: 400, code: 'invalid_query', mentions: /^q: give at least one word/ },
  {
    name: 'recall: q of 1001 ASCII characters',
    method: 'get',
    path: `/v1/recall?q=${'a'.repeat(1001)}`,
    status: 400,
    code: 'invalid_query',
    mentions: /^q: must be at most 1000 characters \(Unicode code points\), a fixed limit: search with fewer or shorter words$/,
  },
  {
    name: 'recall: q of 1001 emoji',
    method: 'get',
    path: `/v1/recall?q=${encodeURIComponent('😀'.repeat(1001))}`,
    status: 400,
    code: 'invalid_query',
    mentions: /^q: must be at most 1000 characters \(Unicode code points\), a fixed limit: search with fewer or shorter words$/,
  },
  {
    name: 'recall: q of only a combining mark (nothing searchable)',
    method: 'get',
    path: '/v1/recall?q=%CC%81',
    status: 400,
    code: 'invalid_query',
    mentions: /^q: must contain at least one letter, digit or emoji/,
  },
  {
    name: 'recall: q of 33 words (none is left out)',
    method: 'get',
    path: `/v1/recall?q=${Array.from({ length: 33 }, (_, i) => `w${i}`).join('%20')}`,
    status: 400,
    code: 'invalid_query',
    mentions:
      /^q: must have at most 32 words \(words without a letter, digit or emoji are not counted\), a fixed limit: search with fewer words \(every word must occur in a hit\)$/,
  },
  { name: 'recall: limit zero', method: 'get', path: '/v1/recall?q=hello&limit=0', status: 400, code: 'validation_failed', mentions: /limit.*1 to 100/ },
  { name: 'recall: limit too large', method: 'get', path: '/v1/recall?q=hello&limit=101', status: 400, code: 'validation_failed', mentions: /limit.*1 to 100/ },
  { name: 'recall: fractional limit', method: 'get', path: '/v1/recall?q=hello&limit=1.5', status: 400, code: 'validation_failed', mentions: /limit/ },
  { name: 'recall: malformed cursor', method: 'get', path: '/v1/recall?q=hello&cursor=not-a-cursor', status: 400, code: 'invalid_query', mentions: /cursor/ },
  {
    name: 'recall: archived not a boolean',
    method: 'get',
    path: '/v1/recall?q=hello&archived=maybe',
    status: 400,
    code: 'validation_failed',
    mentions: /^archived: must be true or false \(any letter case, e.g. True\) or 1 or 0$/,
  },
  {
    name: 'recall: from not a date',
    method: 'get',
    path: '/v1/recall?q=hello&from=last-week',
    status: 400,
    code: 'validation_failed',
    mentions: /from.*ISO-8601/,
  },
  { name: 'recall: unknown type', method: 'get', path: '/v1/recall?q=hello&type=robot', status: 400, code: 'validation_failed', mentions: /type/ },
  {
    name: 'recall: unknown query parameter',
    method: 'get',
    path: '/v1/recall?q=hello&tenant=other',
    status: 400,
    code: 'validation_failed',
    mentions: /tenant.*unknown query parameter/,
  },
  {
    name: 'recall: malformed session id filter',
    method: 'get',
    path: '/v1/recall?q=hello&sessionId=a%20b',
    status: 400,
    code: 'invalid_session_id',
    // Where the id fails, not only the rule (ncrecheck67: a `*` was not pointed at).
    mentions: /^sessionId: use 1 to 128 ASCII letters, digits.*: " " \(U\+0020\) is character 2$/,
  },

  // ---- DELETE and unknown routes
  { name: 'erase: unknown session', method: 'delete', path: '/v1/sessions/never-seen', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },
  {
    name: 'erase: malformed session id',
    method: 'delete',
    path: '/v1/sessions/bad%20id',
    status: 400,
    code: 'invalid_session_id',
    mentions: /sessionId: .*" " \(U\+0020\) is character 4$/,
  },
  {
    name: 'erase: over-long session id',
    method: 'delete',
    path: `/v1/sessions/${'s'.repeat(129)}`,
    status: 400,
    code: 'invalid_session_id',
    mentions: /sessionId: use 1 to 128 .*: it has 129 characters$/,
  },
  {
    name: 'erase: unknown query parameter',
    method: 'delete',
    path: `${S}?force=true`,
    status: 400,
    code: 'validation_failed',
    mentions: /force.*unknown query parameter/,
  },
  // ---- found by a newcomer trying to break the API
  {
    name: 'lone surrogate in an event id',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"\\ud800","type":"user","text":"hi"}]}',
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.id.*surrogate/,
  },
  {
    name: 'lone surrogate in userId',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"x1","type":"user","text":"hi"}],"userId":"a\\udc00"}',
    status: 400,
    code: 'validation_failed',
    mentions: /userId.*surrogate/,
  },
  {
    name: 'metadata nested 2000 levels',
    method: 'post',
    path: `${S}/events`,
    raw: `{"events":[{"id":"x1","type":"user","text":"hi","metadata":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}]}`,
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.metadata: nests deeper than 16 levels, a fixed limit: flatten it$/,
  },
  {
    name: 'body not matching its Content-Encoding',
    method: 'post',
    path: `${S}/events`,
    raw: JSON.stringify({ events: [user('x1')] }),
    headers: { 'content-encoding': 'gzip' },
    status: 400,
    code: 'malformed_body',
    mentions: /Content-Encoding/,
  },
  {
    name: 'form-encoded body',
    method: 'post',
    path: `${S}/events`,
    raw: 'events=1',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    status: 415,
    code: 'unsupported_media_type',
    mentions: /application\/json/,
  },
  {
    name: 'text/plain body',
    method: 'post',
    path: `${S}/compactions`,
    raw: '{"strategy":{"type":"sliding-window"}}',
    headers: { 'content-type': 'text/plain' },
    status: 415,
    code: 'unsupported_media_type',
    mentions: /Content-Type: application\/json/,
  },
  // A parameter without "=" is no parameter (RFC 9110 §5.6.6; newcomer ncfresh70 N1: it was ignored).
  {
    name: 'Content-Type parameter without a value',
    method: 'post',
    path: `${S}/events`,
    raw: '{"events":[{"id":"ct1","type":"user","text":"x"}]}',
    headers: { 'content-type': 'application/json; foo' },
    status: 415,
    code: 'unsupported_media_type',
    mentions: /^the Content-Type's parameter "foo" has no value \(a parameter is name=value\): send Content-Type: application\/json/,
  },
  { name: 'JSON null body', method: 'post', path: `${S}/events`, raw: 'null', status: 400, code: 'validation_failed', mentions: /body must be a JSON object/ },
  {
    name: 'compact: strategy missing on a session without a policy',
    method: 'post',
    path: `${S}/compactions`,
    body: {},
    status: 400,
    code: 'invalid_parameter',
    mentions: /^strategy: is required: session "known" has no auto-compaction policy to compact by/,
  },
  // A misspelled required field: the "required" message names the unknown key and the field it may have meant (newcomer F7).
  {
    name: 'append: events misspelled evnts',
    method: 'post',
    path: `${S}/events`,
    body: { evnts: [{ id: 'u1', type: 'user', text: 'hi' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events: is required \(the body has an unknown field "evnts": did you mean "events"\?\)$/,
  },
  {
    name: 'compact: strategy misspelled stratgy',
    method: 'post',
    path: `${S}/compactions`,
    body: { stratgy: { type: 'sliding-window' } },
    status: 400,
    code: 'validation_failed',
    // strategy may be left out (the stored policy): the misspelled key is refused as unknown, never read as "no strategy"
    mentions: /^stratgy: unknown field "stratgy": did you mean "strategy"\?$/,
  },
  // A strategy's or trigger's parameter sent beside them is told where it belongs: "remove it" ran the compaction with the default.
  {
    name: 'compact: maxTurns beside the strategy',
    method: 'post',
    path: `${S}/compactions`,
    body: { strategy: { type: 'turn-window' }, maxTurns: 3 },
    status: 400,
    code: 'validation_failed',
    parameter: 'maxTurns',
    mentions:
      /^maxTurns: unknown field "maxTurns": it is a parameter of the strategy or the trigger; move it into "strategy" or "trigger" \(strategy\.maxTurns \/ trigger\.maxTurns\)$/,
  },
  {
    name: 'policy: maxEvents beside the strategy',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', maxTurns: 4 }, maxEvents: 5 },
    status: 400,
    code: 'validation_failed',
    parameter: 'maxEvents',
    mentions: /^maxEvents: unknown field "maxEvents": it is a parameter of the strategy; move it into "strategy" \(strategy\.maxEvents\)$/,
  },
  {
    name: 'policy: threshold beside a turn-count trigger (which does not take it)',
    method: 'put',
    path: `${S}/policy`,
    body: { strategy: { type: 'sliding-window' }, trigger: { type: 'turn-count', maxTurns: 4 }, threshold: 1000 },
    status: 400,
    code: 'validation_failed',
    parameter: 'threshold',
    mentions:
      /^threshold: unknown field "threshold": it is a parameter of the token-count trigger, not of the turn-count trigger sent: change the type, or remove it$/,
  },
  {
    name: 'compaction: dryRun sent inside the strategy',
    method: 'post',
    path: `${S}/compactions`,
    body: { strategy: { type: 'turn-window', maxTurns: 3, dryRun: true } },
    status: 400,
    code: 'invalid_parameter',
    parameter: 'strategy.dryRun',
    mentions:
      /^strategy\.dryRun: unknown field "dryRun": it is a field of the request body, not of the strategy; move it out of "strategy", beside it in the body$/,
  },
  {
    name: 'recall: q sent as Q',
    method: 'get',
    path: '/v1/recall?Q=hello',
    status: 400,
    code: 'invalid_query',
    mentions: /^q: is required: .* \(the query has an unknown parameter "Q": did you mean "q"\?\)$/,
  },
  {
    name: 'tool calls: one id twice in an event',
    method: 'post',
    path: `${S}/events`,
    body: {
      events: [
        {
          id: 'x1',
          type: 'assistant',
          text: null,
          toolCalls: [
            { id: 'k9', name: 'f', arguments: '{}' },
            { id: 'k9', name: 'f', arguments: '{}' },
          ],
        },
      ],
    },
    status: 422,
    code: 'tool_call_conflict',
    mentions: /events\[0\]\.toolCalls\[1\]\.id.*twice/,
  },
  {
    name: 'tool calls: a second answer to an answered call',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'tool', responses: [{ toolCallId: 'call_1', name: 'lookup', data: 'again' }] }] },
    status: 422,
    code: 'tool_call_conflict',
    mentions: /responses\[0\]\.toolCallId.*already answered/,
  },
  {
    name: 'tool calls: reusing the id of an open call',
    method: 'post',
    path: `${S}/events`,
    body: {
      events: [
        { id: 'x1', type: 'assistant', text: null, toolCalls: [{ id: 'k7', name: 'f', arguments: '{}' }] },
        { id: 'x2', type: 'assistant', text: null, toolCalls: [{ id: 'k7', name: 'f', arguments: '{}' }] },
      ],
    },
    status: 422,
    code: 'tool_call_conflict',
    mentions: /events\[1\]\.toolCalls\[0\]\.id.*waiting/,
  },
  {
    name: 'window: atRevision past the last revision',
    method: 'get',
    path: `${S}/window?atRevision=99`,
    status: 400,
    code: 'revision_out_of_range',
    mentions: /atRevision: the session.s revisions run from 0 to 3/,
  },
  // ---- found by the second fresh pass
  {
    name: 'body not matching Content-Encoding br',
    method: 'post',
    path: `${S}/events`,
    raw: JSON.stringify({ events: [user('x1')] }),
    headers: { 'content-encoding': 'br' },
    status: 400,
    code: 'malformed_body',
    mentions: /Content-Encoding/,
  },
  {
    name: 'body with invalid UTF-8 bytes',
    method: 'post',
    path: `${S}/events`,
    raw: Buffer.concat([Buffer.from('{"events":[{"id":"x1","type":"user","text":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]),
    status: 400,
    code: 'malformed_body',
    mentions: /UTF-8/,
  },
  {
    name: 'lone surrogate in a strategy prompt',
    method: 'post',
    path: `${S}/compactions`,
    raw: '{"strategy":{"type":"rolling-summary","shadowPrompt":"p\\ud800"}}',
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.shadowPrompt.*surrogate/,
  },
  {
    name: 'path not valid percent-encoded UTF-8',
    method: 'get',
    path: '/v1/sessions/%ED%A0%80/window',
    status: 400,
    code: 'invalid_path',
    mentions: /percent-encoded/,
  },
  // Query values decode strictly, on every route: these were 200 with nothing found (the raw text was searched for).
  ...[
    ['recall q with a byte that is not UTF-8', '/v1/recall?q=zeta%FF', 'q'],
    ['recall q with an encoded lone surrogate', '/v1/recall?q=%ED%A0%80zeta', 'q'],
    ['session list userId with a byte that is not UTF-8', '/v1/sessions?userId=alice%FF', 'userId'],
    ['recall sessionId with a byte that is not UTF-8', '/v1/recall?q=hello&sessionId=known%FF', 'sessionId'],
  ].map(([name, path, parameter]): BadRequest => ({
    name,
    method: 'get',
    path,
    status: 400,
    code: 'invalid_query_encoding',
    mentions: new RegExp(`^${parameter}: its value is not valid percent-encoded UTF-8: percent-encode the UTF-8 bytes`),
    parameter,
  })),
  // Compaction ids are UUIDs: any other value could match nothing (it answered 200 with no hits).
  {
    name: 'recall: compactionId that is not a compaction id',
    method: 'get',
    path: '/v1/recall?q=hello&compactionId=cmp-1',
    status: 400,
    code: 'validation_failed',
    mentions: /^compactionId: is not a compaction id: compaction ids are UUIDs/,
    parameter: 'compactionId',
  },
  // DESIGN §5 calls the filter "kind"; its parameter is type.
  {
    name: 'recall: kind instead of type',
    method: 'get',
    path: '/v1/recall?q=hello&kind=tool',
    status: 400,
    code: 'validation_failed',
    mentions: /^kind: unknown query parameter "kind": the event kind filter is type \(e\.g\. type=tool\)$/,
    parameter: 'kind',
  },
  {
    name: 'session list: updatedSince after updatedBefore (newcomer ncrecall61 F1: answered 200 with no sessions)',
    method: 'get',
    path: '/v1/sessions?updatedSince=2026-12-06T03:00:00Z&updatedBefore=2026-12-06T02:00:00Z',
    status: 400,
    code: 'validation_failed',
    mentions: /^updatedSince: must be earlier than updatedBefore$/,
    parameter: 'updatedSince',
  },
  {
    name: 'session list: an empty range, the same instant in two offsets',
    method: 'get',
    path: '/v1/sessions?updatedSince=2026-12-06T03:00:00%2B01:00&updatedBefore=2026-12-06T02:00:00Z',
    status: 400,
    code: 'validation_failed',
    mentions: /^updatedSince: must be earlier than updatedBefore$/,
    parameter: 'updatedSince',
  },
  {
    name: 'recall: from after to',
    method: 'get',
    path: '/v1/recall?q=hello&from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z',
    status: 400,
    code: 'validation_failed',
    mentions: /^from: must be earlier than to$/,
    parameter: 'from',
  },
  {
    name: 'messages: empty content',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: '' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.content/,
  },
  // ---- issue 17 item 4: what goes in comes out (nothing accepted that would come out otherwise)
  {
    name: 'assistant with text null and nothing else',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'assistant', text: null }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\].*text, at least one tool call, or a refusal/,
  },
  {
    name: 'assistant with an empty tool call list',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'assistant', text: null, toolCalls: [] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /text, at least one tool call, or a refusal/,
  },
  {
    name: 'textParts that do not make the text',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ ...user('x1', 'hello world'), textParts: ['hello', 'world'] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.textParts.*concatenate/,
    parameter: 'events[0].textParts',
  },
  // Text sent only as empty parts: the answer names the part the caller sent (it said `events[0].text: is required`).
  {
    name: 'user text sent as one empty part',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'user', textParts: [''] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.textParts\[0\]: .*empty.*send some text/,
    parameter: 'events[0].textParts[0]',
  },
  {
    name: 'system text empty, sent as empty parts',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x0'), { id: 'x1', type: 'system', text: '', textParts: ['', ''] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[1\]\.textParts\[0\]: .*empty.*send some text/,
    parameter: 'events[1].textParts[0]',
  },
  {
    name: 'assistant text sent as empty parts, no tool call',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ id: 'x1', type: 'assistant', text: '', textParts: [''] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.textParts\[0\]: .*empty.*tool call/,
    parameter: 'events[0].textParts[0]',
  },
  {
    name: 'messages: user content as one empty text part',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: [{ type: 'text', text: '' }] }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.content\[0\]\.text: .*empty.*send some text/,
    parameter: 'messages[0].content[0].text',
  },
  {
    name: 'messages: assistant content as empty text parts, no tool_calls',
    method: 'post',
    path: `${S}/messages`,
    body: {
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: '' },
            { type: 'text', text: '' },
          ],
        },
      ],
    },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.content\[0\]\.text: .*empty.*tool_calls/,
    parameter: 'messages[0].content[0].text',
  },
  {
    name: 'empty name on an event',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ ...user('x1'), name: '' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /events\[0\]\.name.*empty/,
  },
  {
    name: 'messages: assistant with content null and nothing else',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'assistant', content: null, tool_calls: [] }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.content.*content \(a non-empty string or text parts\), tool_calls or a refusal/,
    parameter: 'messages[0].content',
  },
  {
    name: 'messages: assistant with empty content and nothing else',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'assistant', content: '' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.content: an assistant message needs content/,
    parameter: 'messages[0].content',
  },
  {
    name: 'messages: a field the service would drop',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: 'hi', audio: { id: 'a1' } }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.audio.*unknown field/,
    parameter: 'messages[0].audio',
  },
  {
    name: 'messages: a text part with an extra field',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.content\[0\]\.cache_control.*unknown field/,
  },
  {
    name: 'messages: empty name',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: 'hi', name: '' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /messages\[0\]\.name/,
    parameter: 'messages[0].name',
  },
  {
    name: 'messages: a second answer names the tool message field',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'tool', tool_call_id: 'call_1', content: 'again' }] },
    status: 422,
    code: 'tool_call_conflict',
    mentions: /^messages\[0\]\.tool_call_id: .*already answered/,
    parameter: 'messages[0].tool_call_id',
  },
  {
    name: 'messages: reusing an open call id names tool_calls',
    method: 'post',
    path: `${S}/messages`,
    body: {
      messages: [
        { role: 'assistant', content: null, tool_calls: [{ id: 'k8', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'k8', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ],
    },
    status: 422,
    code: 'tool_call_conflict',
    mentions: /^messages\[1\]\.tool_calls\[0\]\.id: .*waiting/,
    parameter: 'messages[1].tool_calls[0].id',
  },
  {
    name: 'messages: answer to an unknown call uses parameter',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'tool', tool_call_id: 'ghost', content: 'x' }] },
    status: 422,
    code: 'unknown_tool_call',
    mentions: /messages\[0\]\.tool_call_id/,
    parameter: 'messages[0].tool_call_id',
  },
  // ---- a session belongs to one user (the first userId appended to it: "alice" here)
  {
    name: 'events: a second, different userId',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], userId: 'mallory' },
    status: 409,
    code: 'user_id_conflict',
    mentions: /^userId: .*"alice".*"mallory"/,
    parameter: 'userId',
  },
  {
    name: 'messages: a second, different userId',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: 'hi' }], userId: 'mallory' },
    status: 409,
    code: 'user_id_conflict',
    mentions: /^userId: .*"alice"/,
    parameter: 'userId',
  },
  // Issue 17 hardening: clearing a policy of a session that does not exist created the session with a policy event.
  {
    name: 'policy: clear on a session that does not exist',
    method: 'put',
    path: '/v1/sessions/never-written/policy',
    body: { strategy: null },
    status: 404,
    code: 'session_not_found',
    mentions: /never-written/,
  },
  { name: 'unknown route', method: 'post', path: `${S}/rewind`, body: {}, status: 404, code: 'route_not_found', mentions: /docs/ },
  // Issue 17 hardening: ids longer than the router's parameter limit reach their handler (they answered 500).
  {
    name: 'window: a 5,000-character session id',
    method: 'get',
    path: `/v1/sessions/${'a'.repeat(5000)}/window`,
    status: 400,
    code: 'invalid_session_id',
    mentions: /sessionId: .*128/,
    parameter: 'sessionId',
  },
  // An error message repeats at most 64 characters of a client's value, and says how long it is (a 10,000-character id came back whole).
  {
    name: 'compaction: a 10,000-character compaction id is repeated bounded',
    method: 'get',
    path: `${S}/compactions/${'c'.repeat(10_000)}`,
    status: 404,
    code: 'compaction_not_found',
    mentions: /^session "known" has no compaction "c{64}…" \(10000 characters\): it is not a compaction id: compaction ids are UUIDs such as /,
  },
  {
    name: 'diff: a 10,000-character compaction id is repeated bounded',
    method: 'get',
    path: `${S}/compactions/${'d'.repeat(10_000)}/diff`,
    status: 404,
    code: 'compaction_not_found',
    mentions: /^session "known" has no compaction "d{64}…" \(10000 characters\): it is not a compaction id: compaction ids are UUIDs such as /,
  },
  {
    name: 'a 10,000-character query parameter name is repeated bounded',
    method: 'post',
    path: `${S}/compactions?${'q'.repeat(10_000)}=1`,
    body: compact({ type: 'sliding-window' }),
    status: 400,
    code: 'validation_failed',
    mentions: /^q{64}… \(10000 characters\): unknown query parameter "q{64}…" \(10000 characters\): remove it$/,
  },
  {
    name: 'a 10,000-character unknown field name is repeated bounded',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('long-key-1')], ['f'.repeat(10_000)]: 1 },
    status: 400,
    code: 'validation_failed',
    mentions: /^f{64}… \(10000 characters\): unknown field "f{64}…" \(10000 characters\): remove it$/,
  },
  // Newcomer findings: a long unknown strategy key came back whole; `?=` was named "(body)"; unknown tool-call fields on /messages were dropped with a 201.
  {
    name: 'compact: an 8,000-character unknown strategy key is repeated bounded',
    method: 'post',
    path: `${S}/compactions`,
    body: { strategy: { type: 'token-count', maxTokens: 60, ['x'.repeat(8000)]: 1 } },
    status: 400,
    code: 'invalid_parameter',
    parameter: `strategy.${'x'.repeat(64)}… (8000 characters)`,
    mentions: /strategy\.x{64}… \(8000 characters\): must be absent \(allowed keys: type, maxTokens\)/,
  },
  {
    name: 'a query parameter with an empty name is named "", not (body)',
    method: 'post',
    path: `${S}/events?=`,
    body: { events: [{ id: 'query-empty-1', type: 'user', text: 'hi' }] },
    status: 400,
    code: 'validation_failed',
    parameter: '""',
    mentions: /^"": unknown query parameter "": remove it$/,
  },
  {
    name: 'messages: an unknown field inside a tool call is refused, not dropped',
    method: 'post',
    path: `${S}/messages`,
    body: {
      messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'tc-extra', type: 'function', extra: 1, function: { name: 'n', arguments: '{}' } }] }],
    },
    status: 400,
    code: 'invalid_message',
    parameter: 'messages[0].tool_calls[0].extra',
    mentions: /unknown field "extra": remove it/,
  },
  {
    name: 'compaction: a 5,000-character compaction id',
    method: 'get',
    path: `${S}/compactions/${'c'.repeat(5000)}`,
    status: 404,
    code: 'compaction_not_found',
    mentions: /compaction/,
  },
  // ---- issue 17: numbers out of range (each query number has a range, named in its 400)
  {
    name: 'log: fromRevision 2^63',
    method: 'get',
    path: `${S}/events?fromRevision=9223372036854775808`,
    status: 400,
    code: 'validation_failed',
    mentions: /fromRevision.*from 0 to 9223372036854775807/,
  },
  {
    name: 'log: fromRevision of 20 digits',
    method: 'get',
    path: `${S}/events?fromRevision=99999999999999999999`,
    status: 400,
    code: 'validation_failed',
    mentions: /fromRevision.*from 0 to 9223372036854775807/,
  },
  {
    name: 'log: limit of 20 digits',
    method: 'get',
    path: `${S}/events?limit=10000000000000000000`,
    status: 400,
    code: 'validation_failed',
    mentions: /limit.*from 1 to 1000/,
  },
  {
    name: 'window: atRevision 9999999999999999999',
    method: 'get',
    path: `${S}/window?atRevision=9999999999999999999`,
    status: 400,
    code: 'validation_failed',
    mentions: /atRevision.*from 0 to 9223372036854775807/,
  },
  {
    name: 'window: atRevision 2^63 - 1',
    method: 'get',
    path: `${S}/window?atRevision=9223372036854775807`,
    status: 400,
    code: 'revision_out_of_range',
    mentions: /atRevision: the session.s revisions run from 0 to 3/,
  },
  {
    name: 'window: minPosition 2^63',
    method: 'get',
    path: `${S}/window?minPosition=9223372036854775808`,
    status: 400,
    code: 'validation_failed',
    mentions: /minPosition.*from 0 to 9223372036854775807/,
  },
  {
    name: 'window: minPosition past the end of the log',
    method: 'get',
    path: `${S}/window?minPosition=9223372036854775807`,
    status: 400,
    code: 'position_out_of_range',
    mentions: /^minPosition: .*the log ends at \d+/,
    parameter: 'minPosition',
  },
  {
    name: 'compaction history: minPosition past the end of the log',
    method: 'get',
    path: `${S}/compactions?minPosition=9223372036854775807`,
    status: 400,
    code: 'position_out_of_range',
    mentions: /^minPosition: /,
    parameter: 'minPosition',
  },
  { name: 'window: negative minPosition', method: 'get', path: `${S}/window?minPosition=-1`, status: 400, code: 'validation_failed', mentions: /minPosition/ },
  {
    name: 'recall: limit of 20 digits',
    method: 'get',
    path: '/v1/recall?q=hello&limit=18446744073709551616',
    status: 400,
    code: 'validation_failed',
    mentions: /limit.*from 1 to 100/,
  },
  {
    name: 'recall: negative limit',
    method: 'get',
    path: '/v1/recall?q=hello&limit=-1',
    status: 400,
    code: 'validation_failed',
    mentions: /limit.*from 1 to 100/,
  },
  {
    name: 'expectedRevision 2^63 as a string',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], expectedRevision: '9223372036854775808' },
    status: 400,
    code: 'validation_failed',
    mentions: /expectedRevision/,
  },
  {
    name: 'messages: expectedRevision 2^63 as a string',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: 'hi' }], expectedRevision: '9999999999999999999' },
    status: 400,
    code: 'validation_failed',
    mentions: /expectedRevision/,
  },
  // ---- misleading messages (newcomer, round 2)
  {
    name: 'an event that is null',
    method: 'post',
    path: `${S}/events`,
    body: { events: [null] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]: must be an object: an event such as/,
    parameter: 'events[0]',
  },
  {
    name: 'textParts without text',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ type: 'user', textParts: ['x', 'y'] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.text: is required, also with textParts: send the whole text in text .*concatenation/,
  },
  {
    name: 'user text empty (one message with text null)',
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1', '')] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.text: must be a non-empty string: user and system events need text/,
  },
  // Text that shows nothing is no text either (newcomer ncfresh70 F1: a system message of U+200B was pinned, the instructions archived).
  ...(
    [
      ['user text of spaces', { events: [user('x1', '   ')] }, 'events[0].text', 'user and system events need text a model can read'],
      ['system text of a zero-width space', { events: [{ id: 'x1', type: 'system', text: '\u200b' }] }, 'events[0].text', 'user and system events need text'],
      ['user text of a lone combining mark and a newline', { events: [user('x1', '\u0301\n')] }, 'events[0].text', 'user and system events need text'],
      [
        'summary text of a Hangul filler',
        { events: [{ id: 'x1', type: 'summary', shadowPrompt: 'recap', text: '\u3164' }] },
        'events[0].text',
        'a summary needs text',
      ],
      [
        'summary shadowPrompt of tabs',
        { events: [{ id: 'x1', type: 'summary', shadowPrompt: '\t\t', text: 'a recap' }] },
        'events[0].shadowPrompt',
        'a summary is shown to the model as this user message',
      ],
    ] as const
  ).map(([name, body, field, why]): BadRequest => ({
    name,
    method: 'post',
    path: `${S}/events`,
    body,
    status: 400,
    code: 'validation_failed',
    mentions: new RegExp(`^${field.replace(/[[\].]/g, '\\$&')}: is blank \\(only characters that render as nothing .*\\): ${why}`),
    parameter: field,
  })),
  ...(['system', 'developer', 'user'] as const).map((role): BadRequest => ({
    name: `messages: ${role} content of white space and a zero-width joiner`,
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role, content: ' \u200d ' }] },
    status: 400,
    code: 'invalid_message',
    mentions: new RegExp(
      `^messages\\[0\\]\\.content: is blank \\(only characters that render as nothing .*\\): ${role} messages need text a model can read; send the text$`,
    ),
    parameter: 'messages[0].content',
  })),
  {
    name: 'strategy systemPrompt of a zero-width space',
    method: 'post',
    path: `${S}/compactions`,
    body: { strategy: { type: 'rolling-summary', systemPrompt: '\u200b' } },
    status: 400,
    code: 'invalid_parameter',
    mentions: /strategy\.systemPrompt.*non-blank/,
  },
  ...[null, undefined].map((content): BadRequest => ({
    name: `messages: user content ${String(content)}`,
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.content: is required: a non-empty string or a non-empty array of text parts \(user messages need text\)$/,
    parameter: 'messages[0].content',
  })),
  // Content that was sent is not "required": say what is wrong with it and what to send.
  {
    name: 'messages: user content ""',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: '' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.content: is an empty string: send the text \(a non-empty string or a non-empty array of text parts; user messages need text\)$/,
    parameter: 'messages[0].content',
  },
  {
    name: 'messages: user content []',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: [] }] },
    status: 400,
    code: 'invalid_message',
    mentions:
      /^messages\[0\]\.content: is an empty array: send at least one text part \{"type": "text", "text": "…"\}, or the text as a non-empty string \(user messages need text\)$/,
    parameter: 'messages[0].content',
  },
  ...[null, '', []].map((content): BadRequest => ({
    name: `messages: assistant content ${JSON.stringify(content)} without tool_calls`,
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'assistant', content }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.content: an assistant message needs content \(a non-empty string or text parts\), tool_calls or a refusal$/,
    parameter: 'messages[0].content',
  })),
  {
    name: 'messages: tool message without tool_call_id',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'tool', content: 'x' }] },
    status: 400,
    code: 'invalid_message',
    mentions: /^messages\[0\]\.tool_call_id: is required/,
  },
  // ---- validation-library wording and slips
  {
    name: 'tool event with no responses',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ type: 'tool', responses: [] }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.responses: must hold at least one response/,
  },
  {
    name: 'recall: q given twice',
    method: 'get',
    path: '/v1/recall?q=a&q=b',
    status: 400,
    code: 'invalid_query',
    mentions: /^q: is given 2 times: send it once$/,
  },
  {
    name: 'recall: cursor given twice',
    method: 'get',
    path: '/v1/recall?q=a&cursor=x&cursor=y',
    status: 400,
    code: 'invalid_query',
    mentions: /^cursor: is given 2 times: send it once$/,
  },
  {
    name: 'recall: sessionId filter given twice',
    method: 'get',
    path: '/v1/recall?q=a&sessionId=x&sessionId=y',
    status: 400,
    code: 'invalid_session_id',
    mentions: /^sessionId: is given 2 times: send it once$/,
  },
  {
    name: 'sessions: cursor given twice',
    method: 'get',
    path: '/v1/sessions?cursor=x&cursor=y',
    status: 400,
    code: 'invalid_query',
    mentions: /^cursor: is given 2 times: send it once$/,
  },
  {
    name: 'tool event without responses',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ type: 'tool' }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.responses: is required: an array of tool results \[\{"toolCallId", "name", "data"\}\]/,
    parameter: 'events[0].responses',
  },
  {
    name: 'tool event with responses not an array',
    method: 'post',
    path: `${S}/events`,
    body: { events: [{ type: 'tool', responses: { toolCallId: 'call_1', name: 'lookup', data: '{}' } }] },
    status: 400,
    code: 'validation_failed',
    mentions: /^events\[0\]\.responses: must be an array of tool results \[\{"toolCallId", "name", "data"\}\]/,
  },
  {
    name: 'recall: limit given twice',
    method: 'get',
    path: '/v1/recall?q=a&limit=5&limit=6',
    status: 400,
    code: 'validation_failed',
    mentions: /^limit: is given 2 times: send it once$/,
  },
  {
    name: 'log: limit given twice',
    method: 'get',
    path: `${S}/events?limit=5&limit=6`,
    status: 400,
    code: 'validation_failed',
    mentions: /^limit: is given 2 times/,
  },
  {
    name: 'sessions: limit given twice',
    method: 'get',
    path: '/v1/sessions?limit=5&limit=6',
    status: 400,
    code: 'validation_failed',
    mentions: /^limit: is given 2 times/,
  },
  {
    name: 'window: unknown estimator (no repeated name)',
    method: 'get',
    path: `${S}/window?estimator=gpt2`,
    status: 400,
    code: 'validation_failed',
    mentions: /^estimator: must be cl100k_base, o200k_base or chars$/,
  },
  {
    name: 'compact: empty any-of trigger list',
    method: 'post',
    path: `${S}/compactions`,
    body: compact({ type: 'sliding-window', maxEvents: 3 }, { trigger: { type: 'any-of', triggers: [] } }),
    status: 400,
    code: 'invalid_parameter',
    mentions: /trigger\.triggers: must be a non-empty array: list at least one trigger/,
  },
  // ---- newcomer: a revision or position has one spelling (parseCanonicalInteger): "03" was read as 3
  ...['03', '00', '+3', ' 3', '3 ', '3e0', '3.0'].map((text): BadRequest => ({
    name: `expectedRevision ${JSON.stringify(text)}`,
    method: 'post',
    path: `${S}/events`,
    body: { events: [user('x1')], expectedRevision: text },
    status: 400,
    code: 'validation_failed',
    parameter: 'expectedRevision',
    mentions: /^expectedRevision: must be "any" .*without leading zeros, sign, spaces, fraction or exponent/,
  })),
  {
    name: 'messages: expectedRevision "03"',
    method: 'post',
    path: `${S}/messages`,
    body: { messages: [{ role: 'user', content: 'hi' }], expectedRevision: '03' },
    status: 400,
    code: 'validation_failed',
    parameter: 'expectedRevision',
    mentions: /^expectedRevision: .*without leading zeros/,
  },
  ...[`${S}/events`, `${S}/messages`].map((path): BadRequest => ({
    name: `${path.endsWith('messages') ? 'messages' : 'events'}: expectedRevision null says what to send instead`,
    method: 'post',
    path,
    body: path.endsWith('messages')
      ? { messages: [{ role: 'user', content: 'hi' }], expectedRevision: null }
      : { events: [user('x1')], expectedRevision: null },
    status: 400,
    code: 'validation_failed',
    parameter: 'expectedRevision',
    mentions: /^expectedRevision: is null: leave it out \(or send "any"\) for no check, or send the revision .*"no_stream".*"stream_exists"/,
  })),
  ...[
    ['window', `${S}/window?atRevision=03`, 'atRevision'],
    ['window', `${S}/window?atRevision=%2B1`, 'atRevision'],
    ['window', `${S}/window?minPosition=%201`, 'minPosition'],
    ['window', `${S}/window?minPosition=1e0`, 'minPosition'],
    ['log', `${S}/events?fromRevision=00`, 'fromRevision'],
    ['log', `${S}/events?limit=05`, 'limit'],
    ['log', `${S}/events?minPosition=1.0`, 'minPosition'],
    ['session', `${S}?minPosition=01`, 'minPosition'],
    ['policy', `${S}/policy?minPosition=00`, 'minPosition'],
    ['compaction history', `${S}/compactions?minPosition=%2B0`, 'minPosition'],
    ['compaction history', `${S}/compactions?limit=010`, 'limit'],
    ['sessions', '/v1/sessions?limit=01', 'limit'],
    ['sessions', '/v1/sessions?minPosition=0412', 'minPosition'],
    ['sessions', '/v1/sessions?minPosition=abc', 'minPosition'],
    ['recall', '/v1/recall?q=hello&minPosition=01', 'minPosition'],
    ['recall', '/v1/recall?q=hello&limit=010', 'limit'],
    // Newcomer, stop 23: words and fractions on the audit routes answered 500 (BigInt of the text).
    ['session', `${S}?minPosition=abc`, 'minPosition'],
    ['policy', `${S}/policy?minPosition=1.5`, 'minPosition'],
    ['compaction history', `${S}/compactions?minPosition=undefined`, 'minPosition'],
    ['compaction', `${S}/compactions/c-1?minPosition=abc`, 'minPosition'],
    ['compaction diff', `${S}/compactions/c-1/diff?minPosition=abc`, 'minPosition'],
  ].map(([route, path, parameter]): BadRequest => ({
    name: `${route}: ${decodeURIComponent(path.slice(path.indexOf('?') + 1))} (not canonical)`,
    method: 'get',
    path,
    status: 400,
    code: 'validation_failed',
    parameter,
    mentions: new RegExp(
      `^${parameter}: must be an integer from \\d+ to \\d+, in plain decimal digits, without leading zeros, sign, spaces, fraction or exponent`,
    ),
  })),
  // Newcomer ncsec: a query parameter named after a member every object inherits was answered
  // 200 with `{"code":{}}` (or no code) on the routes whose validation names codes by parameter.
  ...[
    ['recall', '/v1/recall?q=hello&'],
    ['sessions', '/v1/sessions?'],
    ['compaction history', `${S}/compactions?`],
    ['window', `${S}/window?`],
    ['log', `${S}/events?`],
    ['compaction diff', `${S}/compactions/c-1/diff?`],
  ].flatMap(([route, prefix]) =>
    ['__proto__', 'constructor', 'toString', 'hasOwnProperty'].map((name): BadRequest => ({
      name: `${route}: a query parameter named ${name}`,
      method: 'get',
      path: `${prefix}${name}=1`,
      status: 400,
      code: 'validation_failed',
      mentions: new RegExp(`unknown query parameter "${name}": remove it`),
    })),
  ),
  {
    name: 'compaction history: a cursor whose key is not canonical',
    method: 'get',
    path: `${S}/compactions?cursor=${Buffer.from(JSON.stringify({ v: 1, l: 'compactions', k: '03' })).toString('base64url')}`,
    status: 400,
    code: 'invalid_query',
    mentions: /^cursor: is not a cursor/,
  },
];

describe('malformed requests', () => {
  const harness = useService({
    env: { MAX_TEXT_LENGTH: String(MAX_TEXT), MAX_EVENTS_PER_REQUEST: String(MAX_EVENTS), MAX_BODY_BYTES: String(MAX_BODY), MAX_WAIT_MS: '0' },
  });

  beforeAll(async () => {
    await harness
      .http()
      .post(`${S}/events`)
      .send({
        events: [
          user('u1', 'hello'),
          { id: 'c1', type: 'assistant', text: null, toolCalls: [{ id: 'call_1', name: 'lookup', arguments: '{}' }] },
          { id: 't1', type: 'tool', responses: [{ toolCallId: 'call_1', name: 'lookup', data: '{"ok":true}' }] },
          { id: 'a1', type: 'assistant', text: 'done' },
        ],
        userId: 'alice',
      })
      .expect(201);
  });

  it('has at least 40 cases covering every endpoint', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    const routes = new Set(
      CASES.map(
        (c) =>
          `${c.method} ${c.path
            .replace(/\?.*$/, '')
            .replace(/^\/v1\/sessions\/[^/]+/, '/v1/sessions/:id')
            .replace(/compactions\/[^/]+$/, 'compactions/:id')}`,
      ),
    );
    for (const route of [
      'post /v1/sessions/:id/events',
      'post /v1/sessions/:id/messages',
      'post /v1/sessions/:id/compactions',
      'put /v1/sessions/:id/policy',
      'get /v1/sessions/:id/window',
      'get /v1/sessions/:id/events',
      'get /v1/sessions/:id/compactions',
      'get /v1/sessions/:id/compactions/:id',
      'get /v1/recall',
      'delete /v1/sessions/:id',
    ]) {
      expect(routes).toContain(route);
    }
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s → documented 4xx, nothing written', async (_name, c) => {
    const before = await harness.service.store.headPosition();
    let req = harness.http()[c.method](c.path);
    // Raw bodies are sent byte for byte (superagent would JSON-encode a Buffer).
    if (c.raw !== undefined)
      req = req
        .set('content-type', 'application/json')
        .set(c.headers ?? {})
        .serialize((b: unknown) => b as string)
        .send(c.raw as string);
    else if (c.body !== undefined) req = req.set(c.headers ?? {}).send(c.body as object);
    const res = await req;
    expect({ status: res.status, code: res.body.code }).toEqual({ status: c.status, code: c.code });
    expect(typeof res.body.message).toBe('string');
    expect(res.body.message).toMatch(c.mentions);
    if (c.parameter !== undefined) expect({ parameter: res.body.parameter, field: res.body.field }).toEqual({ parameter: c.parameter, field: undefined });
    // The details the document makes required for the code (a typed client reads them once it has checked the code).
    const declared: readonly string[] = (API_ERROR_CODES[c.code as ApiErrorCode] as ErrorCodeInfo).details ?? [];
    expect(declared.filter((detail) => typeof res.body[detail] !== 'string')).toEqual([]);
    expect(await harness.service.store.headPosition()).toBe(before);
  });

  // Every write route of the document (any method but GET), also one added later: a query parameter is refused before anything is written.
  it('refuses a query parameter on every write route of the OpenAPI document', async () => {
    const document = (await harness.http().get('/docs/openapi.json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const writes = Object.entries(document.paths).flatMap(([route, methods]) =>
      Object.keys(methods)
        .filter((method) => method !== 'get')
        .map((method) => ({ method: method as 'post' | 'put' | 'delete', path: route.replace('{sessionId}', 'known').replace(/\{[^}]+\}/g, 'x') })),
    );
    expect(writes.map((w) => `${w.method} ${w.path}`).sort()).toEqual(
      [
        'delete /v1/sessions/known',
        'post /v1/sessions/known/compactions',
        'post /v1/sessions/known/events',
        'post /v1/sessions/known/messages',
        'put /v1/sessions/known/policy',
      ].sort(),
    );
    const before = await harness.service.store.headPosition();
    for (const { method, path } of writes) {
      // DELETE takes no body (a body is refused before the query is looked at): sent without one.
      const sent = harness.http()[method](`${path}?probe=1`);
      const res = await (method === 'delete' ? sent : sent.send({}));
      expect([method, path, res.status, res.body.code, res.body.message]).toEqual([
        method,
        path,
        400,
        'validation_failed',
        'probe: unknown query parameter "probe": remove it',
      ]);
    }
    expect(await harness.service.store.headPosition()).toBe(before);
  });

  // The newcomer's cases: 501 emoji (1002 UTF-16 code units) were refused as "more than 1000 characters".
  // One rule for every route: each query parameter of each route of the document, and the write routes' (which take none).
  it('refuses a query parameter that is not valid percent-encoded UTF-8 on every route of the OpenAPI document, naming it', async () => {
    type Operation = { parameters?: Array<{ in: string; name: string }> };
    const document = (await harness.http().get('/docs/openapi.json').expect(200)).body as { paths: Record<string, Record<string, Operation>> };
    const probes = Object.entries(document.paths).flatMap(([route, methods]) =>
      Object.entries(methods).flatMap(([method, operation]) => {
        const path = route.replace('{sessionId}', 'known').replace(/\{[^}]+\}/g, 'x');
        const names = (operation.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
        return (names.length > 0 ? names : ['probe']).map((name) => ({ method: method as 'get' | 'post' | 'put' | 'delete', path, name }));
      }),
    );
    expect(probes.length).toBeGreaterThan(20);
    const before = await harness.service.store.headPosition();
    for (const { method, path, name } of probes) {
      const res = await harness.http()[method](`${path}?${name}=a%FFb`).send({});
      expect([method, path, res.status, res.body.code, res.body.parameter]).toEqual([method, path, 400, 'invalid_query_encoding', name]);
    }
    expect(await harness.service.store.headPosition()).toBe(before);
  });

  it('counts length limits in Unicode code points: an emoji is one character', async () => {
    const emoji = (n: number) => '😀'.repeat(n);
    await harness
      .http()
      .get(`/v1/recall?q=${encodeURIComponent(emoji(501))}`)
      .expect(200);
    await harness
      .http()
      .post('/v1/sessions/emoji-lengths/events')
      .send({ events: [user(emoji(256), emoji(MAX_TEXT))] })
      .expect(201);
    await harness
      .http()
      .post('/v1/sessions/emoji-lengths/messages')
      .send({ messages: [{ id: `${emoji(255)}m`, role: 'user', content: 'hi' }] })
      .expect(201);
  });
});
