/**
 * A misspelled setting (newcomer ncoperator F9: `DATA_DIRR=/tmp/x` was ignored without a word and the
 * service ran on ./data): one warn line per variable whose name is a near miss of a documented one.
 */
import { ENVIRONMENT_VARIABLES } from './command-line';
import { misspelledSettingLines } from './misspelled-settings';

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

  it('says nothing of the settings themselves, every documented one set', () => {
    expect(misspelledSettingLines(Object.fromEntries(ENVIRONMENT_VARIABLES.map((v) => [v.name, 'x'])))).toEqual([]);
  });

  it('says nothing of a typical environment (shell, container, npm, Kubernetes, the rebuild’s own settings)', () => {
    expect(misspelledSettingLines(TYPICAL)).toEqual([]);
    expect(misspelledSettingLines({ ...TYPICAL, DATA_DIRR: '/srv/data' })).toEqual(['DATA_DIRR is not a setting of the service: did you mean DATA_DIR?']);
  });
});
