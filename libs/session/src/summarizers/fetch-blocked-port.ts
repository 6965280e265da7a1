/**
 * Ports the Fetch standard forbids (https://fetch.spec.whatwg.org/#port-blocking, "bad port"):
 * Node's `fetch` (undici), which the `openai` client uses, rejects a request to one of them with
 * `fetch failed` (cause `bad port`) before it connects, on every attempt. Checked at start-up so
 * that an `OPENAI_BASE_URL` on such a port is refused then, not reported as a lost connection after
 * every retry of every call (newcomer ncverify48 F4). The spec
 * `fetch-blocked-port.spec.ts` checks each against Node's `fetch`.
 */
export const FETCH_BLOCKED_PORTS: ReadonlySet<number> = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137,
  139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049,
  3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

/**
 * The port `url` (an http(s) URL) is fetched on when `fetch` would refuse it, else `undefined`. The
 * scheme's default port (80, 443) never is. Pure.
 */
export function fetchBlockedPort(url: URL): number | undefined {
  if (url.port === '') return undefined;
  const port = Number(url.port);
  return FETCH_BLOCKED_PORTS.has(port) ? port : undefined;
}
