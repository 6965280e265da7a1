/**
 * Who ordered a command, as its decision, erasure record or policy event keeps it for the audit
 * (newcomer ncretention A4; policy events since 2026-12-07, newcomer ncui74 F1): never the API key
 * itself. Absent on automatic compactions (`origin: 'auto'`, their `trigger` says why, their
 * `policyRevision` the policy event that names who set the policy) and on records written before
 * it was recorded.
 */
export interface RequestedBy {
  /**
   * The API key that sent it, by its position in `API_KEYS` (`API_KEYS#2`: the second entry),
   * never the key; absent in open development mode (no keys).
   */
  keyLabel?: string;
  /** HTTP: the request's id (the client's `X-Request-Id`, else one the service made: a write with an unusable one is refused); NATS: the command's id. */
  requestId?: string;
  /**
   * HTTP: who chose `requestId`: `client` (the request's own `X-Request-Id`, any text a client
   * sends: not evidence of anything) or `service` (an id the service made, a random UUID, for a
   * request without the header; before 2026-12-05 also for one with an unusable id).
   * Absent over NATS (the id is the command's `Nats-Msg-Id`, the publisher's, or one derived from
   * its stream sequence) and in records written before it was.
   */
  requestIdFrom?: 'client' | 'service';
  /** The transport that carried the command. */
  via: 'http' | 'nats';
}

/**
 * The {@link RequestedBy} of a stored record's `requestedBy`, with only its known fields (so a read
 * model keeps nothing else a record might carry); null when `value` is absent or has no `via` of
 * `http`/`nats` (records written before it was recorded). Pure.
 */
export function requestedByOf(value: unknown): RequestedBy | null {
  if (typeof value !== 'object' || value === null) return null;
  const r = value as Record<string, unknown>;
  if (r.via !== 'http' && r.via !== 'nats') return null;
  const out: RequestedBy = { via: r.via };
  if (typeof r.keyLabel === 'string') out.keyLabel = r.keyLabel;
  if (typeof r.requestId === 'string') out.requestId = r.requestId;
  if (r.requestIdFrom === 'client' || r.requestIdFrom === 'service') out.requestIdFrom = r.requestIdFrom;
  return out;
}
