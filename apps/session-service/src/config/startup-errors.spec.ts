import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { withoutCredentials } from '@lib/event-store';
import { ConfigurationError } from './configuration-error';
import { ensureDataDir, requireEventsFileDirectory, requireExistingSqliteStore, requireWritableClaimsDirectory } from './data-dir';
import { openEventStore } from './event-store-config';
import { listenError } from './listen-error';
import { loadServiceConfig } from './service-config';
import { createSessionService } from '../create-session-service';
import { startupNatsLine } from './startup-summary';
import { summarizerFromEnv } from '@lib/session';

/** The error `fn` throws (or the rejection of its promise). */
async function thrown(fn: () => unknown): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

/** The error of listening on `host`:`port` with a real server. */
function listenFailure(port: number, host: string): Promise<NodeJS.ErrnoException> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', resolve);
    server.listen(port, host, () => server.close(() => reject(new Error(`listening on ${host}:${port} worked`))));
  });
}

describe('start-up refusals name the variable (exit code 2 in main)', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const tempDir = () => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), 'startup-errors-'));
    dirs.push(d);
    return d;
  };

  it('a bad summarizer setting is a configuration error, refused before DATA_DIR is touched', async () => {
    const dataDir = path.join(tempDir(), 'data');
    const err = await thrown(() =>
      createSessionService(loadServiceConfig({ DATA_DIR: dataDir }, false), { quiet: true, env: { SUMMARIZER_MAX_RETRIES: 'x' } }),
    );
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toMatch(
      /^SUMMARIZER_MAX_RETRIES=x: not an integer in plain decimal digits: use a number of retries, an integer from 0 to 10$/,
    );
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it('given SQLITE_EVENTS_FILE in a directory that does not exist (a mistyped path), when the service starts, then it is refused by name and nothing is created', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const mistyped = path.join(root, 'nonexistent', 'dir', 'x.sqlite');
    const err = await thrown(() => createSessionService(loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: mistyped }, false), { quiet: true }));
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toBe(
      `SQLITE_EVENTS_FILE=${mistyped}: its directory ${path.dirname(mistyped)} does not exist: point SQLITE_EVENTS_FILE at a file in an existing directory (a missing file is created: a new store), or create the directory first`,
    );
    expect(fs.existsSync(path.join(root, 'nonexistent'))).toBe(false);
    expect(fs.existsSync(dataDir)).toBe(false);
    // Its directory a file: refused too.
    const file = path.join(root, 'afile');
    fs.writeFileSync(file, 'x\n');
    const below = await thrown(() =>
      createSessionService(loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: path.join(file, 'x.sqlite') }, false), { quiet: true }),
    );
    expect((below as Error).message).toMatch(/^SQLITE_EVENTS_FILE=\S+afile\/x\.sqlite: \S+afile is not a directory: /);
  });

  it.each(['read-models.sqlite', 'read-models.sqlite-wal', 'service.lock', 'service.lock.json'])(
    'given SQLITE_EVENTS_FILE naming DATA_DIR/%s, when the service starts, then it is refused by name: the stores would share one file (ncverify49 F3)',
    async (name) => {
      const root = tempDir();
      const dataDir = path.join(root, 'data');
      fs.mkdirSync(dataDir);
      const err = await thrown(() =>
        createSessionService(loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: path.join(dataDir, name) }, false), { quiet: true }),
      );
      expect(err).toBeInstanceOf(ConfigurationError);
      expect((err as Error).message).toBe(
        `SQLITE_EVENTS_FILE=${path.join(dataDir, name)}: is a file the service keeps in DATA_DIR (${name}): the event store and it would share one file: point SQLITE_EVENTS_FILE at a file of its own, e.g. <DATA_DIR>/events.sqlite (the default) or a file on another volume`,
      );
      expect(fs.readdirSync(dataDir)).toEqual([]);
    },
  );

  describe('given SQLITE_EVENTS_FILE reaching DATA_DIR/read-models.sqlite through a symbolic link (newcomer ncops73 F1: started, then every write answered 503 and the errors blamed a newer build)', () => {
    /** `root` with `data` (DATA_DIR, real) and `link` (a symbolic link to it). */
    const layout = () => {
      const root = tempDir();
      const dataDir = path.join(root, 'data');
      fs.mkdirSync(dataDir);
      fs.symlinkSync(dataDir, path.join(root, 'link'));
      return { root, dataDir, link: path.join(root, 'link') };
    };
    /** The refusal of starting with `dataDir` and `eventsFile`, expected to name read-models.sqlite at `real`. */
    const refusedAs = async (dataDir: string, eventsFile: string, real: string) => {
      const err = await thrown(() => createSessionService(loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: eventsFile }, false), { quiet: true }));
      expect(err).toBeInstanceOf(ConfigurationError);
      expect((err as Error).message).toBe(
        `SQLITE_EVENTS_FILE=${eventsFile}: is a file the service keeps in DATA_DIR (read-models.sqlite, reached through a symbolic link: ${real}): the event store and it would share one file: point SQLITE_EVENTS_FILE at a file of its own, e.g. <DATA_DIR>/events.sqlite (the default) or a file on another volume`,
      );
    };

    it("refuses DATA_DIR reached through a link, SQLITE_EVENTS_FILE the real read-models.sqlite (the finding's layout), and the reverse", async () => {
      const { dataDir, link } = layout();
      const real = path.join(fs.realpathSync(dataDir), 'read-models.sqlite');
      await refusedAs(link, path.join(dataDir, 'read-models.sqlite'), real);
      await refusedAs(dataDir, path.join(link, 'read-models.sqlite'), real);
      expect(fs.readdirSync(dataDir)).toEqual([]);
    });

    it('refuses SQLITE_EVENTS_FILE a symbolic link to it: dangling (absolute or relative), a link to a link, or to the existing file', async () => {
      const { root, dataDir } = layout();
      const real = path.join(fs.realpathSync(dataDir), 'read-models.sqlite');
      fs.symlinkSync(path.join(dataDir, 'read-models.sqlite'), path.join(dataDir, 'ev.sqlite'));
      await refusedAs(dataDir, path.join(dataDir, 'ev.sqlite'), real);
      fs.symlinkSync('read-models.sqlite', path.join(dataDir, 'relative.sqlite'));
      await refusedAs(dataDir, path.join(dataDir, 'relative.sqlite'), real);
      fs.symlinkSync(path.join(dataDir, 'ev.sqlite'), path.join(root, 'chain.sqlite'));
      await refusedAs(dataDir, path.join(root, 'chain.sqlite'), real);
      fs.writeFileSync(path.join(dataDir, 'read-models.sqlite'), '');
      await refusedAs(dataDir, path.join(dataDir, 'ev.sqlite'), real);
      expect(fs.statSync(path.join(dataDir, 'read-models.sqlite')).size).toBe(0);
    });

    it('refuses the default DATA_DIR/events.sqlite made a symbolic link to it, naming DATA_DIR (left by ncops73 F1), and creates nothing', async () => {
      const { dataDir } = layout();
      const real = path.join(fs.realpathSync(dataDir), 'read-models.sqlite');
      fs.symlinkSync('read-models.sqlite', path.join(dataDir, 'events.sqlite'));
      const err = await thrown(() => createSessionService(loadServiceConfig({ DATA_DIR: dataDir }, false), { quiet: true }));
      expect(err).toBeInstanceOf(ConfigurationError);
      expect((err as Error).message).toBe(
        `DATA_DIR=${dataDir}: its events.sqlite is a symbolic link to a file the service keeps in DATA_DIR (read-models.sqlite, reached through it: ${real}): the event store and it would share one file: remove the link ${path.join(dataDir, 'events.sqlite')} (with no events file, the service starts a new store there), or point it at the event store's own file`,
      );
      expect(fs.readdirSync(dataDir)).toEqual(['events.sqlite']);
    });

    it('still accepts an events file of its own reached through links', async () => {
      const { root, dataDir, link } = layout();
      fs.mkdirSync(path.join(root, 'store'));
      fs.symlinkSync(path.join(root, 'store', 'events.sqlite'), path.join(root, 'events-link.sqlite'));
      expect(() => requireEventsFileDirectory({ dataDir: link, sqliteEventsFile: path.join(root, 'events-link.sqlite') })).not.toThrow();
      expect(() => requireEventsFileDirectory({ dataDir, sqliteEventsFile: path.join(link, 'events-2.sqlite') })).not.toThrow();
    });
  });

  it('given SQLITE_EVENTS_FILE that is a directory, when the service starts, then it is refused by name, not by SQLite (ncoperator F1: exit 1, "unable to open database file")', async () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const asDir = path.join(root, 'store');
    fs.mkdirSync(asDir);
    const err = await thrown(() => createSessionService(loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: asDir }, false), { quiet: true }));
    expect(err).toBeInstanceOf(ConfigurationError);
    expect((err as Error).message).toBe(
      `SQLITE_EVENTS_FILE=${asDir}: is a directory, not a file: point SQLITE_EVENTS_FILE at a file in an existing directory (a missing file is created: a new store)`,
    );
    expect(fs.existsSync(dataDir)).toBe(false);
  });

  it("given the compaction claims' directory this process may not write (left by a restore run as root), then the start is refused naming it (newcomer ncfiles63 F5: every model compaction ran without its claim)", () => {
    const root = tempDir();
    const refusing = (refused: string, code: string) => (p: string) => {
      if (p === refused) throw Object.assign(new Error(code), { code });
    };
    // The default store: named by DATA_DIR.
    const dataDir = path.join(root, 'data');
    const claims = path.join(dataDir, 'events-claims');
    const config = loadServiceConfig({ DATA_DIR: dataDir }, false);
    expect(() => requireWritableClaimsDirectory(config, refusing(claims, 'EACCES'))).not.toThrow(); // missing: created when needed
    fs.mkdirSync(claims, { recursive: true });
    expect(() => requireWritableClaimsDirectory(config, refusing(claims, 'EACCES'))).toThrow(
      new RegExp(
        `^DATA_DIR=${dataDir}: the compaction claims' directory ${claims} is not writable by this process \\(EACCES, uid \\d+ gid \\d+\\): compactions through the model would run without their claim: make it the service's user's \\(chown -R on the claims directory\\), or remove it while no replica runs`,
      ),
    );
    expect(() => requireWritableClaimsDirectory(config, () => undefined)).not.toThrow();
    // A lock file in it the service may not open (left by root): refused naming it (newcomer ncrecheck63 F4).
    const lockFile = path.join(claims, 'abc.lock');
    fs.writeFileSync(lockFile, '');
    expect(() => requireWritableClaimsDirectory(config, refusing(lockFile, 'EACCES'))).toThrow(
      new RegExp(`^DATA_DIR=${dataDir}: the compaction claims' lock file ${lockFile} is not writable by this process \\(EACCES`),
    );
    // A file where the directory should be.
    fs.rmSync(claims, { recursive: true });
    fs.writeFileSync(claims, '');
    expect(() => requireWritableClaimsDirectory(config, () => undefined)).toThrow(
      new RegExp(`^DATA_DIR=${dataDir}: the compaction claims' directory ${claims} is not a directory: `),
    );
    // A store elsewhere: named by SQLITE_EVENTS_FILE.
    const eventsFile = path.join(root, 'store', 'ev.sqlite');
    fs.mkdirSync(path.join(root, 'store', 'ev-claims'), { recursive: true });
    const elsewhere = loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: eventsFile }, false);
    expect(() => requireWritableClaimsDirectory(elsewhere, refusing(path.join(root, 'store', 'ev-claims'), 'EPERM'))).toThrow(
      new RegExp(`^SQLITE_EVENTS_FILE=${eventsFile}: the compaction claims' directory .*ev-claims is not writable by this process \\(EPERM`),
    );
  });

  it('given SQLITE_EVENTS_FILE a symbolic link, then the directory and files checked are those beside the real file, where SQLite writes (newcomer ncrecheck63b F2)', () => {
    const root = tempDir();
    const realDir = path.join(root, 'real');
    const linkDir = path.join(root, 'links');
    fs.mkdirSync(realDir);
    fs.mkdirSync(linkDir);
    fs.writeFileSync(path.join(realDir, 'ev.sqlite'), '');
    fs.writeFileSync(path.join(realDir, 'ev.sqlite-wal'), '');
    const link = path.join(linkDir, 'ev.sqlite');
    fs.symlinkSync(path.join(realDir, 'ev.sqlite'), link);
    const config = loadServiceConfig({ DATA_DIR: path.join(root, 'data'), SQLITE_EVENTS_FILE: link }, false);
    const refusing = (refused: string) => (p: string) => {
      if (p === refused) throw Object.assign(new Error('EACCES'), { code: 'EACCES' });
    };
    // nothing is written beside the link
    expect(() => requireEventsFileDirectory(config, refusing(linkDir))).not.toThrow();
    expect(() => requireEventsFileDirectory(config, refusing(realDir))).toThrow(
      new RegExp(`^SQLITE_EVENTS_FILE=${link}: its directory ${realDir} is not writable`),
    );
    expect(() => requireEventsFileDirectory(config, refusing(path.join(realDir, 'ev.sqlite-wal')))).toThrow(
      new RegExp(`^SQLITE_EVENTS_FILE=${link}: ${realDir}/ev.sqlite-wal is not writable`),
    );
  });

  it('given SQLITE_EVENTS_FILE in a directory (or a file in it) this process may not write, then it is refused by name, the user and the fix (ncoperator F1)', () => {
    const root = tempDir();
    const dataDir = path.join(root, 'data');
    const eventsFile = path.join(root, 'store', 'e.sqlite');
    fs.mkdirSync(path.dirname(eventsFile));
    const config = loadServiceConfig({ DATA_DIR: dataDir, SQLITE_EVENTS_FILE: eventsFile }, false);
    const refusing = (refused: string, code: string) => (p: string) => {
      if (p === refused) throw Object.assign(new Error(code), { code });
    };
    // Root may write anything: the access check is given the refusal a non-root user would meet.
    expect(() => requireEventsFileDirectory(config, refusing(path.dirname(eventsFile), 'EACCES'))).toThrow(
      new RegExp(
        `^SQLITE_EVENTS_FILE=${eventsFile}: its directory ${path.dirname(eventsFile)} is not writable by this process \\(EACCES, uid \\d+ gid \\d+\\): make it writable by the service's user \\(chown or chmod; on Kubernetes a securityContext fsGroup for the volume\\), or point SQLITE_EVENTS_FILE at a file in a writable directory$`,
      ),
    );
    expect(() => requireEventsFileDirectory(config, refusing(path.dirname(eventsFile), 'EROFS'))).toThrow(
      new RegExp(`^SQLITE_EVENTS_FILE=${eventsFile}: its directory ${path.dirname(eventsFile)} is on a read-only file system \\(EROFS\\)`),
    );
    // A missing file is not checked (it is created); an existing one, and its -wal, must be writable.
    expect(() => requireEventsFileDirectory(config, refusing(eventsFile, 'EACCES'))).not.toThrow();
    fs.writeFileSync(eventsFile, '');
    fs.writeFileSync(`${eventsFile}-wal`, '');
    expect(() => requireEventsFileDirectory(config, refusing(eventsFile, 'EACCES'))).toThrow(
      new RegExp(`^SQLITE_EVENTS_FILE=${eventsFile}: is not writable by this process \\(EACCES`),
    );
    expect(() => requireEventsFileDirectory(config, refusing(`${eventsFile}-wal`, 'EPERM'))).toThrow(
      new RegExp(`^SQLITE_EVENTS_FILE=${eventsFile}: ${eventsFile}-wal is not writable by this process \\(EPERM`),
    );
    expect(() => requireEventsFileDirectory(config)).not.toThrow();
  });

  it('DATA_DIR that is a file: says so instead of EEXIST from mkdir', () => {
    const file = path.join(tempDir(), 'passwd');
    fs.writeFileSync(file, 'x\n');
    expect(() => ensureDataDir(file)).toThrow(
      new Error(`DATA_DIR=${file}: is a file, not a directory: point DATA_DIR at a directory (it is created when missing)`),
    );
    expect(() => ensureDataDir(path.join(file, 'below'))).toThrow(/^DATA_DIR=\S+below: cannot be created \(ENOTDIR\)/);
    const fresh = path.join(tempDir(), 'a', 'b');
    ensureDataDir(fresh);
    expect(fs.statSync(fresh).isDirectory()).toBe(true);
  });

  it('HOST that does not resolve or is not this machine, PORT in use: names the variable', async () => {
    const notFound = listenError(await listenFailure(0, 'nohost.invalid'), 'nohost.invalid', 0);
    expect(notFound).toBeInstanceOf(ConfigurationError);
    expect((notFound as Error).message).toMatch(/^HOST=nohost\.invalid: the host name was not found \(E\w+\): use an address of this machine/);
    expect((listenError(await listenFailure(0, '192.0.2.1'), '192.0.2.1', 0) as Error).message).toMatch(/^HOST=192\.0\.2\.1: not an address of this machine/);
    const holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as net.AddressInfo).port;
    try {
      expect((listenError(await listenFailure(port, '127.0.0.1'), '127.0.0.1', port) as Error).message).toBe(
        `PORT=${port}: already in use on 127.0.0.1 (EADDRINUSE): stop the other process or choose another PORT (0 picks a free one)`,
      );
    } finally {
      holder.close();
    }
    const other = new Error('something else');
    expect(listenError(other, 'h', 1)).toBe(other);
  });

  it('a KURRENTDB_CONNECTION_STRING the driver cannot parse: names the variable, masks a password', () => {
    expect(() => openEventStore(loadServiceConfig({ KURRENTDB_CONNECTION_STRING: 'garbage' }, false))).toThrow(
      /^KURRENTDB_CONNECTION_STRING=garbage: not a KurrentDB connection string \(Unexpected .*\): use e\.g\. kurrentdb:\/\/localhost:2113\?tls=false$/,
    );
    const err = (() => {
      try {
        openEventStore(loadServiceConfig({ KURRENTDB_CONNECTION_STRING: 'http://admin:hunter2-secret@k:2113' }, false));
      } catch (e) {
        return e as Error;
      }
      throw new Error('expected a refusal');
    })();
    expect(err).toBeInstanceOf(ConfigurationError);
    expect(err.message).toMatch(/^KURRENTDB_CONNECTION_STRING=http:\/\/admin:\*\*\*@k:2113: /);
    expect(err.message).not.toContain('hunter2');
  });
});

