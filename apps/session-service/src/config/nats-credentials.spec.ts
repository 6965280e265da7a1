import fc from 'fast-check';
import { natsConnectionTarget } from './nats-credentials';
import { ConfigurationError } from './configuration-error';
import { loadServiceConfig } from './service-config';

describe('natsConnectionTarget: the servers and credentials NATS_URL and NATS_USER/NATS_PASSWORD give', () => {
  it('takes user:password out of the URL, percent-decoded, and connects to the server without it', () => {
    expect(natsConnectionTarget('nats://svc:s3cret@127.0.0.1:4322')).toEqual({
      servers: ['nats://127.0.0.1:4322'],
      credentials: { user: 'svc', pass: 's3cret' },
    });
    expect(natsConnectionTarget('tls://us%C3%A9r:p%40ss%2Fw:rd@n1:4222')).toEqual({
      servers: ['tls://n1:4222'],
      credentials: { user: 'usér', pass: 'p@ss/w:rd' },
    });
    // an unencoded @ in the password: the last @ ends the user part, as the masking reads it
    expect(natsConnectionTarget('nats://svc:p@ss@n1:4222')).toEqual({ servers: ['nats://n1:4222'], credentials: { user: 'svc', pass: 'p@ss' } });
    expect(natsConnectionTarget('svc:pw@n1:4222')).toEqual({ servers: ['n1:4222'], credentials: { user: 'svc', pass: 'pw' } });
  });

  it('takes a lone user part as a token', () => {
    expect(natsConnectionTarget('nats://s3cret-token@n1:4222')).toEqual({ servers: ['nats://n1:4222'], credentials: { token: 's3cret-token' } });
  });

  it('without credentials in the URL, sends NATS_USER and NATS_PASSWORD, or nothing', () => {
    expect(natsConnectionTarget('nats://n1:4222', { natsUser: 'svc', natsPassword: 'pw' })).toEqual({
      servers: ['nats://n1:4222'],
      credentials: { user: 'svc', pass: 'pw' },
    });
    expect(natsConnectionTarget(' nats://n1:4222 , n2:4222')).toEqual({ servers: ['nats://n1:4222', 'n2:4222'], credentials: {} });
  });

  it('a list: the same credentials on several servers, or on one only, are sent to every server', () => {
    expect(natsConnectionTarget('nats://svc:pw@n1:4222, nats://svc:pw@n2:4222,n3:4222')).toEqual({
      servers: ['nats://n1:4222', 'nats://n2:4222', 'n3:4222'],
      credentials: { user: 'svc', pass: 'pw' },
    });
  });

  it.each([
    [
      'different credentials on two servers',
      'nats://svc:pw1@n1:4222,nats://svc:pw2@n2:4222',
      {},
      'NATS_URL=nats://svc:***@n1:4222,nats://svc:***@n2:4222: server 1 and server 2 carry different credentials, but the connection sends one set to every server: write the same credentials on every server (or on one only), or give them once as NATS_USER and NATS_PASSWORD',
    ],
    [
      'a token on one server, a user on another',
      'nats://tok@n1:4222,nats://svc:pw@n2:4222',
      {},
      'NATS_URL=nats://***@n1:4222,nats://svc:***@n2:4222: server 1 and server 2 carry different credentials, but the connection sends one set to every server: write the same credentials on every server (or on one only), or give them once as NATS_USER and NATS_PASSWORD',
    ],
    [
      'credentials in the URL and NATS_USER',
      'nats://svc:s3cret@n1:4222',
      { natsUser: 'svc' },
      'NATS_URL=nats://svc:***@n1:4222: carries credentials and NATS_USER or NATS_PASSWORD is set too: give the credentials in one place: remove them from NATS_URL, or unset NATS_USER and NATS_PASSWORD',
    ],
    [
      'a token in the URL and NATS_PASSWORD',
      'nats://tok@n1:4222',
      { natsPassword: 'pw' },
      'NATS_URL=nats://***@n1:4222: carries credentials and NATS_USER or NATS_PASSWORD is set too: give the credentials in one place: remove them from NATS_URL, or unset NATS_USER and NATS_PASSWORD',
    ],
    [
      'a user part that is not percent-encoding',
      'nats://svc:100%@n1:4222',
      {},
      'NATS_URL=nats://svc:***@n1:4222: the credentials of the server are not valid percent-encoding: write a % in a user, password or token as %25',
    ],
    [
      'a password without a user',
      'nats://:pw@n1:4222',
      {},
      'NATS_URL=nats://:***@n1:4222: the server has credentials without a user or token before the @: use nats://user:password@host:4222 or nats://token@host:4222',
    ],
  ])('refuses %s by name, the secrets masked', (_name, url, variables, message) => {
    let thrown: unknown;
    try {
      natsConnectionTarget(url, variables);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigurationError);
    expect((thrown as Error).message).toBe(message);
  });

  it('is checked when the configuration is read (the start is refused before anything connects)', () => {
    expect(() => loadServiceConfig({ NATS_URL: 'nats://svc:pw@n1:4222', NATS_USER: 'svc', NATS_PASSWORD: 'pw' }, false)).toThrow(ConfigurationError);
    expect(loadServiceConfig({ NATS_URL: 'nats://svc:pw@n1:4222' }, false).natsUrl).toBe('nats://svc:pw@n1:4222');
  });

  it('property: any user and password (or token), percent-encoded into any list of servers, come back as written, and no server keeps them', () => {
    const text = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 });
    const host = fc.stringMatching(/^[a-z][a-z0-9-]{0,10}(:[1-9][0-9]{0,4})?$/);
    fc.assert(
      fc.property(
        text,
        fc.option(fc.string({ unit: 'grapheme', maxLength: 20 }), { nil: undefined }),
        fc.array(fc.tuple(host, fc.constantFrom('nats://', 'tls://', ''), fc.boolean()), { minLength: 1, maxLength: 4 }),
        (user, pass, list) => {
          const userInfo = pass === undefined ? encodeURIComponent(user) : `${encodeURIComponent(user)}:${encodeURIComponent(pass)}`;
          // every server with the credentials, or only those drawn so (at least the first)
          const url = list.map(([h, scheme, withCredentials], i) => `${scheme}${withCredentials || i === 0 ? `${userInfo}@` : ''}${h}`).join(',');
          const target = natsConnectionTarget(url);
          expect(target.credentials).toEqual(pass === undefined ? { token: user } : { user, pass });
          expect(target.servers).toEqual(list.map(([h, scheme]) => `${scheme}${h}`));
        },
      ),
    );
  });
});
