import type { SessionEvent } from '@lib/compaction';

/**
 * The text recall indexes for one event: what a person would search for, without the
 * `User:`/`Assistant:` prefixes of the formatter (they would make every event match `user`).
 *
 * - user / system / assistant: the text (nothing when null);
 * - assistant tool calls: one line per call, `name arguments` (the raw JSON argument string);
 * - tool: one line per response, `name data`;
 * - summary: the summary text (the shadow prompt is boilerplate and is not indexed).
 *
 * Lines are joined with `\n`. The control characters U+0001 and U+0002 are replaced by spaces:
 * recall uses them to mark matches in snippets. Returns `''` when there is nothing to index.
 */
export function recallDocument(event: SessionEvent): string {
  const lines: string[] = [];
  switch (event.type) {
    case 'user':
    case 'system':
      if (event.text) lines.push(event.text);
      break;
    case 'assistant':
      if (event.text) lines.push(event.text);
      for (const call of event.toolCalls ?? []) lines.push(`${call.name} ${call.arguments}`);
      break;
    case 'tool':
      for (const response of event.responses ?? []) lines.push(`${response.name} ${response.data}`);
      break;
    case 'summary':
      if (event.text) lines.push(event.text);
      break;
    default:
      break;
  }
  return lines.join('\n').replace(/[\u0001\u0002]/g, ' ');
}
