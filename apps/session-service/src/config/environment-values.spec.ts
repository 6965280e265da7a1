import * as fc from 'fast-check';
import * as path from 'node:path';
import { ENVIRONMENT_VARIABLES, usage } from './command-line';
import { EMPTY_MEANS_UNSET } from './environment-values';
import { loadServiceConfig } from './service-config';

/** The refusal message of `loadServiceConfig(env)`, or undefined when it loads. */
const refusal = (env: NodeJS.ProcessEnv): string | undefined => {
  try {
    loadServiceConfig(env, false);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
};

/** White space a template or a shell may leave in a value (space, tab, newline, carriage return, no-break space). */
const whiteSpace = fc.array(fc.constantFrom(' ', '\t', '\n', '\r', '\u00a0'), { maxLength: 4 }).map((cs) => cs.join(''));

describe('one rule for blank values: refused, naming the variable, unless documented as unset', () => {
  it('refuses every documented variable set to an empty or white-space-only value, with one line naming it and saying to unset it', () => {
    const refusable = ENVIRONMENT_VARIABLES.filter((v) => !EMPTY_MEANS_UNSET.has(v.name));
    fc.assert(
      fc.property(fc.constantFrom(...refusable), whiteSpace, (variable, value) => {
        const message = refusal({ [variable.name]: value });
        expect(message).toBeDefined();
        expect(message!.startsWith(`${variable.name}=${JSON.stringify(value)}: set but blank: unset it for the default (`)).toBe(true);
        expect(message).not.toContain('\n');
      }),
    );
  });

  it('refuses a blank DATABASE_URL (it ran on embedded SQLite: each replica its own log), DATA_DIR, a number and a boolean', () => {
    expect(refusal({ DATABASE_URL: '  ' })).toBe('DATABASE_URL="  ": set but blank: unset it for the default (the embedded SQLite store), or give it a value');
    expect(refusal({ DATA_DIR: ' ' })).toMatch(/^DATA_DIR=" ": set but blank: /);
    expect(refusal({ PORT: '' })).toMatch(/^PORT="": set but blank: /);
    expect(refusal({ SQLITE_WRITER_THREAD: ' ' })).toMatch(/^SQLITE_WRITER_THREAD=" ": set but blank: /);
  });

  it('takes OPENAI_BASE_URL and OPENAI_API_KEY empty as unset, as documented', () => {
    expect(refusal({ OPENAI_BASE_URL: '', OPENAI_API_KEY: '  ' })).toBeUndefined();
  });
});

describe('one rule for white space around a value: not part of it', () => {
  it('trims HOST, DATA_DIR, SQLITE_EVENTS_FILE, NATS_PREFIX and NATS_USER as it trims numbers and booleans', () => {
    const config = loadServiceConfig(
      {
        HOST: ' 127.0.0.1 ',
        DATA_DIR: ' /tmp/trimmed-data ',
        SQLITE_EVENTS_FILE: '\t/tmp/x/e.sqlite ',
        NATS_PREFIX: ' ncx ',
        NATS_URL: ' nats://n1:4222 ',
        NATS_USER: ' bob ',
      },
      false,
    );
    expect(config).toMatchObject({
      host: '127.0.0.1',
      dataDir: path.resolve('/tmp/trimmed-data'),
      sqliteEventsFile: path.resolve('/tmp/x/e.sqlite'),
      natsPrefix: 'ncx',
      natsUrl: 'nats://n1:4222',
      natsUser: 'bob',
    });
  });
});

describe('one rule for the case of enumerated values: any case, as the booleans', () => {
  it('takes LOG_LEVEL, LOG_FORMAT, REQUEST_LOG_LEVEL and TRUST_PROXY words in any case', () => {
    expect(loadServiceConfig({ LOG_LEVEL: 'INFO', LOG_FORMAT: 'JSON', REQUEST_LOG_LEVEL: 'Warn', TRUST_PROXY: 'False' }, true)).toMatchObject({
      logLevel: 'info',
      logFormat: 'json',
      requestLogLevel: 'warn',
      trustProxy: false,
    });
    expect(refusal({ TRUST_PROXY: 'TRUE' })).toMatch(/^TRUST_PROXY=TRUE: trusts every peer/);
    expect(refusal({ LOG_LEVEL: 'LOUD' })).toMatch(
      /^LOG_LEVEL=LOUD: not one of its values: use one of fatal, error, warn, info, debug, trace, silent \(any case\)$/,
    );
  });
});

describe('--help states the rules', () => {
  it('says that a blank value stops the start-up, naming the variables where empty counts as unset', () => {
    const text = usage();
    expect(text).toContain('A variable set to an empty or blank value stops the start-up');
    for (const name of EMPTY_MEANS_UNSET) expect(text).toMatch(new RegExp(`except .*${name}.*empty counts as unset`));
    expect([...EMPTY_MEANS_UNSET].sort()).toEqual(['BUILD_COMMIT', 'OPENAI_API_KEY', 'OPENAI_BASE_URL']);
  });
});
