import { hash } from 'node:crypto';

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Namespace used by {@link deterministicEventId} when the given namespace is not itself a UUID
 * (a fixed, random UUID owned by this project; never change it, or retries across a deploy stop
 * being idempotent).
 */
export const EVENT_ID_NAMESPACE = '6f1c2b9e-4d7a-4e0b-9a35-3c8e5f2d71a4';

/** True when `value` is a UUID in RFC 4122 text form (any version, case-insensitive). */
export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex');
}

/** The hex digit of byte 8's high nibble after RFC 4122's variant bits are set (`(b & 0x3f) | 0x80`), by the nibble's value. */
const VARIANT_NIBBLE = '89ab89ab89ab89ab';

/**
 * The RFC 4122 version 5 UUID of `name` (UTF-8) in `namespace` (16 bytes), lowercase text form.
 * One-shot `crypto.hash` over namespace and name in one buffer: a `createHash` object per id cost
 * several times as much (it is a stream). The version and variant bits are set on the hex digits.
 */
function uuidV5(namespace: Buffer, name: string): string {
  const input = Buffer.allocUnsafe(16 + Buffer.byteLength(name, 'utf8'));
  namespace.copy(input, 0);
  input.write(name, 16, 'utf8');
  const h = hash('sha1', input, 'hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${VARIANT_NIBBLE[parseInt(h[16], 16)]}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * A deterministic event id: the RFC 4122 UUID version 5 (SHA-1) of `name` in `namespace`,
 * lowercase text form. The same (namespace, name, incarnation) always gives the same UUID, so a
 * retried request derives the same event ids and the store treats the retry as idempotent.
 *
 * `namespace` may be a UUID (used as is, as RFC 4122 specifies) or any other string, e.g. a
 * session id: it is then first mapped to the UUID v5 of that string in {@link EVENT_ID_NAMESPACE}.
 *
 * `incarnation` (bigint >= 0n, default 0n) is the incarnation of the stream the event goes to, as
 * `EventStore.streamIncarnation` reads it: the revision at which the stream's current life
 * starts, 0n for a stream never erased. With 0n the id is the one this function always gave (ids of
 * streams never erased do not change, so retries across a deploy stay idempotent). With any other
 * value the namespace is first mapped to the UUID v5 of `incarnation\u0000<n>` in it, so no id of one
 * incarnation is an id of another: a stream erased and written again with the same names gets new
 * ids (KurrentDB keeps a soft-deleted stream's ids and would take an append of them for a replay
 * of the erased events, answering success without writing; kurrent-io/KurrentDB#4058), while a
 * retry within one incarnation derives the same ids. This is the one rule for deterministic ids:
 * every caller passes the incarnation it read with the state it decided on.
 *
 * Typical use: `deterministicEventId(namespace, sessionId + "\u0000" + clientMessageId, incarnation)`.
 * Pure.
 * @throws RangeError when `incarnation` is negative.
 */
export function deterministicEventId(namespace: string, name: string, incarnation = 0n): string {
  if (incarnation < 0n) throw new RangeError(`incarnation must be >= 0n, got ${incarnation}`);
  const base = namespaceBytes(namespace);
  return uuidV5(incarnation === 0n ? base : uuidBytes(uuidV5(base, `incarnation\u0000${incarnation}`)), name);
}

/**
 * Every id {@link deterministicEventId} has given `name` in `namespace` for the stream life
 * `incarnation` over this project's history, the current form first (`[0]` is
 * `deterministicEventId(namespace, name, incarnation)`, the id to write):
 * - builds up to 3771ca3 (2026-12-01) derived ids without the incarnation (the 0n formula), also
 *   for a stream written again after a deletion (builds from e92296e kept its revisions, so such a
 *   life starts past 0n); for `incarnation > 0n` that form is the second element;
 * - for `incarnation` 0n both forms are one id: a one-element array.
 * (Policy events before 2219370 had random ids: nothing derives them, and a policy PUT is
 * idempotent by its content.) An event stored under a former form is the same event only in the
 * same life of the same stream: see `storedRowOf` (idempotent-retry), the one rule the stores apply.
 * Pure. @throws RangeError when `incarnation` is negative.
 */
export function deterministicEventIdForms(namespace: string, name: string, incarnation = 0n): string[] {
  const current = deterministicEventId(namespace, name, incarnation);
  return incarnation === 0n ? [current] : [current, deterministicEventId(namespace, name, 0n)];
}

/** Namespaces already mapped to their UUID bytes (a service uses a handful; cleared past {@link MAX_REMEMBERED_NAMESPACES}). */
const namespaces = new Map<string, Buffer>();
const MAX_REMEMBERED_NAMESPACES = 1024;

/** The 16 bytes of `namespace` as {@link deterministicEventId} uses it (computed once per namespace: one SHA-1 fewer per id). */
function namespaceBytes(namespace: string): Buffer {
  let bytes = namespaces.get(namespace);
  if (bytes === undefined) {
    bytes = isUuid(namespace) ? uuidBytes(namespace) : uuidBytes(uuidV5(uuidBytes(EVENT_ID_NAMESPACE), namespace));
    if (namespaces.size >= MAX_REMEMBERED_NAMESPACES) namespaces.clear();
    namespaces.set(namespace, bytes);
  }
  return bytes;
}
