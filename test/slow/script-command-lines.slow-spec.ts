/**
 * The scripts' command lines, run as `npm run` runs them (ts-node, transpile only; conformance
 * through its `conformance.js`): `--help` prints the usage, exit code 0, and touches nothing; a bad
 * argument ends with one line on stderr naming it, exit code 2, before anything is read or written
 * (`rebuild-read-models`, `client:generate`, `bench`, `conformance`; the service's and replay's own
 * are in startup-and-logs.slow-spec.ts and replay.e2e-spec.ts). Every process is started at once in
 * `beforeAll` (each loads its modules through ts-node: seconds of CPU).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { SqliteEventStore } from '@lib/event-store';
import { REPO_ROOT } from '../support/service-process';
import { runNode, type FinishedRun } from '../support/run-node';

jest.setTimeout(180_000);

/** Runs `node <args>` in the repository root with only PATH, HOME and `env`. */
const run = (args: string[], env: Record<string, string> = {}) =>
  runNode(args, { cwd: REPO_ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });

/** `npm run <script>`'s command for a TypeScript script: ts-node (transpile only) with the path aliases. */
const tsNode = (script: string, ...args: string[]) => ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', script, ...args];

const REBUILD = 'apps/session-service/src/rebuild-read-models.ts';
const GENERATE_CLIENT = 'libs/client/scripts/generate-client.ts';
const CLIENT_TYPES_FILE = path.join(REPO_ROOT, 'libs', 'client', 'src', 'openapi-types.ts');

/** Every file under `dir` (relative path → size and modification time), to see that nothing was created or changed. */
function snapshot(dir: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const file = path.join(entry.parentPath, entry.name);
    const stat = fs.statSync(file);
    files[path.relative(dir, file)] = `${stat.size} ${stat.mtimeMs}`;
  }
  return files;
}

/** The stderr of a usage error: exactly one line, no stack trace. */
function oneLine(r: FinishedRun): string {
  const lines = r.stderr.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return lines[0];
}

describe('the scripts: --help prints the usage and touches nothing; a bad argument stops them with one line and exit code 2, nothing done', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'script-args-'));
    dirs.push(dir);
    return dir;
  };
  /** A stopped service's DATA_DIR: the embedded store with one event, no read models yet (a rebuild would create them). */
  const dataDirWithOneEvent = async () => {
    const dir = tempDir();
    const store = SqliteEventStore.open(path.join(dir, 'events.sqlite'));
    await store.appendToStream('session-default.s1', [{ id: '3f1c1a8e-0000-4000-8000-000000000001', type: 'T', data: {} }]);
    await store.close();
    return dir;
  };

  let helpDataDir: string;
  let badArgDataDir: string;
  let elsewhere: string;
  let benchDir: string;
  let benchOut: string;
  let helpDataDirBefore: Record<string, string>;
  let badArgDataDirBefore: Record<string, string>;
  let clientTypes: { text: string; mtimeMs: number };
  const runs: Record<string, Promise<FinishedRun>> = {};

  beforeAll(async () => {
    helpDataDir = await dataDirWithOneEvent();
    badArgDataDir = await dataDirWithOneEvent();
    elsewhere = path.join(tempDir(), 'elsewhere');
    benchDir = tempDir();
    benchOut = path.join(tempDir(), 'results');
    helpDataDirBefore = snapshot(helpDataDir);
    badArgDataDirBefore = snapshot(badArgDataDir);
    clientTypes = { text: fs.readFileSync(CLIENT_TYPES_FILE, 'utf8'), mtimeMs: fs.statSync(CLIENT_TYPES_FILE).mtimeMs };
    Object.assign(runs, {
      rebuildHelp: run(tsNode(REBUILD, '--help'), { DATA_DIR: helpDataDir }),
      rebuildDataDirOption: run(tsNode(REBUILD, '--data-dir', elsewhere), { DATA_DIR: badArgDataDir }),
      generateHelp: run(tsNode(GENERATE_CLIENT, '--help')),
      generateUrl: run(tsNode(GENERATE_CLIENT, '--url', 'http://127.0.0.1:1')),
      benchUnknownFigures: run(tsNode('bench/run.ts', '--only', '99,abc', '--dir', benchDir, '--out', benchOut)),
      benchBogus: run(tsNode('bench/run.ts', '--bogus', '--dir', benchDir, '--out', benchOut)),
      conformanceBogus: run(['test/conformance/conformance.js', '--bogus']),
    });
    // Every process has ended before a test looks at the files they might have touched.
    await Promise.allSettled(Object.values(runs));
  });

  afterAll(() => {
    // Old code rewrote the committed client types on any argument: put them back as they were.
    if (clientTypes && fs.readFileSync(CLIENT_TYPES_FILE, 'utf8') !== clientTypes.text) fs.writeFileSync(CLIENT_TYPES_FILE, clientTypes.text);
    for (const dir of dirs) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('rebuild-read-models --help prints the usage with the variables it reads, exit code 0, and rebuilds nothing', async () => {
    const r = await runs.rebuildHelp;
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
    expect(r.stdout).toMatch(/^Usage: rebuild-read-models /);
    for (const name of ['DATA_DIR', 'SQLITE_EVENTS_FILE', 'DATABASE_URL', 'KURRENTDB_CONNECTION_STRING'])
      expect(r.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(snapshot(helpDataDir)).toEqual(helpDataDirBefore);
  });

  it('rebuild-read-models --data-dir X is refused (its settings are environment variables): one line naming the option and DATA_DIR, exit code 2, neither directory touched', async () => {
    const r = await runs.rebuildDataDirOption;
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    expect(oneLine(r)).toMatch(/^rebuild-read-models: unknown option '--data-dir'.*\bDATA_DIR\b/);
    expect(snapshot(badArgDataDir)).toEqual(badArgDataDirBefore);
    expect(fs.existsSync(elsewhere)).toBe(false);
  });

  it('client:generate --help prints the usage, exit code 0; --url is refused, exit code 2, one line; the client types are not rewritten', async () => {
    const help = await runs.generateHelp;
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
    expect(help.stdout).toMatch(/^Usage: client:generate /);
    expect(help.stdout).toContain('openapi-types.ts');
    const url = await runs.generateUrl;
    expect({ code: url.code, stdout: url.stdout }).toEqual({ code: 2, stdout: '' });
    expect(oneLine(url)).toMatch(/^client:generate: unknown option '--url'/);
    expect({ text: fs.readFileSync(CLIENT_TYPES_FILE, 'utf8'), mtimeMs: fs.statSync(CLIENT_TYPES_FILE).mtimeMs }).toEqual(clientTypes);
  });

  it('bench --only with figure numbers that do not exist: one line naming them and the valid ones, exit code 2, nothing run or written', async () => {
    const r = await runs.benchUnknownFigures;
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    const line = oneLine(r);
    expect(line).toMatch(/^bench: .*--only.*"99", "abc"/);
    expect(line).toContain([1, 2, 3, 4, 5, 6, 7, 8, 9, 10].join(', '));
    expect(fs.readdirSync(benchDir)).toEqual([]);
    expect(fs.existsSync(benchOut)).toBe(false);
  });

  it.each([
    ['bench', 'benchBogus'],
    ['conformance', 'conformanceBogus'],
  ])('%s --bogus: one line naming the option, exit code 2 (as the service and replay)', async (name, key) => {
    const r = await runs[key];
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: '' });
    expect(oneLine(r)).toMatch(new RegExp(`^${name}: unknown option '--bogus'.*see --help`));
  });
});
