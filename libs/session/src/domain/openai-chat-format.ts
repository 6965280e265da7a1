/**
 * Pure conversions between OpenAI chat-completions messages and native session events
 * (DESIGN §3.1, §5), plus a provider-eye validation of a rendered window.
 *
 * - {@link openAiMessagesToEvents}: what `POST /v1/sessions/:id/messages` appends.
 * - {@link eventsToOpenAiMessages}: the window rendered with `format=openai`
 *   ({@link renderOpenAiWindow}: the same, saying what of each event it carries).
 * - {@link validateOpenAiWindow}: the problems a provider would reject a window for; used by
 *   the replay tool and the tests.
 *
 * No I/O, no clock, no randomness. Message text never appears in an error message: errors name
 * the message index and field (`messages[3].tool_call_id`) and, for unknown calls, the call id.
 */
import {
  blankTextRefusal,
  isNotice,
  NO_TEXT_CONTENT,
  NO_TOOL_RESPONSE,
  pairToolCalls,
  placeholderAnsweredCalls,
  quoteInput,
  showsNothing,
  unknownFieldHint,
  unknownKeysMessage,
  type AssistantEvent,
  type SessionEvent,
  type ToolCall,
  type ToolResponse,
} from '@lib/compaction';
import { duplicateIdInRequest, InvalidRequestError } from '../errors';
import { clientIdProblem } from './client-id-rule';

/** A tool call in the provider's shape. `arguments` is the raw JSON argument string. */
export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A text content part. */
export interface OpenAiTextPart {
  type: 'text';
  text: string;
}

/** Message content as rendered: a string, or text parts when it was sent in parts. */
export type OpenAiContent = string | OpenAiTextPart[];

/**
 * A system message as rendered: the pinned instructions (first, at most one), or a notice in its
 * place (`name: "notice"`, DESIGN §3.1). `name` when it was sent with one.
 */
export interface OpenAiSystemMessage {
  role: 'system';
  content: OpenAiContent;
  name?: string;
}

/** The `name` that marks a `system` / `developer` message as a notice (DESIGN §3.1). */
export const NOTICE_NAME = 'notice';

/**
 * One rule for both append routes: a system event named "notice" is a notice (DESIGN §3.1), as
 * `/messages` reads a `system`/`developer` message named "notice", and the `openai` window renders
 * every notice with that name; returned as the notice it is (`notice: true`, without the name,
 * as a notice is stored), any other event unchanged. `at`: the event's place in the request
 * (e.g. `events[2]`), for the error.
 * @throws InvalidRequestError (400 `validation_failed`, at `<at>.notice`) when it says `notice: false`.
 */
export function noticeByName<E extends SessionEvent>(event: E, at: string): E {
  if (event.type !== 'system' || event.name !== NOTICE_NAME) return event;
  if (event.notice === false)
    throw new InvalidRequestError(
      `${at}.notice`,
      `${at}.notice: false, but the name "notice" marks a notice (DESIGN §3.1, as a message named "notice" on /messages): leave notice out (or true), or use another name`,
      'validation_failed',
    );
  const { name: _name, ...unnamed } = event;
  return { ...unnamed, notice: true } as E;
}

/** A user message as rendered (also the shadow prompt of a summary). */
export interface OpenAiUserMessage {
  role: 'user';
  content: OpenAiContent;
  name?: string;
}

/**
 * An assistant message as rendered: `content` is null only when `tool_calls` or `refusal` is
 * present.
 */
export interface OpenAiAssistantMessage {
  role: 'assistant';
  content: OpenAiContent | null;
  tool_calls?: OpenAiToolCall[];
  refusal?: string;
  name?: string;
}

/** A tool result as rendered: one message per response, naming the call it answers. */
export interface OpenAiToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: OpenAiContent;
  name?: string;
}

/** One rendered chat message (what {@link eventsToOpenAiMessages} returns). */
export type OpenAiChatMessage = OpenAiSystemMessage | OpenAiUserMessage | OpenAiAssistantMessage | OpenAiToolMessage;

/** How {@link openAiMessagesToEvents} names tool calls and assigns ids. */
export interface OpenAiParseContext {
  /**
   * Call id → tool name for the calls already in the session (the session's known calls), used
   * when a tool message answers a call that is not earlier in this batch. Calls earlier in the
   * batch take precedence; when an id is reused, the latest call with it wins. The service leaves
   * it out: its append handler names the responses left `''` in the state it decides on
   * (`nameResponsesFromCalls`), which a map read before the append could not match.
   */
  knownCallNames?: ReadonlyMap<string, string>;
  /**
   * True when the caller reads each message's `createdAt` itself (the service's append routes,
   * which give it to the event as a native event's `createdAt`): the field is then allowed on
   * every role and left to the caller; without it a `createdAt` with a value is refused as an
   * unknown field (it would be lost).
   */
  readsCreatedAt?: boolean;
  /**
   * Id for a message that has no `id` field, given its index in the batch. Wins over
   * {@link idPrefix}. The result must be a non-empty string.
   */
  assignId?: (index: number) => string;
  /**
   * Prefix for ids of messages without `id`: `${idPrefix}${index}`. Default `msg-`. A caller that
   * appends several batches to one session must make ids unique across them (give a per-batch
   * prefix or {@link assignId}).
   */
  idPrefix?: string;
}

