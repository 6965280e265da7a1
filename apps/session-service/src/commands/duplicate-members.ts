/**
 * Request bodies whose objects repeat a member name (newcomer ncverify50 F1). `JSON.parse` keeps the
 * last of `{"events": […A…], "events": […B…]}` and drops A without a word, while other parsers keep
 * the first or refuse (RFC 8259 §4: names SHOULD be unique; RFC 7493, I-JSON: MUST). The service
 * refuses ambiguous input everywhere else (a query parameter given twice, two Host headers, two
 * Content-Type lines), so a body holding such an object is refused too: 400 `malformed_json`, over
 * HTTP and NATS alike, before anything is validated or written.
 *
 * The check runs on a text `JSON.parse` has accepted, and on the value it made: the members of the
 * text's objects are counted in one pass that jumps from quote to quote with `indexOf`, allocating
 * nothing ({@link countMembers}), and the keys of the value's objects in one walk ({@link countKeys});
 * only when the value holds fewer keys is the text searched again for the name given twice, to say
 * which and where ({@link findDuplicateMember}).
 */
import { quoteInput } from '@lib/compaction';
import { lineAndColumn } from './json-syntax-error';
import { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, COMMA, OPEN_BRACE, OPEN_BRACKET, QUOTE } from './json-text-codes';

/** A member name given twice in one object of a JSON text (see {@link findDuplicateMember}). */
export interface DuplicateMember {
  /** The name, unescaped (`"\u0061"` is `a`). */
  name: string;
  /**
   * The path of the second member, as validation names fields: `events[0].text`, `[2].a` in a
   * top-level array, `userId` at the top level; each name cut as error messages quote them.
   */
  path: string;
  /** Offset of the second member's opening quote, 0-based, in UTF-16 code units of the text (as `JSON.parse` counts). */
  position: number;
  /** Line of `position`, 1-based. */
  line: number;
  /** Column of `position`, 1-based, in characters (Unicode code points), as the other `malformed_json` answers count. */
  column: number;
  /** Line and column of the first member of that name in the same object. */
  first: { line: number; column: number };
}

/**
 * Offset of the quote closing the JSON string whose opening quote is at `open` in `text`; -1 when
 * none does (not JSON). Jumps from quote to quote (`indexOf`); a quote after an odd run of
 * backslashes is escaped. Each run is read once, so a text's strings are ended in linear time.
 */
function stringEnd(text: string, open: number): number {
  let close = text.indexOf('"', open + 1);
  while (close !== -1 && text.charCodeAt(close - 1) === BACKSLASH) {
    // The opening quote ends the run at the latest.
    let run = 1;
    while (text.charCodeAt(close - 1 - run) === BACKSLASH) run++;
    if (run % 2 === 0) break;
    close = text.indexOf('"', close + 1);
  }
  return close;
}

/** Offset of the first unit of `text` from `at` on that is not JSON whitespace (space, tab, line feed, carriage return); `text.length` when none. */
function skipSpace(text: string, at: number): number {
  for (; at < text.length; at++) {
    const unit = text.charCodeAt(at);
    if (unit !== 0x20 && unit !== 0x0a && unit !== 0x0d && unit !== 0x09) break;
  }
  return at;
}

/** The unescaped name of the JSON string from `open` to `close` (its quotes in `text`). */
function nameOf(text: string, open: number, close: number): string {
  const name = text.slice(open + 1, close);
  return name.includes('\\') ? (JSON.parse(text.slice(open, close + 1)) as string) : name;
}

/**
 * How many members the objects of `text` (a JSON text `JSON.parse` accepted) hold in all, a name
 * given twice counted twice: its strings followed by a colon. Allocates nothing; one native search
 * per string, plus one per escaped quote.
 */
export function countMembers(text: string): number {
  let members = 0;
  for (let open = text.indexOf('"'); open !== -1;) {
    const close = stringEnd(text, open);
    if (close === -1) break;
    const after = skipSpace(text, close + 1);
    if (text.charCodeAt(after) === COLON) members++;
    open = text.indexOf('"', after);
  }
  return members;
}

/**
 * How many keys the objects of `value` (as `JSON.parse` makes it: arrays, plain objects and
 * primitives) hold in all, at any depth, each name once per object. Iterative, so as deep as the
 * bodies the service reads (10,000 levels).
 */
export function countKeys(value: unknown): number {
  let keys = 0;
  const pending: object[] = [];
  if (value !== null && typeof value === 'object') pending.push(value);
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (Array.isArray(next)) {
      for (let i = 0; i < next.length; i++) {
        const element: unknown = next[i];
        if (element !== null && typeof element === 'object') pending.push(element);
      }
      continue;
    }
    for (const key in next) {
      keys++;
      const member: unknown = (next as Record<string, unknown>)[key];
      if (member !== null && typeof member === 'object') pending.push(member);
    }
  }
  return keys;
}

