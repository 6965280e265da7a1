/**
 * Which `Host` names open development mode (no `API_KEYS`) answers: the defence against DNS
 * rebinding, where a web page the developer visits points its own name at 127.0.0.1 and then reads
 * and erases sessions with same-origin requests (the browser sends that name as `Host`).
 *
 * Always answered: `localhost` and names under `.localhost` (RFC 6761: they resolve to the loopback
 * only), and any IP address literal (`127.0.0.1`, `[::1]`, a pod or container IP a probe uses): an
 * address is not a name an attacker's DNS can rebind (the rule Vite and webpack-dev-server follow).
 * Other names only when listed in `ALLOWED_HOSTS` (comma-separated; `.example.com` allows that name
 * and every name under it). The port is not compared.
 */
import { isIP } from 'node:net';
import { ConfigurationError } from './configuration-error';

/**
 * One label of a host name: letters, digits, hyphens and underscores, not starting or ending with a
 * hyphen, 1 to 63 characters. Underscores are not in RFC 952's host names, but DNS carries them and
 * Docker Compose service names use them (`session_service`), which Docker's DNS resolves.
 */
const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * Whether `name` (lower case, no trailing dot) is a host name of labels ({@link LABEL}) at most 253
 * characters long: the one rule both `ALLOWED_HOSTS` entries and `Host` headers ({@link hostNameOf}) are read by.
 */
export function isHostName(name: string): boolean {
  return name.length > 0 && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

/**
 * `ALLOWED_HOSTS`: unset or empty → none; else comma-separated host names (without port, compared
 * without case), each a name or `.name` (that name and every name under it).
 * @returns the entries, lower case, without a trailing dot
 * @throws ConfigurationError naming the first entry that is not a host name (an address needs no entry; a port or scheme is refused)
 */
export function parseAllowedHosts(value: string | undefined): string[] {
  const text = value?.trim() ?? '';
  if (text === '') return [];
  return text.split(',').map((raw) => {
    const entry = raw.trim().toLowerCase().replace(/\.$/, '');
    const name = entry.startsWith('.') ? entry.slice(1) : entry;
    if (!isHostName(name))
      throw new ConfigurationError({
        variable: 'ALLOWED_HOSTS',
        value: value!,
        problem: `${JSON.stringify(raw.trim())} is not a host name`,
        fix: 'list host names without scheme or port, comma-separated (e.g. sessions.internal,.dev.example.com; a leading dot allows the names under it); IP addresses and localhost need no entry',
      });
    return entry;
  });
}

/**
 * The host name of a `Host` header value (lower case, without the port, the brackets of an IPv6
 * address, or a trailing dot), or `undefined` when the value is not `name[:port]` or `[v6][:port]`.
 * The port is RFC 3986's `*DIGIT` (at most 5 digits here): it may be empty (`name:` is `name`). The
 * name is an IPv4 address or a host name by {@link isHostName} (the rule `ALLOWED_HOSTS` is read by,
 * so that the name a 403 tells to list is one `ALLOWED_HOSTS` takes).
 * This is the one rule that reads a Host header: the check, its 403 message and its log line use it.
 */
export function hostNameOf(header: string): string | undefined {
  const value = header.trim().toLowerCase();
  const bracketed = /^\[([0-9a-f:.]+)\](?::\d{0,5})?$/.exec(value);
  if (bracketed) return isIP(bracketed[1]) === 6 ? bracketed[1] : undefined;
  const plain = /^([^:[\]]+)(?::\d{0,5})?$/.exec(value);
  if (!plain) return undefined;
  const name = plain[1].replace(/\.$/, '');
  return isIP(name) !== 0 || isHostName(name) ? name : undefined;
}

/**
 * Whether open development mode answers a request whose `Host` header is `header` (see the module
 * documentation): localhost, `*.localhost`, an IP address, or a name `allowedHosts`
 * ({@link parseAllowedHosts}) lists. A missing header is allowed (only HTTP/1.0 may omit it, and browsers never do).
 */
export function isAllowedHost(header: string | undefined, allowedHosts: readonly string[]): boolean {
  if (header === undefined) return true;
  const name = hostNameOf(header);
  if (name === undefined) return false;
  if (isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  return allowedHosts.some((entry) => (entry.startsWith('.') ? name === entry.slice(1) || name.endsWith(entry) : name === entry));
}
