import { Client } from 'pg';
import { summarizerFromEnv } from '@lib/session';
import { NUMBER_VARIABLES } from './number-variables';
import { eventStoreConfig } from './event-store-config';
import { loadServiceConfig, natsUrlRequiresTls } from './service-config';
import { documentation, documentationFile } from '../../../../test/support/documentation';

describe('loadServiceConfig: logs', () => {
  it('logs JSON unless stdout is a terminal; LOG_FORMAT overrides', () => {
    expect(loadServiceConfig({}, false).logFormat).toBe('json');
    expect(loadServiceConfig({}, true).logFormat).toBe('pretty');
    expect(loadServiceConfig({ LOG_FORMAT: 'json' }, true).logFormat).toBe('json');
    expect(loadServiceConfig({ LOG_FORMAT: 'pretty' }, false).logFormat).toBe('pretty');
  });

  it('logs requests at debug unless REQUEST_LOG_LEVEL says otherwise', () => {
    expect(loadServiceConfig({}, false).requestLogLevel).toBe('debug');
    expect(loadServiceConfig({ REQUEST_LOG_LEVEL: 'info' }, false).requestLogLevel).toBe('info');
  });

  it.each([
    ['LOG_FORMAT', 'yaml'],
    ['LOG_LEVEL', 'verbose'],
    ['REQUEST_LOG_LEVEL', 'loud'],
  ])('refuses %s=%s, naming the variable and the allowed values', (name, value) => {
    expect(() => loadServiceConfig({ [name]: value }, false)).toThrow(new RegExp(`^${name}=${value}: not one of its values: use one of`));
  });

  it('refuses an API key shorter than 8 characters, saying so', () => {
    expect(() => loadServiceConfig({ API_KEYS: 'key1:tenantA' }, false)).toThrow(/API_KEYS.*at least 8 characters/);
    expect(loadServiceConfig({ API_KEYS: 'key1-long:tenantA' }, false).apiKeys.get('key1-long')).toBe('tenantA');
  });
});