/**
 * The first member of `text` (a JSON text `JSON.parse` accepted) whose object already holds a member
 * of the same name, compared after unescaping (`"\u0061"` is `"a"`), at any depth; undefined when
 * the names of every object differ. Linear in `text` (a string and a map entry per member); on a
 * text that is not JSON it returns without throwing, having found what it found.
 */
export function findDuplicateMember(text: string): DuplicateMember | undefined {
  // `seen[d]`: the names of the open object at object depth d, each with its opening quote's offset; one map per depth, reused.
  const seen: Map<string, number>[] = [];
  let depth = -1;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit === QUOTE) {
      const close = stringEnd(text, i);
      if (close === -1) return undefined;
      const after = skipSpace(text, close + 1);
      if (depth >= 0 && text.charCodeAt(after) === COLON) {
        const name = nameOf(text, i, close);
        const first = seen[depth].get(name);
        if (first !== undefined) return duplicateAt(text, name, i, first);
        seen[depth].set(name, i);
        i = after;
      } else i = close;
    } else if (unit === OPEN_BRACE) {
      depth++;
      if (depth === seen.length) seen.push(new Map());
      else seen[depth].clear();
    } else if (unit === CLOSE_BRACE) depth--;
  }
  return undefined;
}

/** The {@link DuplicateMember} `name` of `text` whose second member opens at `position` and first at `first`. */
function duplicateAt(text: string, name: string, position: number, first: number): DuplicateMember {
  return { name, path: pathOf(text, position), position, ...lineAndColumn(text, position), first: lineAndColumn(text, first) };
}

/**
 * The path of the member whose name's opening quote is at `position` of `text` (JSON), as
 * {@link DuplicateMember.path} says: a second pass up to it, following the member names and element
 * indices of the objects and arrays it is in. Run only when a duplicate was found.
 */
function pathOf(text: string, position: number): string {
  // One entry per open container: its current member's name (an object) or element's index (an array).
  const at: Array<string | number> = [];
  for (let i = 0; i < position; i++) {
    const unit = text.charCodeAt(i);
    if (unit === QUOTE) {
      const close = stringEnd(text, i);
      if (close === -1) break;
      if (typeof at[at.length - 1] === 'string' && text.charCodeAt(skipSpace(text, close + 1)) === COLON) at[at.length - 1] = nameOf(text, i, close);
      i = close;
    } else if (unit === OPEN_BRACE) at.push('');
    else if (unit === OPEN_BRACKET) at.push(0);
    else if (unit === CLOSE_BRACE || unit === CLOSE_BRACKET) at.pop();
    else if (unit === COMMA && typeof at[at.length - 1] === 'number') (at[at.length - 1] as number)++;
  }
  at[at.length - 1] = nameOf(text, position, stringEnd(text, position));
  let path = '';
  for (const part of at) path += typeof part === 'number' ? `[${part}]` : `${path ? '.' : ''}${quoteInput(part, { quoted: false })}`;
  return path;
}

/**
 * The message of the `malformed_json` answer to a body holding `duplicate` (`what`: `request body`
 * over HTTP, `message body` over NATS), e.g. `request body gives the member "text" twice in one
 * object, at events[0].text: first at line 1, column 30, again at line 1, column 58 (position 57);
 * send each member once (JSON parsers differ on which one they keep)`.
 */
export function duplicateMemberMessage(what: string, duplicate: DuplicateMember): string {
  const { name, path, position, line, column, first } = duplicate;
  return (
    `${what} gives the member ${quoteInput(name)} twice in one object, at ${path}: first at line ${first.line}, column ${first.column}, ` +
    `again at line ${line}, column ${column} (position ${position}); send each member once (JSON parsers differ on which one they keep)`
  );
}

/** Thrown by {@link rejectDuplicateMembers}; answered 400 `malformed_json` with its message, over HTTP and NATS. */
export class DuplicateMemberError extends Error {
  override readonly name = 'DuplicateMemberError';

  /** `what`: the body, as the message names it (`request body`, `message body`). */
  constructor(
    what: string,
    readonly duplicate: DuplicateMember,
  ) {
    super(duplicateMemberMessage(what, duplicate));
  }
}

/**
 * Throws {@link DuplicateMemberError} when `text`, the body of a request (`what`: `request body` or
 * `message body`) that `JSON.parse` read as `value`, holds an object giving a member name twice: the
 * one check of HTTP and NATS bodies. The objects of `value` then hold fewer keys than `text` has
 * members ({@link countMembers}, {@link countKeys}: no string made; under a microsecond for a
 * 300-byte append); only then is the text searched for the name ({@link findDuplicateMember}).
 */
export function rejectDuplicateMembers(text: string, value: unknown, what: string): void {
  if (value === null || typeof value !== 'object' || countMembers(text) === countKeys(value)) return;
  const duplicate = findDuplicateMember(text);
  if (duplicate !== undefined) throw new DuplicateMemberError(what, duplicate);
}