/** Roles accepted on input. `developer` is OpenAI's newer name for `system` and is stored as a system event. */
export const OPENAI_INPUT_ROLES = ['system', 'developer', 'user', 'assistant', 'tool'] as const;

/** Code of the 400 errors thrown by {@link openAiMessagesToEvents}. */
export const INVALID_MESSAGE_CODE = 'invalid_message';

type OpenAiInputRole = (typeof OPENAI_INPUT_ROLES)[number];

/** The fields each input role may carry (anything else non-null is rejected). */
const MESSAGE_FIELDS: Record<OpenAiInputRole, readonly string[]> = {
  system: ['role', 'content', 'name', 'id'],
  developer: ['role', 'content', 'name', 'id'],
  user: ['role', 'content', 'name', 'id'],
  assistant: ['role', 'content', 'name', 'id', 'tool_calls', 'refusal', 'function_call'],
  tool: ['role', 'content', 'name', 'id', 'tool_call_id'],
};

/**
 * Converts OpenAI chat messages into native session events, one event per message, in order,
 * keeping everything needed to render each message back as it came in
 * ({@link eventsToOpenAiMessages}).
 *
 * - `system` / `developer` → system event; with `name: "notice"` it is a notice (`notice: true`,
 *   DESIGN §3.1: a real event, never pinned; stored without that `name`, as the native route stores
 *   a notice); `user` → user event. `content` is a string or an
 *   array of text parts; the text is the parts concatenated, and the parts are kept as
 *   `textParts` (other part types are rejected: the store keeps text only). A system, developer
 *   or user message needs text: `content` missing, null, `""` or `[]` is refused at `content`, with
 *   one message; parts that are all empty are refused at `content[0].text` (for an assistant,
 *   unless it has tool_calls or a refusal).
 * - `assistant` → assistant event: `content` (string, text parts, or null) and/or `tool_calls`
 *   `[{ id, type: 'function', function: { name, arguments } }]` → `toolCalls`, and `refusal`
 *   → `refusal`. At least one of the three must be present (`content` null, `""` or `[]` counts
 *   as absent, one message at `content`; `tool_calls: []` is no tool call). `content: []` beside
 *   tool calls or a refusal is no text, as `null` is: the event's `text` is null, no `textParts`
 *   (`""` is kept as `""`). `tool_calls: []` is
 *   kept as `toolCalls: []` (as the native route keeps it), so the log gives back what was sent;
 *   {@link eventsToOpenAiMessages} leaves it out, as OpenAI refuses an empty `tool_calls`.
 * - `tool` → tool event with one response `{ toolCallId: tool_call_id, name, data: content }`
 *   (`dataParts` for parts). `name` is the message's `name` when it has one (kept as the event's
 *   `name` too), else the matching call's earlier in this batch, else `context.knownCallNames`',
 *   else `''`: a call known to none of them is not open in the session, and the append's
 *   tool-call rules (`ToolCallLedger`) refuse the response with the right code (422
 *   `unknown_tool_call` for a call never made, `tool_call_conflict` for one archived and answered).
 * - `name` of a system, developer, user or assistant message → the event's `name`.
 * - A message's `id` field (non-empty string), if present, is the event id (the client id);
 *   otherwise `context.assignId(index)` or `${idPrefix}${index}`.
 * - `createdAt` is the caller's when {@link OpenAiParseContext.readsCreatedAt} says it reads it.
 * - Any other field with a non-null value is rejected (it would be lost); null-valued fields,
 *   and empty lists (the SDK's `annotations: []`), count as absent.
 *
 * Every string is checked for lone surrogates (invalid UTF-16).
 *
 * @throws InvalidRequestError (HTTP 400, code `invalid_message`) for the first malformed message;
 *   `parameter` names the field, e.g. `messages[3].tool_call_id`; code `invalid_request` for an id
 *   given to two messages (as the append decider answers it for native events).
 */