describe('loadServiceConfig: projector', () => {
  it('answers a NATS Reply-To only under NATS_REPLY_PREFIXES (default _INBOX), never under NATS_PREFIX nor on a $ subject', () => {
    expect(loadServiceConfig({}, false).natsReplyPrefixes).toEqual(['_INBOX']);
    expect(loadServiceConfig({ NATS_REPLY_PREFIXES: '_INBOX,replies.' }, false).natsReplyPrefixes).toEqual(['_INBOX', 'replies']);
    expect(() => loadServiceConfig({ NATS_PREFIX: 'ncx', NATS_REPLY_PREFIXES: 'ncx.results' }, false)).toThrow(
      /^NATS_REPLY_PREFIXES=ncx\.results: .*under NATS_PREFIX/,
    );
    expect(() => loadServiceConfig({ NATS_REPLY_PREFIXES: '$JS.API' }, false)).toThrow(/\$ subject/);
  });

  it('takes NATS servers as nats://, tls:// or bare host:port, and refuses another scheme (http:// was taken for nats://) naming NATS_URL, masked', () => {
    expect(loadServiceConfig({}, false).natsUrl).toBeUndefined();
    for (const url of ['nats://127.0.0.1:4222', 'NATS://n1:4222,nats://n2:4222', 'TLS://n1:4222,tls://n2:4222', 'n1:4222, nats://svc:pw@n2:4222', 'localhost'])
      expect(loadServiceConfig({ NATS_URL: url }, false).natsUrl).toBe(url);
    expect(() => loadServiceConfig({ NATS_URL: 'http://127.0.0.1:4239' }, false)).toThrow(
      /^NATS_URL=http:\/\/127\.0\.0\.1:4239: has scheme http:, not a NATS server's: use comma-separated nats:\/\/host:4222 URLs \(tls:\/\/ or a bare host:port also work\)$/,
    );
    expect(() => loadServiceConfig({ NATS_URL: 'nats://n1:4222,wss://svc:hunter2@n2:443' }, false)).toThrow(
      /^NATS_URL=nats:\/\/n1:4222,wss:\/\/svc:\*\*\*@n2:443: server 2 has scheme wss:, not a NATS server's: /,
    );
  });

  it('refuses a NATS server on port 0 (the client retried "127.0.0.1:undefined" forever; newcomer ncops65 F5), naming the server', () => {
    expect(() => loadServiceConfig({ NATS_URL: 'nats://127.0.0.1:0' }, false)).toThrow(
      /^NATS_URL=nats:\/\/127\.0\.0\.1:0: has port 0, which is no port a server can be reached on, so the connection would never be made: use the NATS server's port/,
    );
    expect(() => loadServiceConfig({ NATS_URL: 'n1:4222, n2:0' }, false)).toThrow(/^NATS_URL="n1:4222, n2:0": server 2 has port 0/);
    expect(() => loadServiceConfig({ NATS_URL: 'tls://svc:pw@[::1]:0' }, false)).toThrow(/has port 0/);
    expect(loadServiceConfig({ NATS_URL: 'nats://n1:4222,n2:4223' }, false).natsUrl).toBe('nats://n1:4222,n2:4223');
  });

  it('requires TLS for tls:// servers (all of them, or none: a mix is refused, the client requires TLS of every server or of none)', () => {
    expect(natsUrlRequiresTls('tls://n1:4222')).toBe(true);
    expect(natsUrlRequiresTls(' TLS://svc:pw@n1:4222,tls://n2:4222')).toBe(true);
    for (const url of ['nats://n1:4222', 'n1:4222', 'localhost', 'nats://n1:4222,n2:4222']) expect(natsUrlRequiresTls(url)).toBe(false);
    expect(() => loadServiceConfig({ NATS_URL: 'tls://n1:4222,nats://svc:hunter2@n2:4222' }, false)).toThrow(
      /^NATS_URL=tls:\/\/n1:4222,nats:\/\/svc:\*\*\*@n2:4222: server 1 is tls:\/\/ and server 2 is not, but the connection requires TLS of every server or of none: use tls:\/\/ on every server \(TLS required\) or on none$/,
    );
    expect(() => loadServiceConfig({ NATS_URL: 'n1:4222,tls://n2:4222' }, false)).toThrow(/: server 2 is tls:\/\/ and server 1 is not, /);
  });

  it('erases handled NATS commands from the command stream only with NATS_ERASE_HANDLED_COMMANDS true or 1 (default off: it costs throughput)', () => {
    expect(loadServiceConfig({}, false).natsEraseHandledCommands).toBe(false);
    expect(loadServiceConfig({ NATS_ERASE_HANDLED_COMMANDS: 'true' }, false).natsEraseHandledCommands).toBe(true);
    expect(loadServiceConfig({ NATS_ERASE_HANDLED_COMMANDS: '0' }, false).natsEraseHandledCommands).toBe(false);
    expect(() => loadServiceConfig({ NATS_ERASE_HANDLED_COMMANDS: 'yes' }, false)).toThrow(/^NATS_ERASE_HANDLED_COMMANDS=yes: not a boolean/);
  });

  it('runs the projector on the event loop unless PROJECTOR_WORKER is true or 1, and refuses other values', () => {
    expect(loadServiceConfig({}, false).projectorWorker).toBe(false);
    expect(loadServiceConfig({ PROJECTOR_WORKER: 'true' }, false).projectorWorker).toBe(true);
    expect(loadServiceConfig({ PROJECTOR_WORKER: '1' }, false).projectorWorker).toBe(true);
    expect(loadServiceConfig({ PROJECTOR_WORKER: '0' }, false).projectorWorker).toBe(false);
    expect(loadServiceConfig({ PROJECTOR_WORKER: ' TRUE ' }, false).projectorWorker).toBe(true);
    expect(() => loadServiceConfig({ PROJECTOR_WORKER: 'yes' }, false)).toThrow(
      /^PROJECTOR_WORKER=yes: not a boolean: use true, false, 1 or 0 \(any case\), or unset it for the default \(false\)$/,
    );
  });

  it('commits SQLite appends in the writer thread unless SQLITE_WRITER_THREAD is false or 0, and hands that to the store', () => {
    expect(loadServiceConfig({}, false).sqliteWriterThread).toBe(true);
    expect(loadServiceConfig({ SQLITE_WRITER_THREAD: 'false' }, false).sqliteWriterThread).toBe(false);
    expect(loadServiceConfig({ SQLITE_WRITER_THREAD: '0' }, false).sqliteWriterThread).toBe(false);
    expect(eventStoreConfig(loadServiceConfig({ SQLITE_WRITER_THREAD: '1' }, false)).sqlite).toMatchObject({ writerThread: true });
    expect(() => loadServiceConfig({ SQLITE_WRITER_THREAD: 'on' }, false)).toThrow(
      /^SQLITE_WRITER_THREAD=on: not a boolean: use true, false, 1 or 0 \(any case\), or unset it for the default \(true\)$/,
    );
  });
});

