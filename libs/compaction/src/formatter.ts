/**
 * The event formatter of DESIGN §3.1: the text of an event used for token accounting and for
 * the summarizer.
 */
import type { AssistantEvent, SessionEvent, ToolCall, ToolEvent } from './session-event';
import { placeholderAnswerEvent } from './tool-call-pairing';

/** Placeholder used in place of a missing text (DESIGN §3.1, "missing text"). */
export const NO_TEXT_CONTENT = '[no text content]';

/**
 * True when `text` carries no content: `null`/`undefined`, empty, or only whitespace. An
 * assistant's blank text next to tool calls is omitted (DESIGN §3.1: "when the text is not
 * blank"), and a blank text gives way to a refusal.
 */
export function isBlankText(text: string | null | undefined): boolean {
  return text == null || text.trim() === '';
}

/**
 * True when `text` is missing (`null`/`undefined` or empty): rendered as {@link NO_TEXT_CONTENT}
 * (DESIGN §3.1, "missing text"). A whitespace-only text is not missing: it is formatted, and
 * costed, as written, so a long run of spaces costs what it costs a model.
 */
export function isMissingText(text: string | null | undefined): boolean {
  return text == null || text === '';
}

function textOrPlaceholder(text: string | null | undefined): string {
  return isMissingText(text) ? NO_TEXT_CONTENT : (text as string);
}

function formatAssistant(event: AssistantEvent): string {
  const calls = event.toolCalls ?? [];
  // A refusal is what the assistant said when it has no text.
  const text = isBlankText(event.text) && !isBlankText(event.refusal) ? event.refusal : event.text;
  if (calls.length === 0) return `Assistant: ${textOrPlaceholder(text)}`;
  const rendered = calls.map((c) => `${c.name}(${c.arguments ?? ''})`).join(', ');
  return isBlankText(text) ? `Assistant [tool calls: ${rendered}]` : `Assistant: ${text} [tool calls: ${rendered}]`;
}

function formatTool(event: ToolEvent): string {
  const rendered = (event.responses ?? []).map((r) => `${r.name} -> ${textOrPlaceholder(r.data)}`).join(', ');
  return `Tool [responses: ${rendered}]`;
}

/**
 * The formatted lines of one event (DESIGN §3.1):
 *
 * - `user` → `["User: <text>"]`, `system` → `["System: <text>"]`;
 * - `assistant` without tool calls → `["Assistant: <text>"]` (its `refusal` stands in for a blank text); with tool calls →
 *   `["Assistant [tool calls: name(args), …]"]`, or `["Assistant: <text> [tool calls: …]"]` when
 *   the text is not blank (`args` is the raw JSON argument string, verbatim);
 * - `tool` → `["Tool [responses: name -> data, …]"]`;
 * - `summary` → two lines: `["User: <shadow prompt>", "Assistant: <summary text>"]`.
 *
 * A missing (null or empty) text or tool result is rendered as `[no text content]`; a
 * whitespace-only one is rendered as written ({@link isMissingText}). An assistant's missing or
 * blank text gives way to its non-blank `refusal` (`Assistant: <refusal>`, also before
 * `[tool calls: …]`), a deliberate difference from DESIGN §3.1, which has `[no text content]`
 * there: the refusal is what the assistant said, what a model is sent and what the summarizer
 * reads, so budgets count it (docs/strategies-and-triggers.md, Token costs). A text that contains newlines is still one line of the result: "lines"
 * are the units the estimator is applied to, not physical lines. Pure; never throws on a
 * well-typed event.
 */
export function formatEventLines(event: SessionEvent): string[] {
  switch (event.type) {
    case 'user':
      return [`User: ${textOrPlaceholder(event.text)}`];
    case 'system':
      return [`System: ${textOrPlaceholder(event.text)}`];
    case 'assistant':
      return [formatAssistant(event)];
    case 'tool':
      return [formatTool(event)];
    case 'summary':
      return [`User: ${textOrPlaceholder(event.shadowPrompt)}`, `Assistant: ${textOrPlaceholder(event.text)}`];
    default: {
      const unknown: never = event;
      throw new Error(`unknown event type: ${JSON.stringify((unknown as { type?: unknown }).type)}`);
    }
  }
}

/**
 * The formatted text of one event (DESIGN §3.1): {@link formatEventLines} joined with `'\n'`.
 * This is the text the summarizer sees; costs are computed per line (see `eventCost`), so the
 * joining newline is not counted.
 */
export function formatEvent(event: SessionEvent): string {
  return formatEventLines(event).join('\n');
}

/**
 * The text of `event` as the summarizer is given it (DESIGN §3.1, §3.2): {@link formatEvent},
 * then one line per call of `placeholderCalls` — the calls of this event that a rendering to a
 * model answers with `[no tool response recorded]` (`placeholderAnsweredCalls`, the one rule) —
 * the placeholder answer as a tool event, `Tool [responses: <name> -> [no tool response
 * recorded]]`, so an abandoned call reads as every rendering to a model has shown it. Pure.
 */
export function formatEventWithPlaceholders(event: SessionEvent, placeholderCalls: readonly ToolCall[] = []): string {
  return [...formatEventLines(event), ...placeholderCalls.map((call) => formatTool(placeholderAnswerEvent(call)))].join('\n');
}