export function openAiMessagesToEvents(messages: unknown[], context: OpenAiParseContext = {}): SessionEvent[] {
  if (!Array.isArray(messages)) throw invalid('messages', 'must be an array of chat messages');
  const batchCalls = new Map<string, string>();
  const ids = new Set<string>();
  const events: SessionEvent[] = [];
  messages.forEach((raw, index) => {
    const at = `messages[${index}]`;
    if (!isObject(raw)) throw invalid(at, 'must be an object with a role');
    const role = raw.role;
    if (typeof role !== 'string' || !(OPENAI_INPUT_ROLES as readonly string[]).includes(role)) {
      if (role === 'function') throw invalid(`${at}.role`, `role "function" is deprecated: send the result as role "tool" with tool_call_id`);
      const known = [...new Set(Object.values(MESSAGE_FIELDS).flat()), ...(context.readsCreatedAt ? ['createdAt'] : [])];
      throw invalid(`${at}.role`, `must be one of ${OPENAI_INPUT_ROLES.join(', ')}${missingFieldHint(raw, 'role', known, at)}`);
    }
    const fields = MESSAGE_FIELDS[role as OpenAiInputRole];
    rejectUnknownFields(raw, context.readsCreatedAt ? [...fields, 'createdAt'] : fields, at);
    const id = messageId(raw, index, context);
    // The rule and code of the append decider (`decideAppend`), so both append routes answer alike.
    if (ids.has(id)) throw new InvalidRequestError(`${at}.id`, `${at}.id: ${duplicateIdInRequest(id, 'message')}`, 'invalid_request');
    ids.add(id);
    const name = raw.name === undefined || raw.name === null ? undefined : nonEmptyString(raw.name, `${at}.name`);

    switch (role) {
      case 'system':
      case 'developer':
      case 'user': {
        // No text (OpenAI's content is required for these roles): missing or null is "required"; "" and [] were sent, so
        // the message says they are empty and what to send instead.
        if (raw.content === undefined || raw.content === null) {
          throw invalid(`${at}.content`, `is required: a non-empty string or a non-empty array of text parts (${role} messages need text)`);
        }
        if (raw.content === '') {
          throw invalid(
            `${at}.content`,
            `is an empty string: send the text (a non-empty string or a non-empty array of text parts; ${role} messages need text)`,
          );
        }
        if (Array.isArray(raw.content) && raw.content.length === 0) {
          throw invalid(
            `${at}.content`,
            `is an empty array: send at least one text part {"type": "text", "text": "…"}, or the text as a non-empty string (${role} messages need text)`,
          );
        }
        const content = requiredText(raw.content, `${at}.content`);
        if (content.parts && content.text === '') {
          throw invalid(`${at}.content[0].text`, `the text parts are all empty: send some text in them (${role} messages need text)`);
        }
        // As the native route's user and system text (newcomer ncfresh70 F1).
        if (showsNothing(content.text)) throw invalid(`${at}.content`, blankTextRefusal(`${role} messages need text a model can read`));
        // A notice is stored as the native route stores it, `notice: true` without the name that marked it,
        // so the same notice sent through either route is the same event.
        const notice = role !== 'user' && name === NOTICE_NAME;
        const fields = asSent(notice ? undefined : name, content.parts);
        events.push({ id, type: role === 'user' ? 'user' : 'system', text: content.text, ...fields, ...(notice ? { notice: true } : {}) });
        return;
      }
      case 'assistant': {
        if (raw.function_call !== undefined && raw.function_call !== null) {
          throw invalid(`${at}.function_call`, 'function_call is deprecated: send tool_calls instead');
        }
        // `content: []` (no part: what some OpenAI-compatible frameworks send beside tool_calls) says "no text", as null
        // does: stored as null (withTextField's shape for an assistant without text), no parts kept.
        const sent = optionalText(raw.content, `${at}.content`);
        const content = sent?.parts?.length === 0 ? null : sent;
        const refusal = raw.refusal === undefined || raw.refusal === null ? undefined : stringField(raw.refusal, `${at}.refusal`);
        const toolCalls = parseToolCalls(raw.tool_calls, `${at}.tool_calls`);
        // Null, "" and [] say nothing alike: one answer (all-empty parts are named at their first part).
        if ((content === null || (!content.parts && content.text === '')) && toolCalls.length === 0 && refusal === undefined) {
          throw invalid(`${at}.content`, 'an assistant message needs content (a non-empty string or text parts), tool_calls or a refusal');
        }
        if (content?.parts && content.text === '' && toolCalls.length === 0 && refusal === undefined) {
          throw invalid(`${at}.content[0].text`, 'the text parts are all empty: send some text in them, or tool_calls or a refusal (then content null)');
        }
        for (const call of toolCalls) batchCalls.set(call.id, call.name);
        const event: AssistantEvent = { id, type: 'assistant', text: content?.text ?? null, ...asSent(name, content?.parts) };
        // An empty list is kept as sent (`toolCalls: []`, as the native route stores it: the log gives back what was
        // appended); it is no tool call, and the `openai` window leaves it out (OpenAI refuses an empty `tool_calls`).
        if (toolCalls.length > 0 || Array.isArray(raw.tool_calls)) event.toolCalls = toolCalls;
        if (refusal !== undefined) event.refusal = refusal;
        events.push(event);
        return;
      }
      case 'tool': {
        const callId = clientIdField(raw.tool_call_id, `${at}.tool_call_id`);
        const content = requiredText(raw.content, `${at}.content`);
        const toolName = name ?? batchCalls.get(callId) ?? context.knownCallNames?.get(callId) ?? '';
        const response: ToolResponse = { toolCallId: callId, name: toolName, data: content.text };
        if (content.parts) response.dataParts = content.parts;
        events.push({ id, type: 'tool', responses: [response], ...(name !== undefined ? { name } : {}) });
        return;
      }
    }
  });
  return events;
}

