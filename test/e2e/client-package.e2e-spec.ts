/**
 * The typed client as another project uses it (ncsdk repros 01 and 11): `npm run client:build`
 * then `npm pack ./libs/client` give a tarball that, installed in a project outside the
 * repository, type-checks the documented client example (docs/audit-page-and-client.md; its `@lib/client` import replaced by the
 * package name) under `strict`, `noUncheckedIndexedAccess` and `exactOptionalPropertyTypes`,
 * and runs it against a started service, from CommonJS and from an ES module. No registry: the tarball is unpacked into the project's node_modules (what `npm install
 * <tarball>` puts there), beside the repository's own `openapi-fetch` and `@types/node`.
 */
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import * as ts from 'typescript';
import { startListeningService, type ClientHarness } from '../support/client-harness';
import { INTEGRATOR_STRICT_OPTIONS, readmeClientExample } from '../support/readme-blocks';

jest.setTimeout(120_000); // npm pack, a service and a TypeScript program: ~20 s of CPU, more on a loaded machine
const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');
const CLIENT = path.join(ROOT, 'libs', 'client');
const PACKAGE = JSON.parse(fs.readFileSync(path.join(CLIENT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  dependencies: Record<string, string>;
};

/** The packages the client needs at run time and for its types, resolved from the repository (what `npm install` would fetch). */
const DEPENDENCIES = ['openapi-fetch', 'openapi-typescript-helpers', '@types/node', 'undici-types'];

describe('the typed client as a package used from another project', () => {
  let project: string;
  let harness: ClientHarness;

  beforeAll(async () => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'client-consumer-'));
    await run('npm', ['run', 'client:build'], { cwd: ROOT });
    const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', project, CLIENT], { cwd: ROOT });
    const [packed] = JSON.parse(stdout) as Array<{ filename: string; files: Array<{ path: string }> }>;
    expect(packed.files.map((f) => f.path).sort()).toEqual(
      [
        'README.md',
        'dist/body-serializer.d.ts',
        'dist/body-serializer.js',
        'dist/index.d.ts',
        'dist/index.js',
        'dist/openapi-types.d.ts',
        'dist/openapi-types.js',
        'dist/query-serializer.d.ts',
        'dist/query-serializer.js',
        'package.json',
      ].sort(),
    );
    // what `npm install <tarball>` puts in node_modules: the package, and its dependencies
    const installed = path.join(project, 'node_modules', PACKAGE.name);
    fs.mkdirSync(installed, { recursive: true });
    await run('tar', ['-xzf', path.join(project, packed.filename), '-C', installed, '--strip-components=1']);
    for (const name of DEPENDENCIES) {
      fs.mkdirSync(path.dirname(path.join(project, 'node_modules', name)), { recursive: true });
      fs.symlinkSync(path.join(ROOT, 'node_modules', name), path.join(project, 'node_modules', name));
    }
    harness = await startListeningService();
  });

  afterAll(async () => {
    await harness?.stop();
    if (harness) fs.rmSync(harness.dataDir, { recursive: true, force: true });
    if (project) fs.rmSync(project, { recursive: true, force: true });
  });

  it('declares openapi-fetch, the version the repository uses, as its dependency', () => {
    const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(PACKAGE.dependencies).toEqual({ 'openapi-fetch': root.dependencies['openapi-fetch'] });
  });

  it("type-checks the README's example strictly and runs it, from CommonJS and from an ES module", async () => {
    const example = readmeClientExample();
    expect(example).toContain("from '@lib/client'");
    const consumers = [
      { type: 'commonjs', source: 'try-client.ts', output: 'try-client.js' },
      { type: 'module', source: 'try-client.mts', output: 'try-client.mjs' },
    ].map((c) => ({ ...c, dir: path.join(project, c.type) }));
    for (const { type, source, dir } of consumers) {
      fs.mkdirSync(dir);
      fs.symlinkSync(path.join(project, 'node_modules'), path.join(dir, 'node_modules'));
      fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: `consumer-${type}`, private: true, type }));
      const code = example.replace("from '@lib/client'", `from '${PACKAGE.name}'`).replaceAll('http://localhost:3000', harness.baseUrl);
      fs.writeFileSync(path.join(dir, source), code);
    }
    // One program for both (module node16: each file's format is its folder's package.json type), as a consumer's tsc runs it.
    const program = ts.createProgram(
      consumers.map((c) => path.join(c.dir, c.source)),
      {
        target: ts.ScriptTarget.ES2022,
        module: ts.ModuleKind.Node16,
        moduleResolution: ts.ModuleResolutionKind.Node16,
        types: ['node'],
        typeRoots: [path.join(project, 'node_modules', '@types')],
        skipLibCheck: true,
        ...INTEGRATOR_STRICT_OPTIONS,
      },
    );
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file?.fileName ?? ''} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(diagnostics).toEqual([]);
    expect(program.emit().emitSkipped).toBe(false);
    for (const { dir, output } of consumers) {
      const { stdout } = await run(process.execPath, [path.join(dir, output)], { cwd: dir, env: { ...process.env, API_KEY: '' } });
      expect(stdout).toMatch(/^noop: window of \d+ tokens$/m);
      expect(stdout).not.toMatch(/undefined/);
    }
  });
});
