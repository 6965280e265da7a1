/**
 * The replay command on real sessions (issue 5, acceptance 2 and 3): it runs in-process against
 * a service on a temporary store, and every figure of its report is checked against the service's
 * own answers or against the file itself; the three input/environment errors stop the CLI with
 * one line and exit code 2.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { computeEventCosts, openAiMessagesToEvents } from '@lib/session';
import { createSessionService, type SessionService } from '../../apps/session-service/src/create-session-service';
import { loadServiceConfig } from '../../apps/session-service/src/config/service-config';
import { TAU_BENCH_FILE, describeWithShared } from '../support/shared-dir';
import { runReplay, type ReplayReport } from '../../apps/replay/src/run-replay';
import { chosenSessions } from '../../apps/replay/src/report';
import { extractFacts } from '../../apps/replay/src/fact-extraction';
import type { SessionServiceClient } from '@lib/client';
import { createReplayClient, ok } from '../../apps/replay/src/service-client';
import { loadSessionsFile } from '../../apps/replay/src/sessions-file';
import { eventsWindow } from '../../apps/replay/src/window-check';
import { runNode, type FinishedRun } from '../support/run-node';

const REPO = path.resolve(__dirname, '..', '..');
const SESSIONS = 3;

describeWithShared('replay on tau-bench sessions', TAU_BENCH_FILE, () => {
  let service: SessionService;
  let dataDir: string;
  let outDir: string;
  let client: SessionServiceClient;
  let report: ReplayReport;
  let printed = '';

  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-e2e-data-'));
    outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-e2e-out-'));
    service = await createSessionService(loadServiceConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', API_KEYS: undefined, RATE_LIMIT_PER_MINUTE: '0' }), {
      quiet: true,
    });
    await service.app.listen(0, '127.0.0.1');
    const url = `http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`;
    const stdout = { write: (chunk: string) => ((printed += chunk), true) } as unknown as NodeJS.WritableStream;
    report = await runReplay({
      file: TAU_BENCH_FILE,
      url,
      strategy: 'all',
      sessions: SESSIONS,
      concurrency: 3,
      out: outDir,
      progress: false,
      stdout,
      stderr: stdout,
      runId: 'e2e',
    });
    client = createReplayClient(url);
  }, 300_000);

  afterAll(async () => {
    await service?.close();
    for (const dir of [dataDir, outDir]) if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('replays every strategy on the sessions without a single validation failure, and every strategy compacts', () => {
    expect(report.strategies.map((s) => s.name)).toEqual(['sliding-window', 'turn-window', 'token-count', 'recursive-summarization', 'rolling-summary']);
    expect(report.validationFailures).toBe(0);
    for (const s of report.strategies) {
      expect({ name: s.name, failures: s.validationFailures, problems: s.problems }).toEqual({ name: s.name, failures: 0, problems: [] });
      expect(s.sessions).toBe(SESSIONS);
      expect(s.settled).toBe(true);
      expect(s.compactions).toBeGreaterThan(0);
      expect(s.tokensAfter.sum).toBeLessThan(s.tokensBefore.sum);
    }
    const summarizing = report.strategies.filter((s) => s.summarizerCalls > 0).map((s) => s.name);
    expect(summarizing).toEqual(['recursive-summarization', 'rolling-summary']);
  });

  it('counts the events and the tokens before compaction exactly as the file costs them', () => {
    const sessions = loadSessionsFile(TAU_BENCH_FILE).slice(0, SESSIONS);
    const costs = sessions.map((s) => openAiMessagesToEvents(s.messages).reduce((a, e) => a + computeEventCosts(e).cl100k_base, 0));
    for (const s of report.strategies) {
      expect(s.sessionReports.map((r) => r.events)).toEqual(sessions.map((x) => x.messages.length));
      expect(s.sessionReports.map((r) => r.tokensBefore)).toEqual(costs);
      expect(s.tokensBefore.sum).toBe(costs.reduce((a, b) => a + b, 0));
      expect(s.events).toBe(sessions.reduce((a, x) => a + x.messages.length, 0));
    }
  });

  it("matches the service's own answers: compactions, summarizer calls, final window tokens", async () => {
    for (const s of report.strategies) {
      for (const r of s.sessionReports) {
        const params = { path: { sessionId: r.sessionId } };
        const { compactions } = await ok(client.GET('/v1/sessions/{sessionId}/compactions', { params: { ...params, query: { limit: '100' } } }));
        expect(r.compactions).toBe(compactions.filter((c) => c.outcome === 'compacted').length);
        expect(r.compactionMarks.map((m) => m.compactionId)).toEqual(compactions.map((c) => c.compactionId));
        expect(r.summarizerCalls).toBe(compactions.reduce((a, c) => a + (c.summarizer?.calls ?? 0), 0));
        const window = eventsWindow(await ok(client.GET('/v1/sessions/{sessionId}/window', { params: { ...params, query: { format: 'events' } } })));
        expect(r.tokensAfter).toBe(window.tokens);
        expect(window.events.reduce((a, e) => a + e.tokens, 0)).toBe(window.tokens);
        expect(r.perTurn[r.perTurn.length - 1].tokensWithoutCompaction).toBe(r.tokensBefore);
      }
      expect(s.compactions).toBe(s.sessionReports.reduce((a, r) => a + r.compactions, 0));
      const afters = s.sessionReports.map((r) => r.tokensAfter);
      expect(s.tokensAfter.sum).toBe(afters.reduce((a, b) => a + b, 0));
      expect(s.tokensAfter.max).toBe(Math.max(...afters));
    }
  });

  it('finds an archived fact by recall and names the compaction that archived it', async () => {
    const recall = report.examples.recall!;
    expect(recall).toBeDefined();
    const owner = report.strategies.flatMap((s) => s.sessionReports).find((r) => r.sessionId === recall.sessionId)!;
    const record = await ok(
      client.GET('/v1/sessions/{sessionId}/compactions/{compactionId}', {
        params: { path: { sessionId: owner.sessionId, compactionId: recall.compactionId } },
      }),
    );
    expect(record.archivedIds).toContain(recall.eventId);
    expect(printed).toContain(`archived by compaction ${recall.compactionId}`);
    expect(report.examples.history?.compactions.length).toBeGreaterThan(0);
  });

  it('writes report.json (validationFailures per strategy), report.md and report.html with the comparison, fidelity and chosen-session charts', () => {
    const json = JSON.parse(fs.readFileSync(path.join(outDir, 'report.json'), 'utf8')) as ReplayReport;
    expect(json.strategies.map((s) => [s.name, s.validationFailures])).toEqual(report.strategies.map((s) => [s.name, 0]));
    const md = fs.readFileSync(path.join(outDir, 'report.md'), 'utf8');
    expect(md).toContain('| recursive-summarization');
    expect(md).toContain('## Context fidelity');
    const html = fs.readFileSync(path.join(outDir, 'report.html'), 'utf8');
    const chosen = chosenSessions(report, 3);
    // tokens saved, window size distribution, retention by strategy, retention against passes, one per chosen session
    expect(html.match(/<svg /g)?.length).toBe(4 + chosen.length);
    expect(chosen.length).toBeGreaterThan(0);
    for (const i of chosen) for (const s of report.strategies) expect(s.sessionReports[i].compactions).toBeGreaterThan(0);
    // Replayed with --url: the title names the summarizer the service's compaction records name, not this process's environment.
    expect(html).toMatch(
      process.env.OPENAI_BASE_URL
        ? /Replay report: summarizer [^<]+ of the service at http:\/\/127\.0\.0\.1:\d+/
        : /Replay report: summarizer extractive\/[^ ]+ of the service at http:\/\/127\.0\.0\.1:\d+/,
    );
    expect(printed).toContain('validation failures');
  });

  it('measures context fidelity: every fact of the file, recall reach 100% for every strategy, passes = the compactions, the trimMessages baseline (the first-characters one is left out with --url)', () => {
    const fidelity = report.fidelity!;
    const sessions = loadSessionsFile(TAU_BENCH_FILE).slice(0, SESSIONS);
    const facts = sessions.reduce((a, s) => a + extractFacts(s.messages).length, 0);
    expect(facts).toBeGreaterThan(50);
    expect(fidelity.rows.map((r) => r.name)).toEqual([...report.strategies.map((s) => s.name), 'trimMessages 2000']);
    // its summary must come from the service's summarizer, which this process cannot call: one line says so
    expect(fidelity.notes.join('\n')).toContain('first 12,000 chars baseline: left out');
    for (const row of fidelity.rows) {
      expect({ name: row.name, facts: row.facts, sessions: row.sessions }).toEqual({ name: row.name, facts, sessions: SESSIONS });
      expect(row.retained).toBeGreaterThan(0);
      expect(row.retained).toBeLessThanOrEqual(row.facts);
    }
    for (const s of report.strategies) {
      const row = fidelity.rows.find((r) => r.name === s.name)!;
      expect({ name: s.name, reach: row.reach, misses: row.reachMisses }).toEqual({ name: s.name, reach: 1, misses: [] });
      // a pass is a compaction the service recorded as compacted
      expect(row.passes!.sum).toBe(s.compactions);
      // compactions are what removes events: a fact stated after the last one is still in the window
      expect(row.byPasses[0].retained).toBe(row.byPasses[0].facts);
      expect(row.byPasses.reduce((a, b) => a + b.facts, 0)).toBe(facts);
    }
    expect(printed).toContain('Context fidelity');
  });
});

/** Runs the CLI in a child process (with `env` added to this one's); resolves with its exit code and output. */
function runCli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<FinishedRun> {
  return runNode(['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register', 'apps/replay/src/replay.ts', ...args], {
    cwd: REPO,
    env: { ...process.env, ...env },
  });
}