/**
 * Renders session events (an active window, in log order) as OpenAI chat messages.
 *
 * - The pinned system message (the latest system event that is not a notice) comes first,
 *   whatever its place in the window; earlier ones are superseded (§3.2) and left out, so the
 *   result has at most one such system message. A notice is rendered in its place as a `system`
 *   message with `name: "notice"`.
 * - A summary becomes two messages in its place: `user` (its shadow prompt), then `assistant`
 *   (its text).
 * - An assistant event becomes one message; its tool calls in the provider's shape (an empty
 *   `toolCalls` list is left out: OpenAI refuses `tool_calls: []`); `content`
 *   is null when it has tool calls or a refusal and no text, and {@link NO_TEXT_CONTENT} for an
 *   event with none of the three (stored before they were rejected).
 * - Text sent in parts comes back in parts; `name` and `refusal` come back as sent.
 * - A tool event becomes one `tool` message per response, each with its `tool_call_id`, placed
 *   right after the assistant message that made the call (providers require the answers to
 *   follow their calls directly); pairing per `pairToolCalls` (a response answers the most
 *   recent earlier call with its id); a response with no call in the window is left out.
 * - A call with no response in the window gets a `tool` message {@link NO_TOOL_RESPONSE}, unless
 *   its assistant message is the newest non-tool message (the call may still be running).
 * - A null text of a user or system event (stored before the HTTP API refused it) renders as `""`.
 *
 * The input is not mutated; ids and tool names of responses are not part of the output (the
 * provider's tool message has neither), except a tool message's `name` when it was sent with one.
 */
export function eventsToOpenAiMessages(entries: readonly SessionEvent[]): OpenAiChatMessage[] {
  return renderOpenAiWindow(entries).messages;
}

/**
 * What of one input event a rendering carries: `all` of it, `none` of it (a superseded system
 * message; a tool event none of whose responses answers a call of the window), or, for a tool
 * event some of whose responses are left out, the responses rendered.
 */
export type OpenAiShownPart = 'all' | 'none' | ToolResponse[];

/** {@link eventsToOpenAiMessages}'s messages, with an account of what they carry (for their cost). */
export interface OpenAiRendering {
  messages: OpenAiChatMessage[];
  /** Per input event (same index): what of it the messages carry. */
  shown: OpenAiShownPart[];
  /** The calls answered by a {@link NO_TOOL_RESPONSE} placeholder message, one per placeholder, in message order. */
  placeholders: ToolCall[];
}

/**
 * {@link eventsToOpenAiMessages} (same rules, same messages), also saying what of each event the
 * messages carry and which calls got a placeholder answer, so a caller can cost what a model is
 * sent (see `openAiRenderingCost`). Pure; the input is not mutated.
 */
export function renderOpenAiWindow(entries: readonly SessionEvent[]): OpenAiRendering {
  let pinned: SessionEvent | undefined;
  for (const event of entries) if (event.type === 'system' && !isNotice(event)) pinned = event;
  // Each call's answer (the first response paired with it, per pairToolCalls), so it can be emitted right after it.
  const answers = new Map<SessionEvent, Map<string, { message: OpenAiToolMessage; at: number; response: ToolResponse }>>();
  const { calls } = pairToolCalls(entries);
  for (const call of calls) {
    const first = call.responses[0];
    if (first === undefined) continue;
    const tool = entries[first] as Extract<SessionEvent, { type: 'tool' }>;
    const response = tool.responses.find((r) => r.toolCallId === call.id)!;
    const holder = entries[call.callAt];
    const got = answers.get(holder) ?? new Map<string, { message: OpenAiToolMessage; at: number; response: ToolResponse }>();
    const content = response.dataParts ? textParts(response.dataParts) : response.data;
    got.set(call.id, { message: { role: 'tool', tool_call_id: call.id, content, ...named(tool.name) }, at: first, response });
    answers.set(holder, got);
  }
  // DESIGN §3.2: the calls answered with the placeholder (the one rule the summarizer's input follows too).
  const unanswered = placeholderAnsweredCalls(entries);
  const out: OpenAiChatMessage[] = [];
  const shown: OpenAiShownPart[] = entries.map((event) =>
    event.type === 'tool' || (event.type === 'system' && event !== pinned && !isNotice(event)) ? 'none' : 'all',
  );
  const shownResponses = new Map<number, Set<ToolResponse>>();
  const placeholders: ToolCall[] = [];
  if (pinned && pinned.type === 'system') out.push({ role: 'system', content: contentOf(pinned.text, pinned.textParts) ?? '', ...named(pinned.name) });
  entries.forEach((event, i) => {
    switch (event.type) {
      case 'system':
        if (isNotice(event)) out.push({ role: 'system', name: NOTICE_NAME, content: contentOf(event.text, event.textParts) ?? '' });
        break;
      case 'tool':
        break;
      case 'user':
        out.push({ role: 'user', content: contentOf(event.text, event.textParts) ?? '', ...named(event.name) });
        break;
      case 'summary':
        out.push({ role: 'user', content: event.shadowPrompt });
        out.push({ role: 'assistant', content: event.text });
        break;
      case 'assistant': {
        const calls = event.toolCalls ?? [];
        const content = contentOf(event.text, event.textParts);
        const message: OpenAiAssistantMessage = { role: 'assistant', content, ...named(event.name) };
        if (event.refusal !== undefined) message.refusal = event.refusal;
        // Stored before assistant events had to say something: the DESIGN §3.1 placeholder
        // rather than an empty message, which stricter providers reject.
        else if (content === null && calls.length === 0) message.content = NO_TEXT_CONTENT;
        if (calls.length === 0) {
          out.push(message);
          break;
        }
        message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
        out.push(message);
        const got = answers.get(event);
        const placeholder = unanswered.get(i) ?? [];
        for (const c of calls) {
          const answer = got?.get(c.id);
          if (answer !== undefined) {
            out.push(answer.message);
            shownResponses.set(answer.at, (shownResponses.get(answer.at) ?? new Set()).add(answer.response));
          } else if (placeholder.includes(c)) {
            out.push({ role: 'tool', tool_call_id: c.id, content: NO_TOOL_RESPONSE });
            placeholders.push(c);
          }
        }
        break;
      }
    }
  });
  for (const [at, responses] of shownResponses) {
    const tool = entries[at] as Extract<SessionEvent, { type: 'tool' }>;
    // In the event's own order, so a partly rendered event is costed as the event it would be.
    shown[at] = responses.size === tool.responses.length ? 'all' : tool.responses.filter((r) => responses.has(r));
  }
  return { messages: out, shown, placeholders };
}

