import { graphemeBoundary, type SessionEvent } from '@lib/compaction';

/** Longest preview, in UTF-16 code units (an ellipsis marks a cut). */
export const PREVIEW_LENGTH = 200;

/**
 * A one-line preview of an event for audit views: its text, its tool calls as `name(arguments)`,
 * or its tool responses' data; at most {@link PREVIEW_LENGTH} UTF-16 code units, cut on a grapheme
 * cluster boundary ({@link graphemeBoundary}: never half an emoji, a flag, a ZWJ sequence or a
 * letter without its marks) and then ending `…`; runs of spaces, tabs and
 * line breaks (LF, CR) collapsed to one space. Every other character stays as stored (not JavaScript's
 * `\s`, which also takes U+FEFF, U+2028, U+2029 and other spaces), so an audit view can show an
 * invisible one for what it is.
 */
export function eventPreview(event: SessionEvent): string {
  let text: string;
  switch (event.type) {
    case 'assistant':
      text = [event.text ?? '', ...(event.toolCalls ?? []).map((c) => `${c.name}(${c.arguments})`)].filter(Boolean).join(' ');
      break;
    case 'tool':
      text = event.responses.map((r) => r.data).join(' ');
      break;
    default:
      text = event.text ?? '';
  }
  const line = text.replace(/[ \t\n\r]+/g, ' ').replace(/^ | $/g, '');
  return line.length > PREVIEW_LENGTH ? `${line.slice(0, graphemeBoundary(line, PREVIEW_LENGTH - 1, 'before'))}…` : line;
}
