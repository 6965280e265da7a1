/**
 * Where a body that is not JSON breaks, for the `malformed_json` answers (HTTP and NATS): what
 * `JSON.parse` (V8) says is wrong, and where, as line, column and position. V8 names the position
 * of most errors (`… in JSON at position 12`); it names none for an unexpected token (its message
 * quotes the text around it instead, which an answer does not repeat) nor for a body that ends too
 * soon: the first is found by `jsonc-parser`'s scanner (strict JSON: no comments, no trailing
 * commas), the second is the end of the text.
 */
import { visit } from 'jsonc-parser';
import { quoteInput } from '@lib/compaction';

/** Where a JSON text breaks (see {@link jsonSyntaxError}). */
export interface JsonSyntaxError {
  /** What is wrong, in V8's words, starting lower-case (e.g. `expected ',' or '}' after property value`). */
  reason: string;
  /** Offset where the text breaks, 0-based, in UTF-16 code units of the text (as `JSON.parse` counts). */
  position: number;
  /** Line of `position`, 1-based (lines end at `\n`). */
  line: number;
  /** Column of `position` in its line, 1-based, in characters (Unicode code points). */
  column: number;
}

/** V8's position suffix: ` in JSON at position 12`, on newer V8 followed by ` (line 3 column 3)`. */
const AT_POSITION = / in JSON at position (\d+)(?: \(line \d+ column \d+\))?$/;

/**
 * Where `text` breaks, from `error`, what `JSON.parse(text)` threw: its reason and position when
 * V8 names them; the end of `text` for `Unexpected end of JSON input`; else (an unexpected token)
 * the first error `jsonc-parser` finds, the reason `unexpected character "x"`. Undefined when
 * `error` is not a JSON syntax error of `text` with a position either way.
 */
export function jsonSyntaxError(error: unknown, text: string): JsonSyntaxError | undefined {
  const message = error instanceof SyntaxError ? error.message : '';
  if (!message) return undefined;
  const at = AT_POSITION.exec(message);
  if (at) return located(text, Number(at[1]), lowerFirst(message.slice(0, at.index)));
  if (/^Unexpected end of JSON input/.test(message)) return located(text, text.length, 'the body ends before its JSON value is complete');
  const position = firstScanError(text);
  if (position === undefined) return undefined;
  const found = text.codePointAt(position);
  return located(text, position, found === undefined ? 'unexpected end' : `unexpected character ${quoteInput(String.fromCodePoint(found))}`);
}

/**
 * The message of a `malformed_json` answer: `<what> is not valid JSON`, with where it breaks when
 * {@link jsonSyntaxError} finds it: `request body is not valid JSON: expected ',' or '}' after property
 * value at line 3, column 3 (position 12)`.
 */
export function malformedJsonMessage(what: string, error: unknown, text: string | undefined): string {
  const broken = typeof text === 'string' ? jsonSyntaxError(error, text) : undefined;
  if (!broken) return `${what} is not valid JSON`;
  return `${what} is not valid JSON: ${broken.reason} at line ${broken.line}, column ${broken.column} (position ${broken.position})`;
}

/** `reason` at `position` of `text`, with its line and column; undefined when `position` is not in `text` (0 to its length). */
function located(text: string, position: number, reason: string): JsonSyntaxError | undefined {
  if (!Number.isSafeInteger(position) || position < 0 || position > text.length) return undefined;
  return { reason, position, ...lineAndColumn(text, position) };
}

/**
 * The line and column of `position` (0-based, in UTF-16 code units, from 0 to `text.length`) in
 * `text`, as the `malformed_json` answers name them: the line 1-based (lines end at `\n`), the
 * column 1-based in characters (Unicode code points). Linear in `position`.
 */
export function lineAndColumn(text: string, position: number): { line: number; column: number } {
  const lineStart = text.lastIndexOf('\n', position - 1) + 1;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < lineStart; i = text.indexOf('\n', i + 1)) line++;
  let column = 1;
  for (let i = lineStart; i < position; i++) {
    const unit = text.charCodeAt(i);
    // The second half of a surrogate pair is the same character as the first.
    if (!(unit >= 0xdc00 && unit <= 0xdfff && i > lineStart && isHighSurrogate(text.charCodeAt(i - 1)))) column++;
  }
  return { line, column };
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

function lowerFirst(s: string): string {
  return s.charAt(0).toLowerCase() + s.slice(1);
}

/** Offset of the first error `jsonc-parser` finds in `text` read as strict JSON; undefined when it finds none. */
function firstScanError(text: string): number | undefined {
  let offset: number | undefined;
  visit(
    text,
    {
      onError: (_code, at) => {
        offset ??= at;
      },
    },
    { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false },
  );
  return offset;
}