function textParts(parts: readonly string[]): OpenAiTextPart[] {
  return parts.map((text) => ({ type: 'text', text }));
}

/** The content as it was sent: its parts, else its text (null stays null). */
function contentOf(text: string | null | undefined, parts: readonly string[] | undefined): OpenAiContent | null {
  if (parts) return textParts(parts);
  return text ?? null;
}

function named(name: string | undefined): { name?: string } {
  return name === undefined ? {} : { name };
}

/**
 * Content of the tool message rendered for a call that has no response in the window while the
 * conversation went on after it (a provider rejects a call without its answer): the domain
 * library's, with its rule (`placeholderAnsweredCalls`).
 */
export { NO_TOOL_RESPONSE };

/** Kinds of problem {@link validateOpenAiWindow} reports. */
export type OpenAiWindowProblemCode =
  | 'invalid-message'
  | 'system-not-first'
  | 'system-repeated'
  | 'tool-without-call'
  | 'tool-answer-after-user'
  | 'tool-call-unanswered'
  | 'tool-calls-interrupted'
  | 'duplicate-tool-call-id'
  | 'lone-surrogate'
  | 'summary-out-of-place';

/** One problem: the index of the message it is about, a stable code, and a description (no message text in it). */
export interface OpenAiWindowProblem {
  index: number;
  code: OpenAiWindowProblemCode;
  message: string;
}

/** Options of {@link validateOpenAiWindow}. */
export interface ValidateOpenAiWindowOptions {
  /**
   * The summaries the window is expected to contain (e.g. the summary events of the window that
   * was rendered). Each must appear as a `user` message with exactly its shadow prompt
   * immediately followed by an `assistant` message with exactly its text and no tool calls; a
   * summary text found anywhere else, or missing, is `summary-out-of-place`.
   */
  summaries?: ReadonlyArray<{ shadowPrompt: string; text: string }>;
}

/**
 * Lists the problems a provider would see in a chat window, in message order. An empty list
 * means the window is acceptable. Checks:
 *
 * - every message is an object with a known role (`system`, `developer`, `user`, `assistant`,
 *   `tool`) and fields of the right types (`invalid-message`);
 * - a system (or developer) message comes first (`system-not-first`) and at most once
 *   (`system-repeated`), except notices (`name: "notice"`), which stand anywhere (OpenAI accepts
 *   system messages mid-conversation) but, like any message, not between calls and answers;
 * - every tool message answers a pending call of an earlier assistant message
 *   (`tool-without-call`); an answer to a call whose turn was already closed by a user message is
 *   `tool-answer-after-user`; two pending calls with one id are `duplicate-tool-call-id`;
 * - every call of a closed turn (one followed by a later user message) has its answer before that
 *   user message (`tool-call-unanswered`), and answers follow their calls directly, with no
 *   assistant message in between (`tool-calls-interrupted`); calls of the last message may still
 *   be open;
 * - no string anywhere in a message holds a lone surrogate (`lone-surrogate`);
 * - with `options.summaries`: each summary is a user-then-assistant pair (`summary-out-of-place`).
 *
 * Call ids may be reused once answered (real agent logs do this); matching is against the
 * calls still pending.
 */