describe('every start-up refusal has the one shape NAME=<value as given, credentials masked>: <what is wrong>: <what to fix>', () => {
  /** The message of what `load` throws. */
  const refusalOf = (load: () => unknown): string => {
    try {
      load();
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error('expected a refusal');
  };
  const service = (env: NodeJS.ProcessEnv) => () => loadServiceConfig(env, false);
  const summarizer = (env: NodeJS.ProcessEnv) => () => summarizerFromEnv(env);

  it.each<[string, () => unknown, string]>([
    ['a number out of range', service({ PORT: '70000' }), 'PORT=70000: out of range: use a TCP port (0 picks a free one), an integer from 0 to 65535'],
    [
      'a number not in plain digits (shown trimmed: white space around a value is no part of it)',
      service({ MAX_WAIT_MS: ' 1e3' }),
      'MAX_WAIT_MS=1e3: not an integer in plain decimal digits: use a time in milliseconds, an integer from 0 to 60000',
    ],
    ['one of a list', service({ LOG_FORMAT: 'yaml' }), 'LOG_FORMAT=yaml: not one of its values: use one of pretty, json (any case)'],
    [
      'a boolean',
      service({ PROJECTOR_WORKER: 'yes' }),
      'PROJECTOR_WORKER=yes: not a boolean: use true, false, 1 or 0 (any case), or unset it for the default (false)',
    ],
    ['NATS_PREFIX', service({ NATS_PREFIX: 'a.b' }), 'NATS_PREFIX=a.b: not a subject token: use 1 to 32 letters, digits, _ or -'],
    [
      'API_KEYS (never its value)',
      service({ API_KEYS: 'short:tenantA' }),
      'API_KEYS=***: the key of entry 1 is shorter than 8 characters: use keys of at least 8 characters',
    ],
    [
      'DATABASE_URL (password masked)',
      service({ DATABASE_URL: 'mysql://u:hunter2@db/x' }),
      'DATABASE_URL=mysql://u:***@db/x: not a PostgreSQL URL (scheme mysql:): use postgres:// or postgresql://, e.g. postgres://user:password@host:5432/database',
    ],
    [
      "a summarizer's number",
      summarizer({ SUMMARIZER_TIMEOUT_MS: '0' }),
      'SUMMARIZER_TIMEOUT_MS=0: out of range: use a timeout in milliseconds, an integer from 1 to 86400000',
    ],
    [
      'OPENAI_BASE_URL not http(s) (credentials and key parameter masked)',
      summarizer({ OPENAI_BASE_URL: 'ftp://u:hunter2@h/v1?api_key=sk-1' }),
      'OPENAI_BASE_URL=ftp://u:***@h/v1?api_key=***: not an http(s) URL (scheme ftp:): use http or https, e.g. https://api.openai.com/v1',
    ],
    [
      'SUMMARIZER_MODEL blank',
      summarizer({ SUMMARIZER_MODEL: '  ' }),
      'SUMMARIZER_MODEL="  ": blank: use a model name, e.g. gpt-4o-mini (or leave it unset for the default)',
    ],
  ])('%s', (_what, load, message) => {
    expect(refusalOf(load)).toBe(message);
  });
});

describe('withoutCredentials: the one mask of every URL in a log line or message', () => {
  it('masks a password or a lone token in a URL, keeps the rest', () => {
    expect(withoutCredentials('kurrentdb://admin:changeit@k:2113?tls=false')).toBe('kurrentdb://admin:***@k:2113?tls=false');
    expect(withoutCredentials('nats://s3cret-token@n:4222')).toBe('nats://***@n:4222');
    expect(withoutCredentials('nats://n:4222')).toBe('nats://n:4222');
    expect(withoutCredentials('garbage')).toBe('garbage');
  });

  it('masks credentials without a scheme, passwords holding @ / or , (the last @ counts), and password parameters', () => {
    expect(withoutCredentials('admin:hunter2@db:5432/events')).toBe('admin:***@db:5432/events');
    expect(withoutCredentials('postgres://admin:hun@t/er,2@db/events')).toBe('postgres://admin:***@db/events');
    expect(withoutCredentials('postgres://admin@db/events?sslmode=require&password=hunter2')).toBe('postgres://***@db/events?sslmode=require&password=***');
    expect(withoutCredentials('host=db password=hunter2 user=admin')).toBe('host=db password=*** user=admin');
    expect(withoutCredentials('nats://a:hunter2@n1:4222,tok3n@n2:4222,n3:4222', { list: true })).toBe('nats://a:***@n1:4222,***@n2:4222,n3:4222');
  });

  it('the NATS start-up line shows every server without its credentials, with or without a scheme', () => {
    const line = startupNatsLine({ natsPrefix: 'smc', natsUrl: 'nats://svc:hunter2@n1:4222, tok3n-secret@n2:4222,n3:4222' });
    expect(line).toBe('NATS: commands on smc.commands.>, results on smc.results.>, decisions on smc.decisions.> (nats://svc:***@n1:4222,***@n2:4222,n3:4222)');
  });

  it('a model endpoint URL (everyQueryValue): every query and fragment value masked, whatever its name (newcomer ncops73 F6: sig= and code= were shown)', () => {
    const mask = (url: string) => withoutCredentials(url, { everyQueryValue: true });
    expect(mask('http://127.0.0.1:4170/v1?sig=SECRETQ#f')).toBe('http://127.0.0.1:4170/v1?sig=***#***');
    expect(mask('https://u:pw@x.openai.azure.com/openai/v1?api-version=2024-10-21&code=c0de&sv=2&bare&&api_key=k')).toBe(
      'https://u:***@x.openai.azure.com/openai/v1?api-version=***&code=***&sv=***&***&&api_key=***',
    );
    expect(mask('http://h/v1')).toBe('http://h/v1');
    expect(mask('h/v1?x=1?y=2')).toBe('h/v1?x=***?y=***');
    // without the option, only password-like names, as for DATABASE_URL or NATS_URL
    expect(withoutCredentials('http://h/v1?sig=abc&token=t')).toBe('http://h/v1?sig=abc&token=***');
  });

  it.each([
    ['a fragment', 'http://127.0.0.1:4170/v1?sig=SECRETQ#f', 'OPENAI_BASE_URL=http://127.0.0.1:4170/v1?sig=***#***: it has a fragment'],
    ['a parameter twice', 'http://h/v1?code=SECRETQ&code=SECRETQ', 'OPENAI_BASE_URL=http://h/v1?code=***&code=***: its query names the parameter "code" twice'],
    ['not http(s)', 'ftp://h/v1?sig=SECRETQ', 'OPENAI_BASE_URL=ftp://h/v1?sig=***: not an http(s) URL'],
    ['not a URL', 'http://[bad/v1?sig=SECRETQ', 'OPENAI_BASE_URL=http://[bad/v1?sig=***: not a URL'],
  ])('OPENAI_BASE_URL refused for %s: no query value in the message (newcomer ncops73 F6)', (_what, url, start) => {
    let message = '';
    try {
      summarizerFromEnv({ OPENAI_BASE_URL: url });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message.startsWith(start)).toBe(true);
    expect(message).not.toContain('SECRETQ');
  });

  it('OPENAI_BASE_URL that is not a URL: the message masks its password', () => {
    let message = '';
    try {
      summarizerFromEnv({ OPENAI_BASE_URL: 'http://me:hunter2@[bad/v1' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/^OPENAI_BASE_URL=http:\/\/me:\*\*\*@\[bad\/v1: not a URL: use /);
  });
});

describe('the read-model rebuild needs an existing store', () => {
  it('refuses a DATA_DIR that does not exist, is a file, or holds no events file; names SQLITE_EVENTS_FILE when that is set', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rebuild-store-'));
    try {
      const missing = path.join(dir, 'typo');
      expect(() => requireExistingSqliteStore(loadServiceConfig({ DATA_DIR: missing }, false))).toThrow(
        new Error(`DATA_DIR=${missing}: does not exist: point DATA_DIR at the service's data directory`),
      );
      fs.writeFileSync(path.join(dir, 'file'), '');
      expect(() => requireExistingSqliteStore(loadServiceConfig({ DATA_DIR: path.join(dir, 'file') }, false))).toThrow(/^DATA_DIR=\S+file: is a file/);
      expect(() => requireExistingSqliteStore(loadServiceConfig({ DATA_DIR: dir }, false))).toThrow(
        new Error(
          `DATA_DIR=${dir}: no event store (${path.join(dir, 'events.sqlite')} does not exist): point DATA_DIR at the directory the service wrote its events to`,
        ),
      );
      expect(() => requireExistingSqliteStore(loadServiceConfig({ DATA_DIR: dir, SQLITE_EVENTS_FILE: path.join(dir, 'shared.sqlite') }, false))).toThrow(
        /^SQLITE_EVENTS_FILE=\S+shared\.sqlite: no event store/,
      );
      fs.writeFileSync(path.join(dir, 'events.sqlite'), '');
      expect(() => requireExistingSqliteStore(loadServiceConfig({ DATA_DIR: dir }, false))).not.toThrow();
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
