/**
 * The session event model of DESIGN §3.1.
 *
 * A session is an ordered log of these events. Ids are the caller's own strings (for example
 * a vector id such as `u1`, or a message id); the library never invents or rewrites them.
 * Texts are JavaScript strings (UTF-16). Nothing here is ever mutated by the library.
 */

/** One call an assistant asked for. `arguments` is the raw JSON argument string, kept verbatim. */
export interface ToolCall {
  /** The provider's call id, answered by a {@link ToolResponse.toolCallId}. */
  id: string;
  /** The tool (function) name. */
  name: string;
  /** Raw JSON argument string, exactly as the model produced it (may be invalid JSON). */
  arguments: string;
}

/** One tool result answering a call. */
export interface ToolResponse {
  /** Id of the {@link ToolCall} this answers. */
  toolCallId: string;
  /** The tool (function) name. */
  name: string;
  /** The result as text (often JSON), verbatim. */
  data: string;
  /**
   * The result as it was sent in text parts, when it was (OpenAI content parts); `data` is then
   * their concatenation. Kept so the result renders as it came in.
   */
  dataParts?: string[];
}

/**
 * Fields an event keeps only to render it as it came in (OpenAI chat messages, DESIGN §5): they
 * do not change what the event says to the compaction rules.
 */
export interface AsSent {
  /** The participant name of the message (OpenAI `name`). */
  name?: string;
  /** The text as it was sent in text parts; `text` is then their concatenation. */
  textParts?: string[];
}

/** A user message. A user event starts a turn (DESIGN §3.2). `text` null means no text content. */
export interface UserEvent extends AsSent {
  id: string;
  type: 'user';
  text: string | null;
}

/** An assistant message: text, tool calls, or both. `text` may be null when `toolCalls` is set. */
export interface AssistantEvent extends AsSent {
  id: string;
  type: 'assistant';
  text: string | null;
  toolCalls?: ToolCall[];
  /** A refusal the model gave instead of text (OpenAI `refusal`); counted as the text when there is none. */
  refusal?: string;
}

/** One or more tool responses, each naming the call it answers. */
export interface ToolEvent {
  id: string;
  type: 'tool';
  responses: ToolResponse[];
  /** The `name` of the tool message(s) as sent (OpenAI's legacy field), when it was. */
  name?: string;
}

/**
 * A stored system message. The latest one that is not a notice is pinned; every earlier one is
 * superseded (§3.2). With `notice: true` it is a **notice** (§3.1): a message injected into the
 * conversation (a file arrived, a reminder), a real event counted, cut and archived in its place,
 * never pinned and never superseding the instructions.
 */
export interface SystemEvent extends AsSent {
  id: string;
  type: 'system';
  text: string | null;
  /** True for a notice (DESIGN §3.1); absent or false for the agent's instructions. */
  notice?: boolean;
}

/**
 * A synthetic summary: rendered to a model as a user message (`shadowPrompt`) followed by an
 * assistant message (`text`).
 */
export interface SummaryEvent {
  id: string;
  type: 'summary';
  shadowPrompt: string;
  text: string;
}

/** Any session event, discriminated by `type`. */
export type SessionEvent = UserEvent | AssistantEvent | ToolEvent | SystemEvent | SummaryEvent;

/** The five event kinds. */
export type SessionEventType = SessionEvent['type'];

/** All event kinds, in a stable order (useful for validation messages). */
export const SESSION_EVENT_TYPES: readonly SessionEventType[] = ['user', 'assistant', 'tool', 'system', 'summary'];

/**
 * A session event together with its cost under one estimator, computed once when the event was
 * appended (DESIGN §3.1: a pass only adds numbers, it never re-tokenizes).
 *
 * `tokens` is in the estimator's unit: tokens for `cl100k_base`/`o200k_base`, UTF-16 code units
 * for `chars`. It must be a finite integer ≥ 0.
 */
export interface CostedEvent {
  event: SessionEvent;
  tokens: number;
}

/** True for a system event marked as a notice (DESIGN §3.1): a real event, never pinned. */
export function isNotice(event: { type: string; notice?: unknown }): boolean {
  return event.type === 'system' && event.notice === true;
}

/**
 * The one shape of an event as stored and as every read answers it: a user, assistant or system
 * event always carries `text` (a string, or null when it has none, as the types above say). An
 * assistant event appended without `text` (tool calls or a refusal only, which a native append may
 * leave it out of) gets `text: null`, so the native route stores what the OpenAI route stores, and
 * events stored before this rule read as if stored by it. Tool and summary events are returned as
 * they are. Returns `event` itself when nothing is missing (no copy on the common path), else a copy
 * with `text: null` after its other keys. Pure; O(number of keys) only when it copies.
 */
export function withTextField(event: SessionEvent): SessionEvent {
  if (event.type === 'tool' || event.type === 'summary' || (event as { text?: unknown }).text !== undefined) return event;
  return { ...event, text: null };
}