export function validateOpenAiWindow(messages: readonly unknown[], options: ValidateOpenAiWindowOptions = {}): OpenAiWindowProblem[] {
  const problems: OpenAiWindowProblem[] = [];
  const add = (index: number, code: OpenAiWindowProblemCode, message: string) => problems.push({ index, code, message });
  if (!Array.isArray(messages)) {
    add(-1, 'invalid-message', 'the window is not an array of messages');
    return problems;
  }
  const pending = new Map<string, number>(); // call id → index of the assistant message
  const closedUnanswered = new Set<string>();
  const answered = new Set<string>();
  let systemSeen = -1;

  messages.forEach((m, index) => {
    const at = `messages[${index}]`;
    if (!isObject(m)) {
      add(index, 'invalid-message', `${at} is not an object`);
      return;
    }
    const surrogatePath = findLoneSurrogate(m, at);
    if (surrogatePath) add(index, 'lone-surrogate', `${surrogatePath} contains a lone surrogate (invalid UTF-16)`);
    const role = m.role;
    switch (role) {
      case 'system':
      case 'developer':
        if (m.name === NOTICE_NAME) {
          // A notice stands in its place like any message: it closes pending calls.
          if (!isTextContent(m.content)) add(index, 'invalid-message', `${at}.content must be a string or text parts`);
          for (const [id, callIndex] of pending) {
            add(callIndex, 'tool-calls-interrupted', `messages[${callIndex}] calls ${quoteInput(id)} but ${at} comes before its answer`);
            closedUnanswered.add(id);
          }
          pending.clear();
          break;
        }
        if (systemSeen >= 0) add(index, 'system-repeated', `${at} is a second system message (the first is messages[${systemSeen}])`);
        else if (index !== 0) add(index, 'system-not-first', `${at} is a system message but not the first message`);
        if (systemSeen < 0) systemSeen = index;
        if (!isTextContent(m.content)) add(index, 'invalid-message', `${at}.content must be a string or text parts`);
        break;
      case 'user':
        if (!isTextContent(m.content, true)) add(index, 'invalid-message', `${at}.content must be a string or content parts`);
        for (const [id, callIndex] of pending) {
          add(callIndex, 'tool-call-unanswered', `messages[${callIndex}] calls ${quoteInput(id)} but the turn closes at ${at} without its answer`);
          closedUnanswered.add(id);
        }
        pending.clear();
        break;
      case 'assistant': {
        // Answers must follow their calls directly: an assistant message while calls are pending
        // interrupts them.
        for (const [id, callIndex] of pending) {
          add(callIndex, 'tool-calls-interrupted', `messages[${callIndex}] calls ${quoteInput(id)} but ${at} comes before its answer`);
          closedUnanswered.add(id);
        }
        pending.clear();
        const calls = m.tool_calls;
        const hasCalls = Array.isArray(calls) && calls.length > 0;
        if (calls !== undefined && calls !== null && !Array.isArray(calls)) add(index, 'invalid-message', `${at}.tool_calls must be an array`);
        if (m.content === null || m.content === undefined) {
          if (!hasCalls) add(index, 'invalid-message', `${at} has neither content nor tool_calls`);
        } else if (!isTextContent(m.content, true)) {
          add(index, 'invalid-message', `${at}.content must be a string, content parts or null`);
        }
        if (Array.isArray(calls)) {
          (calls as unknown[]).forEach((c: unknown, k: number) => {
            const cat = `${at}.tool_calls[${k}]`;
            if (
              !isObject(c) ||
              typeof c.id !== 'string' ||
              c.id === '' ||
              !isObject(c.function) ||
              typeof c.function.name !== 'string' ||
              c.function.name === '' ||
              typeof c.function.arguments !== 'string'
            ) {
              add(
                index,
                'invalid-message',
                `${cat} must be { id, type: "function", function: { name, arguments } } with non-empty id and name and string arguments`,
              );
              return;
            }
            if (c.type !== 'function') add(index, 'invalid-message', `${cat}.type must be "function"`);
            if (pending.has(c.id)) add(index, 'duplicate-tool-call-id', `${cat}.id ${quoteInput(c.id)} is already pending (messages[${pending.get(c.id)}])`);
            pending.set(c.id, index);
            closedUnanswered.delete(c.id);
            answered.delete(c.id);
          });
        }
        break;
      }
      case 'tool': {
        const id = m.tool_call_id;
        if (typeof id !== 'string' || id === '') {
          add(index, 'invalid-message', `${at}.tool_call_id must be a non-empty string`);
          break;
        }
        if (!isTextContent(m.content)) add(index, 'invalid-message', `${at}.content must be a string or text parts`);
        if (pending.has(id)) {
          pending.delete(id);
          answered.add(id);
        } else if (closedUnanswered.has(id)) {
          add(index, 'tool-answer-after-user', `${at} answers ${quoteInput(id)} after a user message closed the turn of its call`);
          closedUnanswered.delete(id);
        } else if (answered.has(id)) {
          add(index, 'tool-without-call', `${at} answers ${quoteInput(id)}, which was already answered`);
        } else {
          add(index, 'tool-without-call', `${at}.tool_call_id ${quoteInput(id)} answers no call of an earlier assistant message`);
        }
        break;
      }
      default:
        add(index, 'invalid-message', `${at}.role must be one of system, developer, user, assistant, tool`);
    }
  });

  for (const summary of options.summaries ?? []) checkSummary(messages, summary, add);
  problems.sort((a, b) => a.index - b.index);
  return problems;
}