async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('replay CLI errors: one line, exit code 2', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-cli-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  const expectOneLine = (r: { code: number | null; stdout: string; stderr: string }, pattern: RegExp) => {
    expect(r.code).toBe(2);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(pattern);
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(r.stdout).toBe('');
  };

  it('stops on an unreadable file, a file of the wrong shape, and a URL where no service answers', async () => {
    const missing = path.join(dir, 'missing.json');
    const wrong = path.join(dir, 'wrong.json');
    fs.writeFileSync(wrong, JSON.stringify({ sessions: [] }));
    const notMessages = path.join(dir, 'not-messages.json');
    fs.writeFileSync(notMessages, JSON.stringify([{ task_id: 1, traj: [{ role: 'robot', content: 'x' }] }]));
    const okFile = path.join(dir, 'ok.json');
    fs.writeFileSync(okFile, JSON.stringify([[{ role: 'user', content: 'hello' }]]));
    const port = await closedPort();
    const [a, b, c, d] = await Promise.all([
      runCli([missing, '--out', dir]),
      runCli([wrong, '--out', dir]),
      runCli([notMessages, '--out', dir]),
      runCli([okFile, '--url', `http://127.0.0.1:${port}`, '--out', dir]),
    ]);
    expectOneLine(a, /^replay: cannot read .*missing\.json: no such file$/);
    expectOneLine(b, /^replay: .*wrong\.json is not a JSON array of sessions .*top level is an object$/);
    expectOneLine(c, /^replay: .*session \[0\]\.traj\[0\]\.role should be one of .* but is "robot"$/);
    expectOneLine(d, new RegExp(`^replay: no session service answers at http://127\\.0\\.0\\.1:${port}: ECONNREFUSED`));
    expect(fs.existsSync(path.join(dir, 'report.json'))).toBe(false);
  }, 180_000); // CLI processes compiled by ts-node at once: about 10 s each on a quiet 2-core machine, several times that under load

  it('refuses a blank summarizer setting as the service does at its start (with or without fidelity): one line naming it, exit code 2', async () => {
    const okFile = path.join(dir, 'ok-blank.json');
    fs.writeFileSync(okFile, JSON.stringify([[{ role: 'user', content: 'hello' }]]));
    const before = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('replay-service-'));
    const [a, b, c] = await Promise.all([
      runCli([okFile, '--out', dir, '--no-progress'], { SUMMARIZER_TIMEOUT_MS: ' ' }),
      runCli([okFile, '--out', dir, '--no-progress', '--no-fidelity'], { SUMMARIZER_MAX_RETRIES: '\t' }),
      runCli([okFile, '--out', dir, '--no-progress'], { SUMMARIZER_MAX_INPUT_TOKENS: 'many' }),
    ]);
    expectOneLine(a, /^replay: configuration error: SUMMARIZER_TIMEOUT_MS=" ": set but blank: unset it for the default \(60000\), or give it a value$/);
    expectOneLine(b, /^replay: configuration error: SUMMARIZER_MAX_RETRIES="\\t": set but blank: unset it for the default \(2\)/);
    expectOneLine(c, /^replay: configuration error: SUMMARIZER_MAX_INPUT_TOKENS=many: not an integer/);
    expect(fs.existsSync(path.join(dir, 'report.json'))).toBe(false);
    // no temporary store left behind (other runs of this machine may be making theirs: only new ones of ours would stay)
    expect(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith('replay-service-') && !before.includes(f))).toEqual([]);
  }, 180_000);

  it('--help and a usage error answer before the replay loads its run (the service, the libraries): usage exit code 0, one line exit code 2', async () => {
    // main() run in a child; what it loaded is printed after a marker once it returns
    const loadedAfter = (args: string[]) =>
      runNode(
        [
          '-r',
          'ts-node/register/transpile-only',
          '-r',
          'tsconfig-paths/register',
          '-e',
          `require('./apps/replay/src/replay.ts').main(${JSON.stringify(args)}).then((code) => {
            const loaded = Object.keys(require.cache).map((f) => require('node:path').relative(process.cwd(), f)).filter((f) => /^(apps|libs)[/]/.test(f)).sort();
            process.stdout.write('\\n@@' + JSON.stringify({ code, loaded }));
          })`,
        ],
        { cwd: REPO, env: { ...process.env } },
      );
    const [help, bogus, noFile] = await Promise.all([loadedAfter(['--help']), loadedAfter(['--bogus', 'x.json']), loadedAfter([])]);
    const result = (r: FinishedRun) => JSON.parse(r.stdout.split('\n@@')[1]) as { code: number; loaded: string[] };
    expect(help.stdout).toMatch(/^Usage: replay /);
    expect(help.stderr).toBe('');
    expect(bogus.stderr).toBe("replay: unknown option '--bogus' (see --help)\n");
    expect(noFile.stderr).toBe("replay: missing required argument 'file' (see --help)\n");
    const onlyTheCommandLine = [
      'apps/replay/src/replay-error.ts',
      'apps/replay/src/replay.ts',
      'apps/replay/src/stop-on-signals.ts',
      'apps/session-service/src/script-command-line.ts',
    ];
    expect([help, bogus, noFile].map(result)).toEqual([
      { code: 0, loaded: onlyTheCommandLine },
      { code: 2, loaded: onlyTheCommandLine },
      { code: 2, loaded: onlyTheCommandLine },
    ]);
  }, 180_000);

  it('stops before sending anything on a message the service would reject, naming the session and the message', async () => {
    const noContent = path.join(dir, 'no-content.json');
    fs.writeFileSync(noContent, JSON.stringify([[{ role: 'user' }]]));
    const laterTurn = path.join(dir, 'later-turn.json');
    fs.writeFileSync(
      laterTurn,
      JSON.stringify([
        [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
        ],
        [
          { role: 'user', content: 'a' },
          { role: 'assistant', content: 'b' },
          { role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] },
        ],
      ]),
    );
    const unknownCall = path.join(dir, 'unknown-call.json');
    const call = { id: 'c1', type: 'function', function: { name: 'lookup', arguments: '{}' } };
    fs.writeFileSync(
      unknownCall,
      JSON.stringify([
        {
          task_id: 7,
          traj: [
            { role: 'system', content: 's' },
            { role: 'user', content: 'u' },
            { role: 'assistant', content: null, tool_calls: [call] },
            { role: 'user', content: 'u2' },
            { role: 'tool', tool_call_id: 'c1', content: 'ok' },
            { role: 'tool', tool_call_id: 'c9', content: 'ok' },
          ],
        },
      ]),
    );
    // --url of a closed port: the file is checked before the service is even looked for
    const port = await closedPort();
    const [a, b, c] = await Promise.all([noContent, laterTurn, unknownCall].map((f) => runCli([f, '--url', `http://127.0.0.1:${port}`, '--out', dir])));
    expectOneLine(a, /^replay: .*no-content\.json: session \[0\]\[0\]\.content: is required/);
    expectOneLine(b, /^replay: .*later-turn\.json: session \[1\]\[2\]\.content\[0\]\.type: only text content parts are supported/);
    // the call of turn 1 is known in turn 2 (as the service knows it); c9 is not
    expectOneLine(c, /^replay: .*unknown-call\.json: session \[0\]\.traj\[5\]\.tool_call_id: tool call "c9"/);
    expect(fs.existsSync(path.join(dir, 'report.json'))).toBe(false);
  }, 180_000);
});