describe('loadServiceConfig: request timeout', () => {
  it('gives a whole request 60 s unless REQUEST_TIMEOUT_MS says otherwise, and refuses values outside 100 to 3,600,000', () => {
    expect(loadServiceConfig({}, false).requestTimeoutMs).toBe(60_000);
    expect(loadServiceConfig({ REQUEST_TIMEOUT_MS: '500' }, false).requestTimeoutMs).toBe(500);
    expect(() => loadServiceConfig({ REQUEST_TIMEOUT_MS: '0' }, false)).toThrow(
      /^REQUEST_TIMEOUT_MS=0: out of range: use a time in milliseconds, an integer from 100 to 3600000$/,
    );
  });
});

describe('loadServiceConfig: compaction claims (PostgreSQL replicas)', () => {
  it('polls every 250 ms, waits 120 s (automatic) and 15 s (commands, with the default REQUEST_TIMEOUT_MS) unless set, and refuses values out of range', () => {
    const defaults = loadServiceConfig({}, false);
    expect([defaults.compactionClaimPollMs, defaults.autoCompactionClaimMaxWaitMs, defaults.compactionCommandClaimMaxWaitMs]).toEqual([250, 120_000, 15_000]);
    const set = loadServiceConfig({ COMPACTION_CLAIM_POLL_MS: '50', AUTO_COMPACTION_CLAIM_MAX_WAIT_MS: '0', COMPACTION_CLAIM_MAX_WAIT_MS: '2000' }, false);
    expect([set.compactionClaimPollMs, set.autoCompactionClaimMaxWaitMs, set.compactionCommandClaimMaxWaitMs]).toEqual([50, 0, 2000]);
    expect(() => loadServiceConfig({ COMPACTION_CLAIM_POLL_MS: '5' }, false)).toThrow(
      /^COMPACTION_CLAIM_POLL_MS=5: out of range: use a time in milliseconds, an integer from 10 to 60000$/,
    );
    expect(() => loadServiceConfig({ AUTO_COMPACTION_CLAIM_MAX_WAIT_MS: '2m' }, false)).toThrow(/^AUTO_COMPACTION_CLAIM_MAX_WAIT_MS=2m: not an integer/);
  });

  it('refuses a command wait not less than REQUEST_TIMEOUT_MS, naming both', () => {
    expect(() => loadServiceConfig({ COMPACTION_CLAIM_MAX_WAIT_MS: '60000' }, false)).toThrow(
      /^COMPACTION_CLAIM_MAX_WAIT_MS=60000: not less than REQUEST_TIMEOUT_MS \(60000\): use a time in milliseconds less than 60000, or raise REQUEST_TIMEOUT_MS$/,
    );
    expect(() => loadServiceConfig({ REQUEST_TIMEOUT_MS: '10000', COMPACTION_CLAIM_MAX_WAIT_MS: '10000' }, false)).toThrow(
      /^COMPACTION_CLAIM_MAX_WAIT_MS=10000: not less than REQUEST_TIMEOUT_MS \(10000\)/,
    );
    expect(loadServiceConfig({ REQUEST_TIMEOUT_MS: '10000', COMPACTION_CLAIM_MAX_WAIT_MS: '9999' }, false).compactionCommandClaimMaxWaitMs).toBe(9999);
    // unset, it is 15 s or half the request timeout, whichever is less (a short REQUEST_TIMEOUT_MS alone still starts)
    expect(loadServiceConfig({ REQUEST_TIMEOUT_MS: '10000' }, false).compactionCommandClaimMaxWaitMs).toBe(5000);
    expect(loadServiceConfig({ REQUEST_TIMEOUT_MS: '100' }, false).compactionCommandClaimMaxWaitMs).toBe(50);
  });
});