function checkSummary(
  messages: readonly unknown[],
  summary: { shadowPrompt: string; text: string },
  add: (index: number, code: OpenAiWindowProblemCode, message: string) => void,
): void {
  const pairs: number[] = [];
  messages.forEach((m, i) => {
    if (!isObject(m) || m.content !== summary.text) return;
    const prev = i > 0 ? messages[i - 1] : undefined;
    const inPlace =
      m.role === 'assistant' &&
      (m.tool_calls === undefined || (Array.isArray(m.tool_calls) && m.tool_calls.length === 0)) &&
      isObject(prev) &&
      prev.role === 'user' &&
      prev.content === summary.shadowPrompt;
    if (inPlace) pairs.push(i);
    else if (m.role !== 'user' || m.content !== summary.shadowPrompt) {
      add(
        i,
        'summary-out-of-place',
        `messages[${i}] holds a summary's text as a ${String(m.role)} message; a summary must be a user message (its shadow prompt) followed by an assistant message (its text)`,
      );
    }
  });
  if (pairs.length === 0) {
    add(
      messages.length,
      'summary-out-of-place',
      'a summary of the window is not rendered as a user message (shadow prompt) followed by an assistant message (summary text)',
    );
  }
}

// ---------------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

function isObject(x: unknown): x is Obj {
  return typeof x === 'object' && x !== null && !Array.isArray(x);
}

function invalid(parameter: string, what: string): InvalidRequestError {
  return new InvalidRequestError(parameter, `${parameter}: ${what}`, INVALID_MESSAGE_CODE);
}

/**
 * True when `s` holds an unpaired UTF-16 surrogate. `String.prototype.isWellFormed` (Node 20+):
 * 0.5 ms for 1,000,000 ideographs, against 3.5–5 ms for a regular expression.
 */
export function hasLoneSurrogate(s: string): boolean {
  return !(s as string & { isWellFormed(): boolean }).isWellFormed();
}

function findLoneSurrogate(x: unknown, path: string): string | null {
  if (typeof x === 'string') return hasLoneSurrogate(x) ? path : null;
  if (Array.isArray(x)) {
    for (let i = 0; i < x.length; i++) {
      const p = findLoneSurrogate(x[i], `${path}[${i}]`);
      if (p) return p;
    }
    return null;
  }
  if (isObject(x)) {
    for (const [k, v] of Object.entries(x)) {
      if (hasLoneSurrogate(k)) return `${path} (a key)`;
      const p = findLoneSurrogate(v, `${path}.${k}`);
      if (p) return p;
    }
  }
  return null;
}

function isTextContent(content: unknown, anyParts = false): boolean {
  if (typeof content === 'string') return true;
  if (!Array.isArray(content)) return false;
  return content.every((p) => isObject(p) && typeof p.type === 'string' && (anyParts || (p.type === 'text' && typeof p.text === 'string')));
}

function stringField(value: unknown, field: string): string {
  if (value === undefined || value === null) throw invalid(field, 'is required (a string)');
  if (typeof value !== 'string') throw invalid(field, 'must be a string');
  if (hasLoneSurrogate(value)) throw invalid(field, 'contains a lone surrogate (invalid UTF-16); send well-formed text');
  return value;
}

/** A string `field` that follows the client id rule ({@link clientIdProblem}, as native ids). */
function clientIdField(value: unknown, field: string): string {
  const s = stringField(value, field);
  const problem = clientIdProblem(s);
  if (problem) throw invalid(field, problem);
  return s;
}

function nonEmptyString(value: unknown, field: string): string {
  const s = stringField(value, field);
  if (s.length === 0) throw invalid(field, 'must be a non-empty string');
  return s;
}

/** Content as stored: the text, and its parts when it was sent as text parts. */
interface ParsedContent {
  text: string;
  parts?: string[];
}

/** A string, or text parts (concatenated). */
function requiredText(content: unknown, field: string): ParsedContent {
  if (typeof content === 'string') return { text: stringField(content, field) };
  if (Array.isArray(content)) {
    const parts = content.map((part, k) => {
      const pat = `${field}[${k}]`;
      if (!isObject(part)) throw invalid(pat, 'must be a content part object');
      if (part.type !== 'text') {
        throw invalid(
          `${pat}.type`,
          `only text content parts are supported (got ${typeof part.type === 'string' ? quoteInput(part.type) : 'no type'})` +
            // the assistant's refusal has a field of its own, which is kept (newcomer ncapi71 F7)
            (part.type === 'refusal' ? `: send an assistant's refusal as the message's "refusal" field (its text), which is kept and rendered back` : ''),
        );
      }
      rejectUnknownFields(part, ['type', 'text'], pat);
      return stringField(part.text, `${pat}.text`);
    });
    return { text: parts.join(''), parts };
  }
  if (content === null || content === undefined) throw invalid(field, 'is required: a string or an array of text parts');
  throw invalid(field, 'must be a string or an array of text parts');
}

function optionalText(content: unknown, field: string): ParsedContent | null {
  if (content === null || content === undefined) return null;
  return requiredText(content, field);
}

