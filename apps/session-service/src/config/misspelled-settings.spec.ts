/**
 * A misspelled setting (newcomer ncoperator F9: `DATA_DIRR=/tmp/x` was ignored without a word and the
 * service ran on ./data): one warn line per variable whose name is a near miss of a documented one.
 */
import { ENVIRONMENT_VARIABLES } from './command-line';
import { ConfigurationError } from './configuration-error';
import { misspelledSettingLines, refuseMisspelledSecuritySettings } from './misspelled-settings';
import { loadServiceConfig } from './service-config';

/** An environment as a shell, a container, npm and Kubernetes give it, none of it the service's. */
const TYPICAL: NodeJS.ProcessEnv = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: '/home/app',
  PWD: '/app',
  OLDPWD: '/',
  NODE_ENV: 'production',
  NODE_OPTIONS: '--max-old-space-size=512',
  HOSTNAME: 'session-service-7d9f',
  TERM: 'xterm-256color',
  LANG: 'C.UTF-8',
  LC_ALL: 'C.UTF-8',
  USER: 'app',
  LOGNAME: 'app',
  SHELL: '/bin/bash',
  SHLVL: '1',
  TZ: 'UTC',
  TMPDIR: '/tmp',
  COLORTERM: 'truecolor',
  INIT_CWD: '/app',
  EDITOR: 'vi',
  _: '/usr/local/bin/npm',
  npm_command: 'start',
  npm_lifecycle_event: 'start',
  npm_lifecycle_script: 'node dist/apps/session-service/src/main.js',
  npm_node_execpath: '/usr/local/bin/node',
  npm_execpath: '/usr/local/lib/node_modules/npm/bin/npm-cli.js',
  npm_package_name: 'session-memory-compaction',
  npm_package_version: '0.1.0',
  npm_package_json: '/app/package.json',
  npm_config_cache: '/home/app/.npm',
  npm_config_user_agent: 'npm/10.8.2 node/v20.20.2 linux x64',
  npm_config_prefix: '/usr/local',
  npm_config_local_prefix: '/app',
  npm_config_global_prefix: '/usr/local',
  npm_config_node_gyp: '/usr/local/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js',
  npm_config_noproxy: '',
  TS_NODE_BASEURL: './dist',
  KUBERNETES_SERVICE_HOST: '10.96.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  KUBERNETES_PORT: 'tcp://10.96.0.1:443',
  NATS_SERVICE_HOST: '10.96.0.9',
  NATS_PORT: 'tcp://10.96.0.9:4222',
  POSTGRES_PORT: 'tcp://10.96.0.7:5432',
  REBUILD_PAGE_SIZE: '500',
  REBUILD_PROGRESS_MS: '1000',
};

describe('a variable whose name is a near miss of a setting: one warn line, "X is not a setting of the service: did you mean Y?"', () => {
  it('names a misspelled or miscased setting and the setting meant, one line each, never the value', () => {
    expect(misspelledSettingLines({ DATA_DIRR: '/srv/data', SUMARIZER_MODEL: 'gpt-4o', data_dir: '/x', OPENAI_API_KE: 'sk-secret-123' })).toEqual([
      'DATA_DIRR is not a setting of the service: did you mean DATA_DIR?',
      'SUMARIZER_MODEL is not a setting of the service: did you mean SUMMARIZER_MODEL?',
      'data_dir is not a setting of the service: did you mean DATA_DIR?',
      'OPENAI_API_KE is not a setting of the service: did you mean OPENAI_API_KEY?',
    ]);
    expect(misspelledSettingLines({ REQUEST_TIMOUT_MS: '1000', NATS_ULR: 'nats://n:4222', API_KEY: 'k' })).toEqual([
      'REQUEST_TIMOUT_MS is not a setting of the service: did you mean REQUEST_TIMEOUT_MS?',
      'NATS_ULR is not a setting of the service: did you mean NATS_URL?',
      'API_KEY is not a setting of the service: did you mean API_KEYS?',
    ]);
  });

  it('names a setting whose unit was left out of its name or replaced (newcomer ncops67 F5: SHUTDOWN_TIMEOUT=5000 started silently)', () => {
    expect(misspelledSettingLines({ SHUTDOWN_TIMEOUT: '5000', REQUEST_TIMEOUT: '5', MAX_WAIT: '1', max_wait_seconds: '2', MAX_BODY: '9' })).toEqual([
      'SHUTDOWN_TIMEOUT is not a setting of the service: did you mean SHUTDOWN_TIMEOUT_MS (its unit is in its name)?',
      'REQUEST_TIMEOUT is not a setting of the service: did you mean REQUEST_TIMEOUT_MS (its unit is in its name)?',
      'MAX_WAIT is not a setting of the service: did you mean MAX_WAIT_MS (its unit is in its name)?',
      'max_wait_seconds is not a setting of the service: did you mean MAX_WAIT_MS (its unit is in its name)?',
      'MAX_BODY is not a setting of the service: did you mean MAX_BODY_BYTES (its unit is in its name)?',
    ]);
  });

  it('says nothing of the settings themselves, every documented one set', () => {
    expect(misspelledSettingLines(Object.fromEntries(ENVIRONMENT_VARIABLES.map((v) => [v.name, 'x'])))).toEqual([]);
  });

  it('says nothing of a typical environment (shell, container, npm, Kubernetes, the rebuild’s own settings)', () => {
    expect(misspelledSettingLines(TYPICAL)).toEqual([]);
    expect(misspelledSettingLines({ ...TYPICAL, DATA_DIRR: '/srv/data' })).toEqual(['DATA_DIRR is not a setting of the service: did you mean DATA_DIR?']);
  });
});