describe('loadServiceConfig: API_KEYS', () => {
  it('refuses a key listed twice, naming its positions but never the key', () => {
    const key = 'dup-secret-9f31c2';
    for (const value of [`${key}:alpha,${key}:beta`, `${key}:alpha,other-key-1234:gamma, ${key}:alpha`]) {
      let message = '';
      try {
        loadServiceConfig({ API_KEYS: value }, false);
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toMatch(/^API_KEYS=\*\*\*: the key of entry 1 is listed again as entry [23]: give each key once \(one tenant per key\)/);
      expect(message).not.toContain(key);
      expect(message).not.toContain(key.slice(0, 8));
    }
    expect(loadServiceConfig({ API_KEYS: 'key-one-1234:alpha,key-two-1234:alpha' }, false).apiKeys.size).toBe(2);
  });

  it('refuses a key that clients cannot send in an HTTP header as configured (non-ASCII, a space inside), naming the entry, never the key', () => {
    for (const value of ['ok-key-12345:alpha,clé-secrète-99:uni', 'ok-key-12345:alpha,two words key:uni']) {
      expect(() => loadServiceConfig({ API_KEYS: value }, false)).toThrow(/^API_KEYS=\*\*\*: the key of entry 2 holds a character other than printable ASCII/);
      expect(() => loadServiceConfig({ API_KEYS: value }, false)).not.toThrow(/secr|words/);
    }
  });

  it('says when a tenant, not the pair, is what is wrong', () => {
    expect(() => loadServiceConfig({ API_KEYS: 'ok-key-12345:bad.tenant' }, false)).toThrow(/the tenant of entry 1 is not 1 to 64 letters, digits, _ or -/);
    expect(() => loadServiceConfig({ API_KEYS: `ok-key-12345:${'t'.repeat(65)}` }, false)).toThrow(/the tenant of entry 1/);
    expect(() => loadServiceConfig({ API_KEYS: 'no-colon-here' }, false)).toThrow(/entry 1 is not a key:tenant pair/);
  });

  it('refuses an empty entry, naming its position, never a key (newcomer ncops73 F4: k1:t1,,k2:t2 dropped it silently)', () => {
    const refusal = (value: string) => {
      try {
        loadServiceConfig({ API_KEYS: value }, false);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refusal('longenough1:t1,,longenough2:t2')).toBe(
      'API_KEYS=***: entry 2 of 3 is empty (nothing between two commas), perhaps a key a deployment template failed to render: give every entry as key:tenant, or remove the comma too many',
    );
    expect(refusal('longenough1:t1, ,longenough2:t2')).toMatch(/^API_KEYS=\*\*\*: entry 2 of 3 is empty \(nothing between two commas\)/);
    expect(refusal('longenough1:t1,longenough2:t2,')).toMatch(/^API_KEYS=\*\*\*: entry 3 of 3 is empty \(a comma at the end\), /);
    expect(refusal(',longenough1:t1')).toMatch(/^API_KEYS=\*\*\*: entry 1 of 2 is empty \(a comma at the start\), /);
    expect(refusal('longenough1:t1,,longenough2:t2')).not.toMatch(/longenough/);
    expect(refusal('longenough1:t1 , longenough2:t2')).toBe('accepted');
  });

  it('refuses API_KEYS set but empty (only spaces or commas), saying to unset it for open development mode', () => {
    for (const value of ['', ' '])
      expect(() => loadServiceConfig({ API_KEYS: value }, false)).toThrow(
        /^API_KEYS="\s*": set but blank: unset it for the default \(open development mode, no authentication\), or give it a value$/,
      );
    for (const value of [',', ' , ,']) {
      expect(() => loadServiceConfig({ API_KEYS: value }, false)).toThrow(
        /^API_KEYS=(,|", ,"): set but holds no key: give key:tenant pairs, or unset API_KEYS for open development mode \(no authentication\)$/,
      );
    }
    expect(loadServiceConfig({}, false).apiKeys.size).toBe(0);
    expect(loadServiceConfig({ API_KEYS: undefined }, false).apiKeys.size).toBe(0);
  });

  it('never repeats a key in the message about a malformed entry', () => {
    let message = '';
    try {
      loadServiceConfig({ API_KEYS: 'good-key-1234:alpha,secret-key-without-tenant' }, false);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^API_KEYS=\*\*\*: entry 2 is not a key:tenant pair/);
    expect(message).not.toContain('secret-key');
  });
});

describe('loadServiceConfig: newcomer, stop 23', () => {
  it('takes spaces around a key or tenant as no part of it, so a key listed twice with a space is refused too', () => {
    expect(() => loadServiceConfig({ API_KEYS: 'alice-key-2f9c:tenantA, alice-key-2f9c :tenantB' }, false)).toThrow(
      /^API_KEYS=\*\*\*: the key of entry 1 is listed again as entry 2/,
    );
    expect([...loadServiceConfig({ API_KEYS: ' alice-key-2f9c : tenantA ' }, false).apiKeys]).toEqual([['alice-key-2f9c', 'tenantA']]);
  });

  it('refuses a blank number (unset it for the default) and anything but plain digits', () => {
    expect(() => loadServiceConfig({ PORT: ' ' }, false)).toThrow(/^PORT=" ": set but blank: unset it for the default \(3000\), or give it a value$/);
    expect(loadServiceConfig({ PORT: ' 3001 ' }, false).port).toBe(3001);
    for (const value of ['1e3', '0x10', '3000.0', '+3000', '30 00'])
      expect(() => loadServiceConfig({ PORT: value }, false)).toThrow(
        /^PORT=("[^"]*"|\S+): not an integer in plain decimal digits: use a TCP port \(0 picks a free one\), an integer from 0 to 65535$/,
      );
  });
});

describe('the Configuration table (docs/configuration.md) states the ranges the code enforces', () => {
  const configuration = documentationFile('docs/configuration.md');
  /** The table row (one line) that documents `name`. */
  const row = (name: string) => configuration.split('\n').find((line) => line.startsWith('| ') && line.split(' | ')[0].includes(`\`${name}\``)) ?? '';
  const accepts = (name: string, value: number) => {
    try {
      if (name.startsWith('SUMMARIZER_')) summarizerFromEnv({ [name]: String(value) });
      // COMPACTION_CLAIM_MAX_WAIT_MS is also kept under REQUEST_TIMEOUT_MS: its range is checked with the longest request timeout
      else loadServiceConfig({ ...(name === 'COMPACTION_CLAIM_MAX_WAIT_MS' ? { REQUEST_TIMEOUT_MS: '3600000' } : {}), [name]: String(value) }, false);
      return true;
    } catch {
      return false;
    }
  };
  const fmt = (n: number) => n.toLocaleString('en-US');
  it.each(Object.entries(NUMBER_VARIABLES).map(([name, v]) => [name, v.min, v.max === Number.MAX_SAFE_INTEGER ? undefined : v.max] as const))(
    '%s: from %d to %s, in the code and in its documented row',
    (name, min, max) => {
      expect([accepts(name, min), accepts(name, min - 1)]).toEqual([true, false]);
      if (max !== undefined) expect([accepts(name, max), accepts(name, max + 1)]).toEqual([true, false]);
      else expect([accepts(name, Number.MAX_SAFE_INTEGER), accepts(name, Number.MAX_SAFE_INTEGER + 1)]).toEqual([true, false]);
      const documented = max === undefined ? `\`${name}\` ${fmt(min)} or more` : `\`${name}\` ${fmt(min)}–${fmt(max)}`;
      expect(row(name)).toContain(documented);
    },
  );

  it('the table holds every number variable the documentation (README.md, CHANGELOG.md, docs/) documents with a range', () => {
    const documented = documentation().flatMap(({ text }) => [...text.matchAll(/`([A-Z_]+)` [\d,]+(?:–[\d,]+| or more)/g)].map((m) => m[1]));
    expect(new Set(documented)).toEqual(new Set(Object.keys(NUMBER_VARIABLES)));
  });
});

describe('every number variable refuses a value with a message stating the range it accepts', () => {
  const refusal = (name: string, value: string) => {
    try {
      if (name.startsWith('SUMMARIZER_')) summarizerFromEnv({ [name]: value });
      else loadServiceConfig({ [name]: value }, false);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error(`${name}=${value} was accepted`);
  };
  it.each(Object.entries(NUMBER_VARIABLES))('%s', (name, { min, max }) => {
    const invalid = ['1e4', 'lots', '-1', '1.5', String(max + 1), ...(min > 0 ? [String(min - 1)] : [])];
    for (const value of invalid) {
      const message = refusal(name, value);
      expect(message).toMatch(new RegExp(`^${name}=${value.replace('.', '\\.')}: (out of range|not an integer in plain decimal digits): use `));
      expect(message).toContain(`an integer from ${min} to ${max}`);
    }
  });

  it("reads TRUST_PROXY as off, a hop count or the proxies' addresses and ranges, and refuses anything else, true included", () => {
    const read = (v?: string) => loadServiceConfig({ TRUST_PROXY: v }, false).trustProxy;
    expect([read(undefined), read('false'), read('0'), read('False')]).toEqual([false, false, false, false]);
    expect(read('2')).toBe(2);
    expect(read('10.0.0.0/8, 127.0.0.1,::1,fd00::/8')).toEqual(['10.0.0.0/8', '127.0.0.1', '::1', 'fd00::/8']);
    for (const bad of ['true', '17', 'proxy.local', '10.0.0.0/33', '::1/129', '10.0.0.1/8/2', '1.2.3'])
      expect(() => read(bad)).toThrow(new RegExp(`^TRUST_PROXY=${bad.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: `));
  });
});

describe('loadServiceConfig: HOST', () => {
  it('takes an IPv6 address bracketed as in URLs ([::1] is ::1), and other hosts as given', () => {
    for (const address of ['::1', '::', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) {
      expect(loadServiceConfig({ HOST: `[${address}]` }, false).host).toBe(address);
      expect(loadServiceConfig({ HOST: address }, false).host).toBe(address);
    }
    expect(loadServiceConfig({ HOST: '0.0.0.0' }, false).host).toBe('0.0.0.0');
    expect(loadServiceConfig({}, false).host).toBe('127.0.0.1');
  });

  it('refuses brackets around what is not an IPv6 address, saying to drop them', () => {
    for (const [value, inner] of [
      ['[localhost]', 'localhost'],
      ['[127.0.0.1]', '127.0.0.1'],
    ]) {
      expect(() => loadServiceConfig({ HOST: value }, false)).toThrow(
        new RegExp(`^HOST=\\[${inner.replace(/\./g, '\\.')}\\]: .*drop the brackets \\(${inner.replace(/\./g, '\\.')}\\)`),
      );
    }
  });
});

describe('loadServiceConfig: DATABASE_URL sslmode and SHUTDOWN_TIMEOUT_MS', () => {
  it.each(['disable', 'prefer', 'require', 'verify-ca', 'verify-full', 'no-verify'])('takes sslmode=%s (a mode the pg driver knows)', (mode) => {
    expect(loadServiceConfig({ DATABASE_URL: `postgres://u@db/x?sslmode=${mode}` }, false).databaseUrl).toBe(`postgres://u@db/x?sslmode=${mode}`);
  });

  it("refuses a DATABASE_URL naming no database (the driver would use the server's maintenance database; newcomer ncops65 F2) or port 0, password masked", () => {
    for (const url of ['postgres://postgres@127.0.0.1:5432/', 'postgres://u:S3cret@db', 'postgresql://u@db:5432'])
      expect(() => loadServiceConfig({ DATABASE_URL: url }, false)).toThrow(
        /^DATABASE_URL=postgres(ql)?:\/\/[^ ]*: names no database \(nothing after the host( and port)?\): the driver would use the database named as the user, often the server's maintenance database postgres, and the service would create its tables there: add the database the service is to use, e.g. postgres:\/\/user:password@host:5432\/sessions/,
      );
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://u:S3cret@db/' }, false)).toThrow(/^DATABASE_URL=postgres:\/\/u:\*\*\*@db\/: names no database/);
    // A `database` parameter: the driver ignores it (newcomer ncops67 F4: the tables went to the database named as the user).
    // What the driver connects to (its parsed parameters: not typed, read as node-postgres keeps them).
    const databaseOf = (connectionString: string) =>
      (new Client({ connectionString }) as unknown as { connectionParameters: { database: string } }).connectionParameters.database;
    expect(databaseOf('postgres://u@db/?database=events')).toBe('u');
    expect(databaseOf('postgres://u@db/a?database=events')).toBe('a');
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://u@db/?database=events' }, false)).toThrow(
      /^DATABASE_URL=postgres:\/\/\*\*\*@db\/\?database=events: gives the database as a parameter \(database=events\), which the PostgreSQL driver ignores: it takes the database from the path only, and would use the one named as the user: name the database in the path/,
    );
    for (const parameter of ['dbname', 'DATABASE', 'DbName'])
      expect(() => loadServiceConfig({ DATABASE_URL: `postgres://u@db/a?${parameter}=b` }, false)).toThrow(
        new RegExp(`gives the database as a parameter \\(${parameter}=b\\), which the PostgreSQL driver ignores`),
      );
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://u:S3cret@db:5432/a?database=b' }, false)).toThrow(
      /^DATABASE_URL=postgres:\/\/u:\*\*\*@db:5432\/a\?database=b: gives the database as a parameter \(database=b\), which the PostgreSQL driver ignores: it takes the database from the path only \(here a\)/,
    );
    expect(loadServiceConfig({ DATABASE_URL: 'postgres://u@db:5432/events' }, false).databaseUrl).toBe('postgres://u@db:5432/events');
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://u@db:0/events' }, false)).toThrow(
      /^DATABASE_URL=postgres:\/\/\*\*\*@db:0\/events: port 0 is no port a server can be reached on, so every connection would fail: use the server's port/,
    );
  });

  it('refuses an sslmode the driver does not know (it would take it silently), naming DATABASE_URL, the mode and the modes it knows, password masked', () => {
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://u:S3cret@db/x?sslmode=bogus' }, false)).toThrow(
      /^DATABASE_URL=postgres:\/\/u:\*\*\*@db\/x\?sslmode=bogus: sslmode=bogus is not an SSL mode the PostgreSQL driver knows: use one of disable, prefer, require, verify-ca, verify-full, no-verify/,
    );
    expect(() => loadServiceConfig({ DATABASE_URL: 'postgres://u@db/x?sslmode=' }, false)).toThrow(/sslmode= is not an SSL mode/);
  });

  it('holds counting a large request to 30 s by default; COUNTING_DEADLINE_MS sets it, from 1000 to 600,000 ms', () => {
    expect(loadServiceConfig({}, false).countingDeadlineMs).toBe(30_000);
    expect(loadServiceConfig({ COUNTING_DEADLINE_MS: '5000' }, false).countingDeadlineMs).toBe(5000);
    expect(() => loadServiceConfig({ COUNTING_DEADLINE_MS: '999' }, false)).toThrow(
      /^COUNTING_DEADLINE_MS=999: out of range: use a time in milliseconds, an integer from 1000 to 600000$/,
    );
    expect(() => loadServiceConfig({ COUNTING_DEADLINE_MS: '30s' }, false)).toThrow(/^COUNTING_DEADLINE_MS=30s: not an integer/);
  });

  it('bounds the shutdown at 20 s by default (below Kubernetes’ 30 s grace period); SHUTDOWN_TIMEOUT_MS sets it, from 1000 ms', () => {
    expect(loadServiceConfig({}, false).shutdownTimeoutMs).toBe(20_000);
    expect(loadServiceConfig({ SHUTDOWN_TIMEOUT_MS: '5000' }, false).shutdownTimeoutMs).toBe(5000);
    expect(() => loadServiceConfig({ SHUTDOWN_TIMEOUT_MS: '999' }, false)).toThrow(/^SHUTDOWN_TIMEOUT_MS=999: /);
  });
});
