import fc from 'fast-check';
import { hostNameOf, isAllowedHost, parseAllowedHosts } from './allowed-hosts';
import { loadServiceConfig } from './service-config';

describe('ALLOWED_HOSTS (open mode against DNS rebinding)', () => {
  it('reads comma-separated names in lower case, without a trailing dot; unset or blank is none', () => {
    expect(parseAllowedHosts(undefined)).toEqual([]);
    expect(parseAllowedHosts('  ')).toEqual([]);
    expect(parseAllowedHosts('Sessions.Internal, .dev.example.com.,box')).toEqual(['sessions.internal', '.dev.example.com', 'box']);
    expect(loadServiceConfig({ ALLOWED_HOSTS: 'box' }, false).allowedHosts).toEqual(['box']);
    expect(loadServiceConfig({}, false).allowedHosts).toEqual([]);
  });

  it.each(['http://box', 'box:3000', 'a b', '*', 'box,,other', '-box', '.'])(
    'refuses ALLOWED_HOSTS=%s at start, naming the entry and what to list',
    (value) => {
      expect(() => loadServiceConfig({ ALLOWED_HOSTS: value }, false)).toThrow(/^ALLOWED_HOSTS=.*is not a host name: list host names without scheme or port/);
    },
  );

  it('takes the host name out of a Host header: port, brackets and trailing dot dropped, case folded', () => {
    expect(hostNameOf('LocalHost:3000')).toBe('localhost');
    expect(hostNameOf('[::1]:8080')).toBe('::1');
    expect(hostNameOf('example.com.')).toBe('example.com');
    expect(hostNameOf('::1')).toBeUndefined();
    expect(hostNameOf('a:b:c')).toBeUndefined();
    expect(hostNameOf('[zz]:1')).toBeUndefined();
  });

  it('reads an empty port (RFC 3986: port = *DIGIT) as no port: `name:` is `name`, by the one Host rule the check uses', () => {
    expect(hostNameOf('session-service:')).toBe('session-service');
    expect(hostNameOf('[::1]:')).toBe('::1');
    const allowed = parseAllowedHosts('session-service');
    for (const host of ['session-service:', 'Session-Service.:', 'localhost:', '127.0.0.1:', '[::1]:'])
      expect({ host, ok: isAllowedHost(host, allowed) }).toEqual({ host, ok: true });
    for (const host of ['other:', 'session-service::', 'session-service:123456'])
      expect({ host, ok: isAllowedHost(host, allowed) }).toEqual({ host, ok: false });
  });

  it.each(['localhost', 'localhost:3000', 'LOCALHOST.', 'app.localhost:5173', '127.0.0.1:3000', '[::1]:3000', '[::1]', '10.1.2.3:3000', '[fe80::1]'])(
    'answers Host %s without any setting',
    (host) => expect(isAllowedHost(host, [])).toBe(true),
  );

  it.each(['rebind.attacker.example:3000', 'localhost.attacker.example', '127.0.0.1.nip.io', '2130706433', 'sessions.internal', '', ' :3000', 'a:b:c'])(
    'refuses Host %s without ALLOWED_HOSTS',
    (host) => expect(isAllowedHost(host, [])).toBe(false),
  );

  it('answers a listed name, and every name under a .name entry, on any port; nothing else', () => {
    const allowed = parseAllowedHosts('sessions.internal,.dev.example.com');
    expect(isAllowedHost('Sessions.Internal:3000', allowed)).toBe(true);
    expect(isAllowedHost('dev.example.com', allowed)).toBe(true);
    expect(isAllowedHost('a.b.dev.example.com:80', allowed)).toBe(true);
    expect(isAllowedHost('x.sessions.internal', allowed)).toBe(false);
    expect(isAllowedHost('evildev.example.com', allowed)).toBe(false);
    expect(isAllowedHost('sessions.internal.attacker.example', allowed)).toBe(false);
  });

  it('refuses every name that is not localhost nor listed (any port), answers every IPv4 address', () => {
    const label = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}[a-z0-9]$/);
    fc.assert(
      fc.property(fc.array(label, { minLength: 2, maxLength: 4 }), fc.integer({ min: 1, max: 65535 }), (labels, port) => {
        const name = labels.join('.');
        fc.pre(!name.endsWith('.localhost') && name !== 'allowed.example');
        expect(isAllowedHost(`${name}:${port}`, ['allowed.example'])).toBe(false);
      }),
    );
    fc.assert(fc.property(fc.ipV4(), fc.integer({ min: 1, max: 65535 }), (ip, port) => expect(isAllowedHost(`${ip}:${port}`, [])).toBe(true)));
  });

  it('takes names with underscores (Docker Compose service names) in ALLOWED_HOSTS and in Host, by one rule', () => {
    expect(parseAllowedHosts('session_service,.my_stack.internal')).toEqual(['session_service', '.my_stack.internal']);
    expect(hostNameOf('Session_Service:3000')).toBe('session_service');
    expect(isAllowedHost('session_service:3000', parseAllowedHosts('session_service'))).toBe(true);
    expect(isAllowedHost('api.my_stack.internal', parseAllowedHosts('.my_stack.internal'))).toBe(true);
    expect(isAllowedHost('session_service:3000', [])).toBe(false);
    // A Host that is no host name gives none to list (its 403 says so, not "set ALLOWED_HOSTS=…").
    for (const host of ['user@localhost', 'localhost/x', 'a b', 'devbox..', '-box'])
      expect({ host, name: hostNameOf(host) }).toEqual({ host, name: undefined });
  });

  it('the host name read from any refused Host is a value ALLOWED_HOSTS takes, and then answers that Host', () => {
    const hostChar = fc.constantFrom(...'abcxyz019-_.@/ %:'.split(''));
    fc.assert(
      fc.property(fc.array(hostChar, { minLength: 1, maxLength: 20 }), (chars) => {
        const host = chars.join('');
        const name = hostNameOf(host);
        if (name === undefined || isAllowedHost(host, [])) return;
        const allowed = parseAllowedHosts(name);
        expect(isAllowedHost(host, allowed)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