function asSent(name: string | undefined, parts: string[] | undefined): { name?: string; textParts?: string[] } {
  return { ...(name !== undefined ? { name } : {}), ...(parts ? { textParts: parts } : {}) };
}

/**
 * The `unknownFieldHint` of message part `raw` (at `at`) when it left out its required `field`
 * (absent or null): its fields outside `known` that have a value (those {@link rejectUnknownFields}
 * would refuse), a near miss of a known field suggested; else `''`.
 */
function missingFieldHint(raw: Obj, field: string, known: readonly string[], at: string): string {
  if (raw[field] !== undefined && raw[field] !== null) return '';
  const unknownKeys = Object.keys(raw).filter((key) => {
    const value = raw[key];
    return !known.includes(key) && value !== null && value !== undefined && !(Array.isArray(value) && value.length === 0);
  });
  return unknownFieldHint({ holder: at, unknownKeys, candidates: [field, ...known.filter((k) => k !== field && k !== 'function_call')] });
}

/** Rejects a field outside `allowed` that has a value (it would be lost). */
function rejectUnknownFields(raw: Obj, allowed: readonly string[], at: string): void {
  for (const key of Object.keys(raw)) {
    const value = raw[key];
    // Null or an empty list carries nothing to lose (the SDK's `annotations: []`, `audio: null` on a reply appended as returned).
    if (value === null || value === undefined || (Array.isArray(value) && value.length === 0) || allowed.includes(key)) continue;
    throw invalid(
      `${at}.${quoteInput(key, { quoted: false })}`,
      `${unknownKeysMessage({ unknownKeys: [key], candidates: allowed.filter((k) => k !== 'function_call' && !Object.hasOwn(raw, k)) })} (the service stores ${allowed.filter((k) => k !== 'function_call').join(', ')})`,
    );
  }
}

/**
 * The OpenAI request path of a field named in native terms, relative to its message: `.text` →
 * `.content`, `.textParts` → `.content`, `.toolCalls[1].name` → `.tool_calls[1].function.name`,
 * `.responses[0].toolCallId` → `.tool_call_id`, `.responses[0].data` → `.content`. Used to name
 * fields of `POST …/messages` in errors found after conversion.
 */
export function openAiFieldPath(nativePath: string): string {
  return OPENAI_FIELD_NAMES.reduce((acc, [from, to]) => acc.replace(from, to), nativePath);
}

const OPENAI_FIELD_NAMES: Array<[RegExp, string]> = [
  [/\.textParts\b/g, '.content'],
  [/\.text\b/g, '.content'],
  [/\.toolCalls\[(\d+)\]\.(name|arguments)/g, '.tool_calls[$1].function.$2'],
  [/\.toolCalls/g, '.tool_calls'],
  [/\.responses\[\d+\]\.(data|dataParts)\b/g, '.content'],
  [/\.responses\[\d+\]\.toolCallId/g, '.tool_call_id'],
  [/\.responses\[\d+\]\.name/g, '.name'],
  [/\.responses\[\d+\]/g, ''],
];

/** Fields of a tool call in `tool_calls` the service keeps; any other field with a value is refused (it would be lost). */
const TOOL_CALL_FIELDS = ['id', 'type', 'function'] as const;
/** Fields of a tool call's `function` the service keeps. */
const TOOL_CALL_FUNCTION_FIELDS = ['name', 'arguments'] as const;

function parseToolCalls(value: unknown, field: string): ToolCall[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw invalid(field, 'must be an array of tool calls');
  // A call id given twice in one message is the tool-call rules' to refuse (422 tool_call_conflict), as on /events.
  return value.map((raw, k) => {
    const at = `${field}[${k}]`;
    if (!isObject(raw)) throw invalid(at, 'must be { id, type: "function", function: { name, arguments } }');
    if (raw.id === undefined || raw.id === null) throw invalid(`${at}.id`, `is required (a string)${missingFieldHint(raw, 'id', TOOL_CALL_FIELDS, at)}`);
    const id = clientIdField(raw.id, `${at}.id`);
    if (raw.type !== undefined && raw.type !== 'function') throw invalid(`${at}.type`, 'must be "function"');
    if (!isObject(raw.function)) throw invalid(`${at}.function`, `must be { name, arguments }${missingFieldHint(raw, 'function', TOOL_CALL_FIELDS, at)}`);
    rejectUnknownFields(raw, TOOL_CALL_FIELDS, at);
    rejectUnknownFields(raw.function, TOOL_CALL_FUNCTION_FIELDS, `${at}.function`);
    const name = nonEmptyString(raw.function.name, `${at}.function.name`);
    const args = stringField(raw.function.arguments, `${at}.function.arguments`);
    return { id, name, arguments: args };
  });
}

function messageId(raw: Obj, index: number, context: OpenAiParseContext): string {
  if (raw.id !== undefined && raw.id !== null) return clientIdField(raw.id, `messages[${index}].id`);
  const id = context.assignId ? context.assignId(index) : `${context.idPrefix ?? 'msg-'}${index}`;
  if (typeof id !== 'string' || id.length === 0) throw new Error(`assignId returned no id for messages[${index}]`);
  return id;
}
