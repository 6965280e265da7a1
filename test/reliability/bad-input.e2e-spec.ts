/**
 * Bad input (issue 7 item 3): a table of malformed requests across every endpoint. Each gets the
 * documented 4xx with a stable `code` and a `message` that names what to fix, and the store's
 * global head position is unchanged afterwards (a rejected request writes nothing).
 */
import * as fs from 'node:fs';
import { startService, type Harness } from '../support/service-harness';

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

const CASES: BadRequest[] = [
  // ---- POST /events: JSON and shape
  { name: 'broken JSON', method: 'post', path: `${S}/events`, raw: '{"events": [', status: 400, code: 'malformed_json', mentions: /JSON/ },
  { name: 'body is an array', method: 'post', path: `${S}/events`, body: [user('x1')], status: 400, code: 'validation_failed', mentions: /\(body\)|object/ },
  { name: 'events missing', method: 'post', path: `${S}/events`, body: {}, status: 400, code: 'validation_failed', mentions: /^events/ },
  { name: 'events not an array', method: 'post', path: `${S}/events`, body: { events: 'hello' }, status: 400, code: 'validation_failed', mentions: /^events/ },
  { name: 'events empty', method: 'post', path: `${S}/events`, body: { events: [] }, status: 400, code: 'validation_failed', mentions: /events.*at least one/ },
  { name: 'unknown event type', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'robot', text: 'beep' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.type.*user, assistant, tool, system, summary/ },
  { name: 'event type missing', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', text: 'hi' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.type/ },
  { name: 'user text missing', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'user' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.text/ },
  { name: 'user text is a number', method: 'post', path: `${S}/events`, body: { events: [user('x1', 42)] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.text/ },
  { name: 'lone high surrogate in text', method: 'post', path: `${S}/events`, raw: '{"events":[{"id":"x1","type":"user","text":"broken \\ud800 text"}]}', status: 400, code: 'validation_failed', mentions: /events\[0\]\.text.*surrogate/ },
  { name: 'lone low surrogate in a tool argument', method: 'post', path: `${S}/events`, raw: '{"events":[{"id":"x1","type":"assistant","text":null,"toolCalls":[{"id":"k1","name":"f","arguments":"\\udc00"}]}]}', status: 400, code: 'validation_failed', mentions: /events\[0\]\.toolCalls\[0\]\.arguments.*surrogate/ },
  { name: 'empty user text', method: 'post', path: `${S}/events`, body: { events: [user('x1', '')] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.text.*empty/ },
  { name: 'empty assistant text and no tool calls', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'assistant', text: '' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\].*text, at least one tool call/ },
  { name: 'empty summary text', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'summary', shadowPrompt: 'recap', text: '' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.text.*empty/ },
  { name: 'oversized text', method: 'post', path: `${S}/events`, body: { events: [user('x1', 'x'.repeat(MAX_TEXT + 1))] }, status: 400, code: 'validation_failed', mentions: new RegExp(`events\\[0\\]\\.text.*longer than ${MAX_TEXT}`) },
  { name: 'too many events in one request', method: 'post', path: `${S}/events`, body: { events: Array.from({ length: MAX_EVENTS + 1 }, (_, i) => user(`m${i}`)) }, status: 400, code: 'validation_failed', mentions: new RegExp(`at most ${MAX_EVENTS} events`) },
  { name: 'body over MAX_BODY_BYTES', method: 'post', path: `${S}/events`, body: { events: [user('x1', 'y'.repeat(MAX_BODY))] }, status: 413, code: 'payload_too_large', mentions: /MAX_BODY_BYTES|split/ },
  { name: 'unknown field on an event', method: 'post', path: `${S}/events`, body: { events: [{ ...user('x1'), colour: 'red' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.colour.*unknown field/ },
  { name: 'unknown top-level field', method: 'post', path: `${S}/events`, body: { events: [user('x1')], sessionId: 'other' }, status: 400, code: 'validation_failed', mentions: /sessionId.*unknown field/ },
  { name: 'assistant without text or tool calls', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'assistant' }] }, status: 400, code: 'validation_failed', mentions: /text, at least one tool call/ },
  { name: 'tool event with no responses', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'tool', responses: [] }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.responses/ },
  { name: 'tool call with a non-string arguments', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'assistant', toolCalls: [{ id: 'k1', name: 'f', arguments: { a: 1 } }] }] }, status: 400, code: 'validation_failed', mentions: /toolCalls\[0\]\.arguments/ },
  { name: 'tool response without its call', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'tool', responses: [{ toolCallId: 'nope', name: 'f', data: '{}' }] }] }, status: 422, code: 'unknown_tool_call', mentions: /events\[0\]\.responses\[0\]\.toolCallId.*append the assistant message/ },
  { name: 'same id with other content', method: 'post', path: `${S}/events`, body: { events: [user('u1', 'something else')] }, status: 409, code: 'duplicate_event_id', mentions: /"u1".*new id/ },
  { name: 'same id twice in one request', method: 'post', path: `${S}/events`, body: { events: [user('x1'), user('x1', 'again')] }, status: 400, code: 'invalid_request', mentions: /events\[1\]\.id.*twice/ },
  { name: 'id with a control character', method: 'post', path: `${S}/events`, body: { events: [user('x\n1')] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.id/ },
  { name: 'createdAt not a date', method: 'post', path: `${S}/events`, body: { events: [{ ...user('x1'), createdAt: 'yesterday' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.createdAt.*ISO-8601/ },
  { name: 'expectedRevision malformed', method: 'post', path: `${S}/events`, body: { events: [user('x1')], expectedRevision: 'latest' }, status: 400, code: 'validation_failed', mentions: /expectedRevision/ },
  { name: 'expectedRevision negative', method: 'post', path: `${S}/events`, body: { events: [user('x1')], expectedRevision: -1 }, status: 400, code: 'validation_failed', mentions: /expectedRevision/ },
  { name: 'expectedRevision fractional', method: 'post', path: `${S}/events`, body: { events: [user('x1')], expectedRevision: 1.5 }, status: 400, code: 'validation_failed', mentions: /expectedRevision/ },
  { name: 'expectedRevision stale', method: 'post', path: `${S}/events`, body: { events: [user('x1')], expectedRevision: 0 }, status: 409, code: 'wrong_expected_revision', mentions: /expected revision 0.*retry with expectedRevision 3/ },
  { name: 'expectedRevision no_stream on an existing session', method: 'post', path: `${S}/events`, body: { events: [user('x1')], expectedRevision: 'no_stream' }, status: 409, code: 'wrong_expected_revision', mentions: /expectedRevision/ },
  { name: 'expectedRevision stream_exists on an unknown session', method: 'post', path: '/v1/sessions/never-seen/events', body: { events: [user('x1')], expectedRevision: 'stream_exists' }, status: 409, code: 'wrong_expected_revision', mentions: /expectedRevision/ },
  { name: 'userId empty', method: 'post', path: `${S}/events`, body: { events: [user('x1')], userId: '' }, status: 400, code: 'validation_failed', mentions: /userId/ },
  { name: 'session id with a space', method: 'post', path: '/v1/sessions/bad%20id/events', body: { events: [user('x1')] }, status: 400, code: 'invalid_session_id', mentions: /sessionId/ },
  { name: 'session id too long', method: 'post', path: `/v1/sessions/${'s'.repeat(129)}/events`, body: { events: [user('x1')] }, status: 400, code: 'invalid_session_id', mentions: /sessionId.*128/ },

  // ---- POST /messages
  { name: 'messages: broken JSON', method: 'post', path: `${S}/messages`, raw: '{"messages": [{"role": "user", "content": "hi"}', status: 400, code: 'malformed_json', mentions: /JSON/ },
  { name: 'messages: not an array', method: 'post', path: `${S}/messages`, body: { messages: { role: 'user', content: 'hi' } }, status: 400, code: 'validation_failed', mentions: /^messages/ },
  { name: 'messages: unknown role', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'robot', content: 'beep' }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.role/ },
  { name: 'messages: content of the wrong type', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'user', content: 7 }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.content/ },
  { name: 'messages: tool message without tool_call_id', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'tool', content: '{}' }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.tool_call_id/ },
  { name: 'messages: tool message answering no call', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'tool', tool_call_id: 'ghost', content: '{}' }] }, status: 422, code: 'unknown_tool_call', mentions: /messages\[0\].*ghost/ },
  { name: 'messages: too many', method: 'post', path: `${S}/messages`, body: { messages: Array.from({ length: MAX_EVENTS + 1 }, () => ({ role: 'user', content: 'hi' })) }, status: 400, code: 'validation_failed', mentions: new RegExp(`at most ${MAX_EVENTS} messages`) },
  { name: 'messages: lone surrogate', method: 'post', path: `${S}/messages`, raw: '{"messages":[{"role":"user","content":"a\\ud83d"}]}', status: 400, code: 'invalid_message', mentions: /messages\[0\].*surrogate/ },

  // ---- POST /compactions
  { name: 'compact: broken JSON', method: 'post', path: `${S}/compactions`, raw: '{"strategy": {"type": "sliding-window",', status: 400, code: 'malformed_json', mentions: /JSON/ },
  { name: 'compact: strategy missing', method: 'post', path: `${S}/compactions`, body: {}, status: 400, code: 'validation_failed', mentions: /strategy/ },
  { name: 'compact: unknown strategy type', method: 'post', path: `${S}/compactions`, body: compact({ type: 'delete-everything' }), status: 400, code: 'invalid_parameter', mentions: /strategy\.type/ },
  { name: 'compact: zero maxEvents', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window', maxEvents: 0 }), status: 400, code: 'invalid_parameter', mentions: /strategy\.maxEvents/ },
  { name: 'compact: negative maxTurns', method: 'post', path: `${S}/compactions`, body: compact({ type: 'turn-window', maxTurns: -3 }), status: 400, code: 'invalid_parameter', mentions: /strategy\.maxTurns/ },
  { name: 'compact: fractional maxTokens', method: 'post', path: `${S}/compactions`, body: compact({ type: 'token-count', maxTokens: 10.5 }), status: 400, code: 'invalid_parameter', mentions: /strategy\.maxTokens/ },
  { name: 'compact: huge maxEvents', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window', maxEvents: 1e300 }), status: 400, code: 'invalid_parameter', mentions: /strategy\.maxEvents/ },
  { name: 'compact: maxEvents as a string', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window', maxEvents: '10' }), status: 400, code: 'invalid_parameter', mentions: /strategy\.maxEvents/ },
  { name: 'compact: overlapSize not below maxEventsToKeep', method: 'post', path: `${S}/compactions`, body: compact({ type: 'recursive-summarization', maxEventsToKeep: 3, overlapSize: 3 }), status: 400, code: 'invalid_parameter', mentions: /strategy\.overlapSize/ },
  { name: 'compact: unknown strategy parameter', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window', maxEvent: 3 }), status: 400, code: 'invalid_parameter', mentions: /strategy\.maxEvent/ },
  { name: 'compact: bad trigger', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window' }, { trigger: { type: 'token-count', threshold: -1 } }), status: 400, code: 'invalid_parameter', mentions: /trigger\.threshold/ },
  { name: 'compact: unknown estimator', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window' }, { estimator: 'words' }), status: 400, code: 'validation_failed', mentions: /estimator/ },
  { name: 'compact: dryRun not a boolean', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window' }, { dryRun: 'yes' }), status: 400, code: 'validation_failed', mentions: /dryRun/ },
  { name: 'compact: unknown field', method: 'post', path: `${S}/compactions`, body: compact({ type: 'sliding-window' }, { force: true }), status: 400, code: 'validation_failed', mentions: /force.*unknown field/ },
  { name: 'compact: unknown session', method: 'post', path: '/v1/sessions/never-seen/compactions', body: compact({ type: 'sliding-window', maxEvents: 2 }), status: 404, code: 'session_not_found', mentions: /"never-seen".*append events/ },

  // ---- PUT /policy
  { name: 'policy: broken JSON', method: 'put', path: `${S}/policy`, raw: '{"strategy": ', status: 400, code: 'malformed_json', mentions: /JSON/ },
  { name: 'policy: strategy with zero keepTurns', method: 'put', path: `${S}/policy`, body: { strategy: { type: 'rolling-summary', keepTurns: 0 } }, status: 400, code: 'invalid_parameter', mentions: /strategy\.keepTurns/ },
  { name: 'policy: trigger of unknown type', method: 'put', path: `${S}/policy`, body: { strategy: { type: 'sliding-window' }, trigger: { type: 'sometimes' } }, status: 400, code: 'invalid_parameter', mentions: /trigger\.type/ },
  { name: 'policy: unknown field', method: 'put', path: `${S}/policy`, body: { strategy: null, when: 'always' }, status: 400, code: 'validation_failed', mentions: /when.*unknown field/ },

  // ---- GET /window
  { name: 'window: negative atRevision', method: 'get', path: `${S}/window?atRevision=-1`, status: 400, code: 'validation_failed', mentions: /atRevision/ },
  { name: 'window: fractional atRevision', method: 'get', path: `${S}/window?atRevision=1.5`, status: 400, code: 'validation_failed', mentions: /atRevision/ },
  { name: 'window: atRevision not a number', method: 'get', path: `${S}/window?atRevision=latest`, status: 400, code: 'validation_failed', mentions: /atRevision/ },
  { name: 'window: huge atRevision', method: 'get', path: `${S}/window?atRevision=99999999999999999999999`, status: 400, code: 'validation_failed', mentions: /atRevision/ },
  { name: 'window: atRevision repeated', method: 'get', path: `${S}/window?atRevision=1&atRevision=2`, status: 400, code: 'validation_failed', mentions: /atRevision/ },
  { name: 'window: malformed minPosition', method: 'get', path: `${S}/window?minPosition=0x10`, status: 400, code: 'validation_failed', mentions: /minPosition/ },
  { name: 'window: unknown format', method: 'get', path: `${S}/window?format=xml`, status: 400, code: 'validation_failed', mentions: /format.*events or openai/ },
  { name: 'window: unknown query parameter', method: 'get', path: `${S}/window?revision=1`, status: 400, code: 'validation_failed', mentions: /revision.*unknown field/ },
  { name: 'window: unknown session', method: 'get', path: '/v1/sessions/never-seen/window', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },
  { name: 'window: unknown session at a revision', method: 'get', path: '/v1/sessions/never-seen/window?atRevision=0', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },

  // ---- GET /events
  { name: 'log: limit zero', method: 'get', path: `${S}/events?limit=0`, status: 400, code: 'validation_failed', mentions: /limit.*1 to 1000/ },
  { name: 'log: negative limit', method: 'get', path: `${S}/events?limit=-5`, status: 400, code: 'validation_failed', mentions: /limit/ },
  { name: 'log: fractional limit', method: 'get', path: `${S}/events?limit=2.5`, status: 400, code: 'validation_failed', mentions: /limit/ },
  { name: 'log: huge limit', method: 'get', path: `${S}/events?limit=100000`, status: 400, code: 'validation_failed', mentions: /limit.*1 to 1000/ },
  { name: 'log: malformed fromRevision', method: 'get', path: `${S}/events?fromRevision=abc`, status: 400, code: 'validation_failed', mentions: /fromRevision/ },
  { name: 'log: unknown query parameter', method: 'get', path: `${S}/events?offset=3`, status: 400, code: 'validation_failed', mentions: /offset.*unknown field/ },
  { name: 'log: unknown session', method: 'get', path: '/v1/sessions/never-seen/events', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },

  // ---- GET /compactions, /compactions/:id
  { name: 'compactions: unknown query parameter', method: 'get', path: `${S}/compactions?limit=5`, status: 400, code: 'validation_failed', mentions: /limit.*unknown field/ },
  { name: 'compactions: unknown session', method: 'get', path: '/v1/sessions/never-seen/compactions', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },
  { name: 'compaction: unknown id', method: 'get', path: `${S}/compactions/00000000-0000-0000-0000-000000000000`, status: 404, code: 'compaction_not_found', mentions: /00000000-0000-0000-0000-000000000000/ },
  { name: 'compaction: unknown session', method: 'get', path: '/v1/sessions/never-seen/compactions/abc', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },

  // ---- GET /recall
  { name: 'recall: q missing', method: 'get', path: '/v1/recall', status: 400, code: 'validation_failed', mentions: /^q/ },
  { name: 'recall: q empty', method: 'get', path: '/v1/recall?q=', status: 400, code: 'validation_failed', mentions: /^q.*empty/ },
  { name: 'recall: limit zero', method: 'get', path: '/v1/recall?q=hello&limit=0', status: 400, code: 'validation_failed', mentions: /limit.*1 to 100/ },
  { name: 'recall: limit too large', method: 'get', path: '/v1/recall?q=hello&limit=101', status: 400, code: 'validation_failed', mentions: /limit.*1 to 100/ },
  { name: 'recall: fractional limit', method: 'get', path: '/v1/recall?q=hello&limit=1.5', status: 400, code: 'validation_failed', mentions: /limit/ },
  { name: 'recall: malformed cursor', method: 'get', path: '/v1/recall?q=hello&cursor=not-a-cursor', status: 400, code: 'invalid_query', mentions: /cursor/ },
  { name: 'recall: archived not a boolean', method: 'get', path: '/v1/recall?q=hello&archived=maybe', status: 400, code: 'validation_failed', mentions: /archived.*true or false/ },
  { name: 'recall: from not a date', method: 'get', path: '/v1/recall?q=hello&from=last-week', status: 400, code: 'validation_failed', mentions: /from.*ISO-8601/ },
  { name: 'recall: unknown type', method: 'get', path: '/v1/recall?q=hello&type=robot', status: 400, code: 'validation_failed', mentions: /type/ },
  { name: 'recall: unknown query parameter', method: 'get', path: '/v1/recall?q=hello&tenant=other', status: 400, code: 'validation_failed', mentions: /tenant.*unknown field/ },
  { name: 'recall: malformed session id filter', method: 'get', path: '/v1/recall?q=hello&sessionId=a%20b', status: 400, code: 'validation_failed', mentions: /sessionId/ },

  // ---- DELETE and unknown routes
  { name: 'erase: unknown session', method: 'delete', path: '/v1/sessions/never-seen', status: 404, code: 'session_not_found', mentions: /"never-seen"/ },
  { name: 'erase: malformed session id', method: 'delete', path: '/v1/sessions/bad%20id', status: 400, code: 'invalid_session_id', mentions: /sessionId/ },
  { name: 'erase: unknown query parameter', method: 'delete', path: `${S}?force=true`, status: 400, code: 'validation_failed', mentions: /force.*unknown field/ },
  // ---- found by a newcomer trying to break the API
  { name: 'lone surrogate in an event id', method: 'post', path: `${S}/events`, raw: '{"events":[{"id":"\\ud800","type":"user","text":"hi"}]}', status: 400, code: 'validation_failed', mentions: /events\[0\]\.id.*surrogate/ },
  { name: 'lone surrogate in userId', method: 'post', path: `${S}/events`, raw: '{"events":[{"id":"x1","type":"user","text":"hi"}],"userId":"a\\udc00"}', status: 400, code: 'validation_failed', mentions: /userId.*surrogate/ },
  { name: 'metadata nested 2000 levels', method: 'post', path: `${S}/events`, raw: `{"events":[{"id":"x1","type":"user","text":"hi","metadata":${'{"a":'.repeat(2000)}1${'}'.repeat(2000)}}]}`, status: 400, code: 'validation_failed', mentions: /events\[0\]\.metadata.*deeper/ },
  { name: 'body not matching its Content-Encoding', method: 'post', path: `${S}/events`, raw: JSON.stringify({ events: [user('x1')] }), headers: { 'content-encoding': 'gzip' }, status: 400, code: 'malformed_body', mentions: /Content-Encoding/ },
  { name: 'form-encoded body', method: 'post', path: `${S}/events`, raw: 'events=1', headers: { 'content-type': 'application/x-www-form-urlencoded' }, status: 415, code: 'unsupported_media_type', mentions: /application\/json/ },
  { name: 'text/plain body', method: 'post', path: `${S}/compactions`, raw: '{"strategy":{"type":"sliding-window"}}', headers: { 'content-type': 'text/plain' }, status: 415, code: 'unsupported_media_type', mentions: /Content-Type: application\/json/ },
  { name: 'JSON null body', method: 'post', path: `${S}/events`, raw: 'null', status: 400, code: 'validation_failed', mentions: /body must be a JSON object/ },
  { name: 'compact: strategy missing', method: 'post', path: `${S}/compactions`, body: {}, status: 400, code: 'validation_failed', mentions: /^strategy: is required/ },
  { name: 'tool calls: one id twice in an event', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'assistant', text: null, toolCalls: [{ id: 'k9', name: 'f', arguments: '{}' }, { id: 'k9', name: 'f', arguments: '{}' }] }] }, status: 422, code: 'tool_call_conflict', mentions: /events\[0\]\.toolCalls\[1\]\.id.*twice/ },
  { name: 'tool calls: a second answer to an answered call', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'tool', responses: [{ toolCallId: 'call_1', name: 'lookup', data: 'again' }] }] }, status: 422, code: 'tool_call_conflict', mentions: /responses\[0\]\.toolCallId.*already answered/ },
  { name: 'tool calls: reusing the id of an open call', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'assistant', text: null, toolCalls: [{ id: 'k7', name: 'f', arguments: '{}' }] }, { id: 'x2', type: 'assistant', text: null, toolCalls: [{ id: 'k7', name: 'f', arguments: '{}' }] }] }, status: 422, code: 'tool_call_conflict', mentions: /events\[1\]\.toolCalls\[0\]\.id.*waiting/ },
  { name: 'window: atRevision past the last revision', method: 'get', path: `${S}/window?atRevision=99`, status: 400, code: 'revision_out_of_range', mentions: /atRevision.*last revision is 3/ },
  // ---- found by the second fresh pass
  { name: 'body not matching Content-Encoding br', method: 'post', path: `${S}/events`, raw: JSON.stringify({ events: [user('x1')] }), headers: { 'content-encoding': 'br' }, status: 400, code: 'malformed_body', mentions: /Content-Encoding/ },
  { name: 'body with invalid UTF-8 bytes', method: 'post', path: `${S}/events`, raw: Buffer.concat([Buffer.from('{"events":[{"id":"x1","type":"user","text":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('"}]}')]), status: 400, code: 'malformed_body', mentions: /UTF-8/ },
  { name: 'lone surrogate in a strategy prompt', method: 'post', path: `${S}/compactions`, raw: '{"strategy":{"type":"rolling-summary","shadowPrompt":"p\\ud800"}}', status: 400, code: 'invalid_parameter', mentions: /strategy\.shadowPrompt.*surrogate/ },
  { name: 'path not valid percent-encoded UTF-8', method: 'get', path: '/v1/sessions/%ED%A0%80/window', status: 400, code: 'invalid_path', mentions: /percent-encoded/ },
  { name: 'recall: from after to', method: 'get', path: '/v1/recall?q=hello&from=2025-01-02T00:00:00Z&to=2025-01-01T00:00:00Z', status: 400, code: 'validation_failed', mentions: /from must be earlier than to/ },
  { name: 'messages: empty content', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'user', content: '' }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.content/ },
  // ---- issue 17 item 4: what goes in comes out (nothing accepted that would come out otherwise)
  { name: 'assistant with text null and nothing else', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'assistant', text: null }] }, status: 400, code: 'validation_failed', mentions: /events\[0\].*text, at least one tool call, or a refusal/ },
  { name: 'assistant with an empty tool call list', method: 'post', path: `${S}/events`, body: { events: [{ id: 'x1', type: 'assistant', text: null, toolCalls: [] }] }, status: 400, code: 'validation_failed', mentions: /text, at least one tool call, or a refusal/ },
  { name: 'textParts that do not make the text', method: 'post', path: `${S}/events`, body: { events: [{ ...user('x1', 'hello world'), textParts: ['hello', 'world'] }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.textParts.*concatenate/, parameter: 'events[0].textParts' },
  { name: 'empty name on an event', method: 'post', path: `${S}/events`, body: { events: [{ ...user('x1'), name: '' }] }, status: 400, code: 'validation_failed', mentions: /events\[0\]\.name.*empty/ },
  { name: 'messages: assistant with content null and nothing else', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'assistant', content: null, tool_calls: [] }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.content.*content, tool_calls or a refusal/, parameter: 'messages[0].content' },
  { name: 'messages: assistant with empty content and nothing else', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'assistant', content: '' }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]/, parameter: 'messages[0]' },
  { name: 'messages: a field the service would drop', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'user', content: 'hi', audio: { id: 'a1' } }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.audio.*unknown field/, parameter: 'messages[0].audio' },
  { name: 'messages: a text part with an extra field', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: { type: 'ephemeral' } }] }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.content\[0\]\.cache_control.*unknown field/ },
  { name: 'messages: empty name', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'user', content: 'hi', name: '' }] }, status: 400, code: 'invalid_message', mentions: /messages\[0\]\.name/, parameter: 'messages[0].name' },
  { name: 'messages: a second answer names the tool message field', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'tool', tool_call_id: 'call_1', content: 'again' }] }, status: 422, code: 'tool_call_conflict', mentions: /^messages\[0\]\.tool_call_id: .*already answered/, parameter: 'messages[0].tool_call_id' },
  { name: 'messages: reusing an open call id names tool_calls', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'k8', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'assistant', content: null, tool_calls: [{ id: 'k8', type: 'function', function: { name: 'f', arguments: '{}' } }] }] }, status: 422, code: 'tool_call_conflict', mentions: /^messages\[1\]\.tool_calls\[0\]\.id: .*waiting/, parameter: 'messages[1].tool_calls[0].id' },
  { name: 'messages: answer to an unknown call uses parameter', method: 'post', path: `${S}/messages`, body: { messages: [{ role: 'tool', tool_call_id: 'ghost', content: 'x' }] }, status: 422, code: 'unknown_tool_call', mentions: /messages\[0\]\.tool_call_id/, parameter: 'messages[0].tool_call_id' },
  { name: 'unknown route', method: 'post', path: `${S}/rewind`, body: {}, status: 404, code: 'route_not_found', mentions: /docs/ },
];

