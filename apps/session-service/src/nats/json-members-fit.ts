/**
 * The one rule by which a NATS message that would exceed the server's `max_payload` is made to fit
 * (the decisions feed's decisions, the command answers): a message the server refuses is retried,
 * so one that can never fit would be retried for ever and hold the messages behind it.
 */

/** What {@link fitMembers} may leave out of an object, and what never. */
export interface MemberFit {
  /** Members left out all at once first, when the whole does not fit (the lists that grow with a session's window), in this order in `omitted`. */
  listsFirst: readonly string[];
  /** Members never left out: what a reader needs to tell what the message is and to fetch the rest over HTTP. Each must be bounded. */
  neverOmitted: readonly string[];
}

/** UTF-8 bytes of `value` as JSON. */
function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * The bytes `encode` makes of `members` (an object's members) in at most `limit` bytes when it can:
 * 1. all of them, when that fits (`omitted` then empty: `encode` may leave it out);
 * 2. else without every member of `fit.listsFirst` present, all at once;
 * 3. and while that does not fit either, without its other members one by one, the largest first
 *    (bytes of `"name":value` as JSON; equal sizes by name), never those of `fit.neverOmitted`.
 * `encode(kept, omitted)` gets the members kept (in their order) and the names left out (in the order
 * they were left out), and makes the message body. When even the smallest form does not fit (a
 * `limit` below it), that form is returned. Pure when `encode` is; O(members) encodings at most.
 */
export function fitMembers(
  members: Record<string, unknown>,
  limit: number,
  fit: MemberFit,
  encode: (kept: Record<string, unknown>, omitted: string[]) => Uint8Array,
): Uint8Array {
  const whole = encode(members, []);
  if (whole.length <= limit) return whole;
  const present = Object.entries(members).filter(([, value]) => value !== undefined);
  const omitted = fit.listsFirst.filter((name) => present.some(([member]) => member === name));
  const kept = new Map(present.filter(([name]) => !omitted.includes(name)));
  const encodeKept = () => encode(Object.fromEntries(kept), omitted);
  let payload = encodeKept();
  if (payload.length <= limit) return payload;
  const largestFirst = [...kept]
    .filter(([name]) => !fit.neverOmitted.includes(name))
    .map(([name, value]) => ({ name, bytes: jsonBytes(name) + 1 + jsonBytes(value) }))
    .sort((a, b) => b.bytes - a.bytes || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const { name } of largestFirst) {
    kept.delete(name);
    omitted.push(name);
    payload = encodeKept();
    if (payload.length <= limit) return payload;
  }
  return payload;
}
