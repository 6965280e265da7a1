/**
 * The one shape of every start-up refusal of a setting (the service's `configuration error: …`
 * line, the summarizer's settings, the read-model rebuild's): `NAME=<value>: <what is wrong>:
 * <what to fix>`, e.g. `PORT="70000": out of range: use a TCP port (0 picks a free one), an integer
 * from 0 to 65535`. Every refusal is made by {@link configurationRefusalMessage}, so none can take
 * another shape or show a secret.
 */
import { graphemeBoundary } from '@lib/compaction';
import { withoutCredentials } from '@lib/event-store';

/**
 * How a refused value's secrets are hidden: `url`, a URL or connection string with its credentials
 * masked (`user:***@host`, `password=***`, see `withoutCredentials`); `url-list`, a comma-separated
 * list of them (`NATS_URL`); `endpoint-url`, a model endpoint's URL (`OPENAI_BASE_URL`): its
 * credentials and the value of every query parameter, whatever its name (`?api-version=***&sig=***`);
 * `secret`, the whole value (`***`: `API_KEYS`).
 */
export type RefusedValueMask = 'url' | 'url-list' | 'endpoint-url' | 'secret';

/** A setting the process refuses to start with. */
export interface ConfigurationRefusal {
  /** The environment variable, e.g. `PORT`. */
  readonly variable: string;
  /**
   * Its value as given (a number as parsed, e.g. a `PORT` the server could not listen on; a path
   * as resolved against the working directory, e.g. `DATA_DIR`, so that the message says where).
   */
  readonly value: string | number;
  /** What is wrong with it, e.g. `not a URL`, `out of range`. */
  readonly problem: string;
  /** What to do instead, naming the accepted values or range, e.g. `use an integer from 0 to 65535`. */
  readonly fix: string;
  /** How its secrets are hidden; shown as given when absent. */
  readonly mask?: RefusedValueMask;
}

/** Most characters (Unicode code points) of a value a refusal shows; a longer one is cut, with its length. */
export const MAX_SHOWN_VALUE_LENGTH = 200;

/** Control, format and line/paragraph separator characters: escaped in quotes, never shown bare. */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;
const INVISIBLE_ALL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * `refusal` as one line: `NAME=<value>: <problem>: <fix>`. The value is masked as `refusal.mask`
 * says, cut after {@link MAX_SHOWN_VALUE_LENGTH} characters or fewer, on a grapheme cluster boundary (`…` and ` (N characters)` follow), and
 * shown bare unless that would blur what was given: an empty value, one holding white space (where
 * it ends would be unclear) or a control or other invisible character, or one starting with `"`, is
 * shown as a JSON string (`PORT=""`, `PORT=" 80"`, `DATA_DIR="/srv/my data"`, invisible characters as `\uXXXX`).
 */
export function configurationRefusalMessage(refusal: ConfigurationRefusal): string {
  return `${refusal.variable}=${shownValue(refusal)}: ${refusal.problem}: ${refusal.fix}`;
}

/** The value of `refusal` as {@link configurationRefusalMessage} shows it. */
function shownValue({ value, mask }: ConfigurationRefusal): string {
  const given = String(value);
  const masked =
    mask === 'secret'
      ? '***'
      : mask === 'url'
        ? withoutCredentials(given)
        : mask === 'url-list'
          ? withoutCredentials(given, { list: true })
          : mask === 'endpoint-url'
            ? withoutCredentials(given, { everyQueryValue: true })
            : given;
  const points = Array.from(masked);
  const shownUnits = points.slice(0, MAX_SHOWN_VALUE_LENGTH).join('').length;
  const cut = points.length > MAX_SHOWN_VALUE_LENGTH ? `${masked.slice(0, graphemeBoundary(masked, shownUnits, 'before'))}…` : masked;
  const length = points.length > MAX_SHOWN_VALUE_LENGTH ? ` (${points.length} characters)` : '';
  const bare = cut !== '' && !/^"|\s/.test(cut) && !INVISIBLE.test(cut);
  return `${bare ? cut : jsonQuote(cut)}${length}`;
}

/** JSON string literal of `s`, with every invisible character escaped (JSON.stringify leaves U+007F–U+009F, U+2028 and format characters bare). */
function jsonQuote(s: string): string {
  return JSON.stringify(s).replace(INVISIBLE_ALL, (c) =>
    Array.from({ length: c.length }, (_, i) => `\\u${c.charCodeAt(i).toString(16).padStart(4, '0')}`).join(''),
  );
}
