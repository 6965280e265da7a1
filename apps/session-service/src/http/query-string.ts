/**
 * Query strings, for every route: parsed once by the router ({@link parseQueryString}, Fastify's
 * `querystringParser`) and checked once ({@link answerBadQueryEncoding}): a query parameter whose
 * name or value is not valid percent-encoded UTF-8 (`q=zeta%FF`, an encoded lone surrogate such as
 * `%ED%A0%80`) is answered 400 `invalid_query_encoding` naming it, before any guard or handler
 * runs. The router's own parser kept such a value as its raw text (`zeta%FF`), so a search or a
 * filter silently matched nothing; the same bytes in a path are 400 `invalid_path`.
 */
import type { FastifyInstance } from 'fastify';
import { quoteInput } from '@lib/compaction';
import type { ApiErrorBody } from './api-error.filter';

/** Query parameters as the router hands them to handlers: a parameter given more than once is an array, in order. */
export type ParsedQuery = Record<string, string | string[]>;

/** The first query parameter of a parsed query that could not be decoded: how it is named in the answer, and whether its name or its value is at fault. */
interface BadlyEncoded {
  parameter: string;
  part: 'name' | 'value';
}

/** Parsed queries holding a parameter that could not be decoded (read by {@link answerBadQueryEncoding}). */
const badlyEncoded = new WeakMap<object, BadlyEncoded>();

/** `text` with `+` read as a space and percent-escapes decoded as UTF-8, or null when an escape is not valid UTF-8 (or is a lone `%`). */
function decodeComponent(text: string): string | null {
  const spaced = text.includes('+') ? text.replace(/\+/g, ' ') : text;
  if (!spaced.includes('%')) return spaced;
  try {
    // decodeURIComponent refuses malformed escapes, bytes that are not UTF-8 and encoded surrogates (URIError).
    return decodeURIComponent(spaced);
  } catch {
    return null;
  }
}

/**
 * Parses a query string (the text after `?`, without it) as the router did (`a=1&b=&c&a=2` →
 * `{ a: ['1', '2'], b: '', c: '' }`; `+` is a space; empty pairs are skipped), into an object
 * without prototype (a `__proto__` parameter is an ordinary key). A name or value that is not
 * valid percent-encoded UTF-8 is kept as sent and recorded, for {@link badQueryEncodingOf}.
 */
export function parseQueryString(text: string): ParsedQuery {
  const query = Object.create(null) as ParsedQuery;
  if (text.length === 0) return query;
  let bad: BadlyEncoded | undefined;
  for (const pair of text.split('&')) {
    if (pair.length === 0) continue;
    const equals = pair.indexOf('=');
    const rawName = equals < 0 ? pair : pair.slice(0, equals);
    const rawValue = equals < 0 ? '' : pair.slice(equals + 1);
    const name = decodeComponent(rawName);
    const value = decodeComponent(rawValue);
    if (!bad && name === null) bad = { parameter: rawName, part: 'name' };
    else if (!bad && value === null) bad = { parameter: name ?? rawName, part: 'value' };
    const key = name ?? rawName;
    const current = query[key];
    const item = value ?? rawValue;
    if (current === undefined) query[key] = item;
    else if (Array.isArray(current)) current.push(item);
    else query[key] = [current, item];
  }
  if (bad) badlyEncoded.set(query, bad);
  return query;
}

/**
 * The 400 `invalid_query_encoding` answer's body for a query parsed by {@link parseQueryString}
 * whose first undecodable parameter (name or value) it names (`parameter`), or null when every
 * parameter decoded.
 */
export function badQueryEncodingOf(query: unknown): ApiErrorBody | null {
  if (query === null || typeof query !== 'object') return null;
  const bad = badlyEncoded.get(query);
  if (!bad) return null;
  const what = bad.part === 'name' ? 'this query parameter name' : 'its value';
  return {
    code: 'invalid_query_encoding',
    message: `${quoteInput(bad.parameter, { quoted: false })}: ${what} is not valid percent-encoded UTF-8: percent-encode the UTF-8 bytes of the text (e.g. with encodeURIComponent or URLSearchParams: "é" is %C3%A9, a literal "%" is %25)`,
    parameter: bad.parameter,
  };
}

/**
 * Makes `app` answer 400 {@link badQueryEncodingOf} to a request whose query string has a
 * parameter that is not valid percent-encoded UTF-8 (an `onRequest` hook: before guards and
 * handlers, on every route; counted and logged like other answers). Use with
 * {@link parseQueryString} as the router's `querystringParser`.
 */
export function answerBadQueryEncoding(app: FastifyInstance): void {
  app.addHook('onRequest', (request, reply, done) => {
    const answer = badQueryEncodingOf(request.query);
    if (!answer) return done();
    void reply.code(400).send(answer);
  });
}