describe('malformed requests', () => {
  let harness: Harness;

  beforeAll(async () => {
    harness = await startService({
      env: { MAX_TEXT_LENGTH: String(MAX_TEXT), MAX_EVENTS_PER_REQUEST: String(MAX_EVENTS), MAX_BODY_BYTES: String(MAX_BODY), MAX_WAIT_MS: '0' },
    });
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
      })
      .expect(201);
  });
  afterAll(async () => {
    await harness.stop();
    fs.rmSync(harness.dataDir, { recursive: true, force: true });
  });

  it('has at least 40 cases covering every endpoint', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    const routes = new Set(CASES.map((c) => `${c.method} ${c.path.replace(/\?.*$/, '').replace(/^\/v1\/sessions\/[^/]+/, '/v1/sessions/:id').replace(/compactions\/[^/]+$/, 'compactions/:id')}`));
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
    if (c.raw !== undefined) req = req.set('content-type', 'application/json').set(c.headers ?? {}).serialize((b: unknown) => b as string).send(c.raw as string);
    else if (c.body !== undefined) req = req.set(c.headers ?? {}).send(c.body as object);
    const res = await req;
    expect({ status: res.status, code: res.body.code }).toEqual({ status: c.status, code: c.code });
    expect(typeof res.body.message).toBe('string');
    expect(res.body.message).toMatch(c.mentions);
    if (c.parameter !== undefined) expect({ parameter: res.body.parameter, field: res.body.field }).toEqual({ parameter: c.parameter, field: undefined });
    expect(await harness.service.store.headPosition()).toBe(before);
  });
});