describe('a near miss of a security setting left unset refuses the start (newcomer confighints F2: API_KEY=secret started without authentication)', () => {
  /** The refusal of starting with `env` (loaded as the service loads it), or undefined when it starts. */
  function refusal(env: NodeJS.ProcessEnv): ConfigurationError | undefined {
    try {
      refuseMisspelledSecuritySettings({ ...loadServiceConfig(env, false), env });
    } catch (err) {
      if (err instanceof ConfigurationError) return err;
      throw err;
    }
    return undefined;
  }

  it('refuses API_KEY (or api_keys, API_KEYZ) without API_KEYS: exit code 2 in main, naming both, the value masked, and the fix', () => {
    expect(refusal({ ...TYPICAL, API_KEY: 'secret' })?.message).toBe(
      'API_KEY=***: not a setting of the service, but a near miss of API_KEYS, which is unset: the service starts without authentication (open development mode: every request is tenant "default"): rename API_KEY to API_KEYS, or unset API_KEY to run so on purpose',
    );
    expect(refusal({ api_keys: 'k:t' })?.message).toMatch(/^api_keys=\*\*\*: not a setting of the service, but a near miss of API_KEYS, which is unset: /);
    expect(refusal({ API_KEYZ: 'k:t' })?.refusal.variable).toBe('API_KEYZ');
    expect(refusal({ API_KEY: 'secret' })?.message).not.toMatch(/secret/);
  });

  it('keeps a warning when the setting is set (API_KEY beside API_KEYS), or the near miss is blank', () => {
    expect(refusal({ API_KEY: 'secret', API_KEYS: 'key-12345:t' })).toBeUndefined();
    expect(refusal({ API_KEY: '' })).toBeUndefined();
    expect(refusal({ API_KEY: '  ' })).toBeUndefined();
    expect(misspelledSettingLines({ API_KEY: 'secret', API_KEYS: 'key-12345:t' })).toEqual(['API_KEY is not a setting of the service: did you mean API_KEYS?']);
  });

  it('refuses a near miss of NATS_USER or NATS_PASSWORD when NATS_URL carries no credentials and the setting is unset', () => {
    const nats = { NATS_URL: 'nats://n1:4222' };
    expect(refusal({ ...nats, NATS_USR: 'svc' })?.message).toBe(
      'NATS_USR=***: not a setting of the service, but a near miss of NATS_USER, which is unset: the service connects to NATS_URL without credentials: rename NATS_USR to NATS_USER, or unset NATS_USR to run so on purpose',
    );
    expect(refusal({ ...nats, NATS_USER: 'svc', NATS_PASWORD: 'pw' })?.message).toMatch(
      /^NATS_PASWORD=\*\*\*: not a setting of the service, but a near miss of NATS_PASSWORD, which is unset: the service connects to NATS_URL without a password: /,
    );
    // credentials in NATS_URL, the setting set, or no NATS at all: a warning only
    expect(refusal({ NATS_URL: 'nats://svc:pw@n1:4222', NATS_USR: 'svc' })).toBeUndefined();
    expect(refusal({ ...nats, NATS_USER: 'svc', NATS_PASSWORD: 'pw', NATS_USR: 'x' })).toBeUndefined();
    expect(refusal({ NATS_USR: 'svc' })).toBeUndefined();
  });

  it('refuses a near miss of OPENAI_BASE_URL when OPENAI_API_KEY is set (conversations would go to api.openai.com), its credentials masked', () => {
    expect(refusal({ OPENAI_API_KEY: 'sk-x', OPENAI_BASE_UR: 'https://u:pw@gateway.example/v1' })?.message).toBe(
      'OPENAI_BASE_UR=https://u:***@gateway.example/v1: not a setting of the service, but a near miss of OPENAI_BASE_URL, which is unset: the service sends conversations to summarize to the default endpoint, https://api.openai.com/v1, with OPENAI_API_KEY: rename OPENAI_BASE_UR to OPENAI_BASE_URL, or unset OPENAI_BASE_UR to run so on purpose',
    );
    expect(refusal({ OPENAI_BASE_UR: 'http://localhost:8000/v1' })).toBeUndefined();
    expect(refusal({ OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://localhost:8000/v1', OPENAI_BASE_UR: 'x' })).toBeUndefined();
  });

  it('refuses the names other tools read for OPENAI_BASE_URL (OPENAI_API_BASE, …) when OPENAI_API_KEY is set and OPENAI_BASE_URL is not (newcomer ncops73 F2: conversations went to api.openai.com without a word)', () => {
    expect(refusal({ ...TYPICAL, OPENAI_API_KEY: 'sk-x', OPENAI_API_BASE: 'http://127.0.0.1:4172/v1' })?.message).toBe(
      'OPENAI_API_BASE=http://127.0.0.1:4172/v1: not a setting of the service, but the name openai-python before 1.0, LangChain and LiteLLM read for OPENAI_BASE_URL, which is unset: the service sends conversations to summarize to the default endpoint, https://api.openai.com/v1, with OPENAI_API_KEY: set OPENAI_BASE_URL to the endpoint meant (the service does not read OPENAI_API_BASE), or unset OPENAI_API_BASE to run so on purpose',
    );
    for (const name of [
      'openai_api_base',
      'OPENAI_API_BASE_URL',
      'OPENAI_API_HOST',
      'OPENAI_API_URL',
      'OPENAI_API_ENDPOINT',
      'OPENAI_ENDPOINT',
      'OPENAI_BASE',
      'OPENAI_URL',
      'AZURE_OPENAI_ENDPOINT',
    ])
      expect(refusal({ OPENAI_API_KEY: 'sk-x', [name]: 'https://gw.example/v1' })?.message).toMatch(
        new RegExp(`^${name}=https://gw\\.example/v1: not a setting of the service, but the name .+ read for OPENAI_BASE_URL, which is unset: `),
      );
    // its value masked as OPENAI_BASE_URL's: credentials, and every query value (newcomer ncops73 F6)
    expect(refusal({ OPENAI_API_KEY: 'sk-x', OPENAI_API_BASE: 'https://u:pw@gw.example/v1?sig=s3cr3t' })?.message).toMatch(
      /^OPENAI_API_BASE=https:\/\/u:\*\*\*@gw\.example\/v1\?sig=\*\*\*: /,
    );
    // OPENAI_BASE_URL set, or no key (the extractive summarizer: nothing leaves the service): a warn line only
    expect(refusal({ OPENAI_API_KEY: 'sk-x', OPENAI_BASE_URL: 'http://127.0.0.1:4172/v1', OPENAI_API_BASE: 'http://127.0.0.1:4172/v1' })).toBeUndefined();
    expect(refusal({ OPENAI_API_BASE: 'http://127.0.0.1:4172/v1' })).toBeUndefined();
    expect(misspelledSettingLines({ OPENAI_API_BASE: 'http://x/v1', azure_openai_endpoint: 'https://y' })).toEqual([
      'OPENAI_API_BASE is not a setting of the service: did you mean OPENAI_BASE_URL (OPENAI_API_BASE is what openai-python before 1.0, LangChain and LiteLLM read)?',
      "azure_openai_endpoint is not a setting of the service: did you mean OPENAI_BASE_URL (azure_openai_endpoint is what openai-python's AzureOpenAI client and LangChain's AzureChatOpenAI read)?",
    ]);
  });

  it('other near misses never refuse: they stay one warn line each', () => {
    expect(
      refusal({ ...TYPICAL, DATA_DIRR: '/srv/data', SUMARIZER_MODEL: 'gpt-4o', ALLOWED_HOST: 'a.example', TRUST_PROXIE: '1', OPENAI_API_KE: 'sk' }),
    ).toBeUndefined();
    expect(refusal(TYPICAL)).toBeUndefined();
  });
});
