/**
 * Who ordered a command, as its decision or erasure record keeps it for the audit (newcomer
 * ncretention A4): never the API key itself. Absent on automatic compactions (`origin: 'auto'`,
 * their `trigger` says why) and on records written before it was recorded.
 */
export interface RequestedBy {
  /**
   * The API key that sent it, by its position in `API_KEYS` (`API_KEYS#2`: the second entry),
   * never the key; absent in open development mode (no keys).
   */
  keyLabel?: string;
  /** HTTP: the request's id (the client's `X-Request-Id` when usable, else one the service made); NATS: the command's id. */
  requestId?: string;
  /** The transport that carried the command. */
  via: 'http' | 'nats';
}