describe('replay CLI: a message the service refuses (4xx) during the run', () => {
  let service: SessionService;
  let dataDir: string;
  let dir: string;
  let url: string;
  beforeAll(async () => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-4xx-data-'));
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-4xx-'));
    // a service whose text limit the file's second turn exceeds: the file itself is well formed
    service = await createSessionService(
      loadServiceConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', API_KEYS: undefined, RATE_LIMIT_PER_MINUTE: '0', MAX_TEXT_LENGTH: '40' }),
      { quiet: true },
    );
    await service.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(service.app.getHttpServer().address() as AddressInfo).port}`;
  }, 30_000);
  afterAll(async () => {
    await service?.close();
    for (const d of [dataDir, dir]) if (d) fs.rmSync(d, { recursive: true, force: true });
  });

  it('reports it in one line (session, message index, status, code and message of the service), exit code 2, no stack trace, no report', async () => {
    const file = path.join(dir, 'long.json');
    fs.writeFileSync(
      file,
      JSON.stringify([
        {
          task_id: 'T1',
          traj: [
            { role: 'user', content: 'short' },
            { role: 'assistant', content: 'ok' },
            { role: 'user', content: 'x'.repeat(100) },
            { role: 'assistant', content: 'ok' },
          ],
        },
      ]),
    );
    const r = await runCli([file, '--url', url, '--strategy', 'token-count:2000', '--no-progress', '--out', dir]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(/unexpected error|\n\s+at /);
    const lines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('replay: warning:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^replay: the service rejected message \[2\] \(turn 2, messages\[0\] of its request\) of session \[0\] \(task_id T1, id [^)]+\): 400 [a-z_]+: messages\[0\]\S* .*40/,
    );
    expect(fs.existsSync(path.join(dir, 'report.json'))).toBe(false);
  }, 180_000);
});

describe('replay CLI: Ctrl-C during the run', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'replay-sigint-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('closes the in-process service, removes its temporary store, prints how far it got in one line, exit code 130, no report', async () => {
    // 8 sessions of 40 turns: long enough to be interrupted after the first progress line (at 10%, or after 5 s)
    const sessions = Array.from({ length: 8 }, (_, s) =>
      Array.from({ length: 40 }, (_, t) => [
        { role: 'user', content: `session ${s} question ${t}: what about item ${t}?` },
        { role: 'assistant', content: `answer ${t} of session ${s}: item ${t} is fine.` },
      ]).flat(),
    );
    const file = path.join(dir, 'long.json');
    fs.writeFileSync(file, JSON.stringify(sessions));
    const tmp = fs.mkdtempSync(path.join(dir, 'tmp-'));
    const out = path.join(dir, 'report');
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'apps/replay/src/replay.ts',
        file,
        '--strategy',
        'sliding-window:12',
        '--no-fidelity',
        '--concurrency',
        '1',
        '--out',
        out,
      ],
      { cwd: REPO, env: { ...process.env, TMPDIR: tmp } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.on('close', (code, signal) => resolve({ code, signal })),
    );
    // a progress line after some turns: the service runs (its store is under TMPDIR) and turns are
    // being sent (a slow start may print 0/320 first: the interruption would then come before any turn)
    while (!/replay: [1-9]\d*\/320 turns/.test(stderr)) {
      if (child.exitCode !== null) throw new Error(`replay ended early: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith('replay-service-'))).toHaveLength(1);
    child.kill('SIGINT');
    const ended = await exited;
    expect(ended).toEqual({ code: 130, signal: null });
    const lines = stderr.split('\n').filter((l) => l.trim() !== '' && !/^replay: \d+\/320 turns/.test(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^replay: interrupted by SIGINT after \d+ of 320 turns \(strategy \S+ \(1 of 1\)\); no report written$/);
    const done = Number(/after (\d+) of/.exec(lines[0])![1]);
    expect(done).toBeGreaterThanOrEqual(Number(/replay: (\d+)\/320 turns/.exec(stderr)![1]));
    expect(done).toBeGreaterThan(0);
    expect(done).toBeLessThan(320);
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(stdout).toBe('');
    expect(fs.readdirSync(tmp).filter((n) => n.startsWith('replay-service-'))).toEqual([]);
    expect(fs.existsSync(path.join(out, 'report.json'))).toBe(false);
  }, 120_000);
});
