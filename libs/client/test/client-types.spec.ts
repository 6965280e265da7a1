/**
 * The typed client's types as a consumer meets them: `strict-consumer.ts` and the ts examples of
 * the client's README compile without a diagnostic under the repository's options and under an
 * integrator's strict ones (`noUncheckedIndexedAccess`, `exactOptionalPropertyTypes`: the README
 * says the client type-checks under them). The fixture's `@ts-expect-error` lines assert what
 * stays refused (newcomer ncsdkuser F1, F2, F5, F6).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as ts from 'typescript';
import { INTEGRATOR_STRICT_OPTIONS } from '../../../test/support/readme-blocks';
import { isOpenAiWindow, type Schemas } from '../src';

const ROOT = path.join(__dirname, '..', '..', '..');
const CONSUMER = path.join(__dirname, 'strict-consumer.ts');
const PACKAGE_NAME = 'session-memory-compaction-client';

/** The repository's compiler options (tsconfig.json), without emit. */
function repositoryOptions(): ts.CompilerOptions {
  const config = ts.getParsedCommandLineOfConfigFile(path.join(ROOT, 'tsconfig.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (!config) throw new Error('tsconfig.json could not be read');
  return { ...config.options, noEmit: true };
}

/**
 * The client README's ts blocks as one module: their imports of the package merged into one import
 * of `../src`, each block's code in its own async function (a block may await at its top level),
 * `client` declared for the blocks that use the one the first block makes.
 */
function clientReadmeModule(markdown: string): string {
  const blocks = [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  const names = new Set<string>(['createSessionServiceClient', 'type SessionServiceClient']);
  const bodies = blocks.map((code, i) => {
    const lines = code.split('\n').filter((line) => {
      const imported = new RegExp(`^import (type )?\\{ ([^}]+) \\} from '${PACKAGE_NAME}';$`).exec(line);
      if (!imported) return true;
      for (const name of imported[2].split(',').map((n) => n.trim())) names.add(imported[1] && !name.startsWith('type ') ? `type ${name}` : name);
      return false;
    });
    return `export async function readmeBlock${i}(): Promise<void> {\n${lines.join('\n')}\n}`;
  });
  return [`import { ${[...names].join(', ')} } from '../src';`, 'declare const client: SessionServiceClient;', ...bodies].join('\n\n');
}

describe('the typed client types, as a consumer compiles them', () => {
  const readme = path.join(__dirname, `.client-readme-${process.pid}.ts`);
  let program: ts.Program | undefined; // each check reuses the previous one's parsed files
  const diagnostics = (file: string, extra: ts.CompilerOptions) => {
    program = ts.createProgram([file], { ...repositoryOptions(), ...extra }, undefined, program);
    return ts.getPreEmitDiagnostics(program).map((d) => {
      const line = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line + 1 : '?';
      return `${path.relative(ROOT, d.file?.fileName ?? '')}:${line} TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
    });
  };

  beforeAll(() => fs.writeFileSync(readme, clientReadmeModule(fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8'))));
  afterAll(() => fs.rmSync(readme, { force: true }));

  it('compile under the repository options', () => {
    expect(diagnostics(CONSUMER, {})).toEqual([]);
  });

  it('compile under strict, noUncheckedIndexedAccess and exactOptionalPropertyTypes', () => {
    expect(diagnostics(CONSUMER, INTEGRATOR_STRICT_OPTIONS)).toEqual([]);
  });

  it("the client README's examples compile under both", () => {
    const source = fs.readFileSync(readme, 'utf8');
    // every block is there: the query, window, named-type and network-failure examples
    expect(source.match(/export async function readmeBlock\d+/g)?.length).toBeGreaterThanOrEqual(5);
    expect(source).toContain('isOpenAiWindow');
    expect(source).toContain('catch (err)');
    expect(diagnostics(readme, {})).toEqual([]);
    expect(diagnostics(readme, INTEGRATOR_STRICT_OPTIONS)).toEqual([]);
  });
});

describe('isOpenAiWindow', () => {
  const head = { sessionId: 's', revision: '3', tokens: 12, estimator: 'cl100k_base' as const };
  it('is true for a format=openai answer (messages), false for a format=events one (events), empty ones too', () => {
    const openAi: Schemas['Window'] = { ...head, messages: [{ role: 'user', content: 'hi' }] };
    const events: Schemas['Window'] = { ...head, events: [] };
    expect(isOpenAiWindow(openAi)).toBe(true);
    expect(isOpenAiWindow({ ...head, messages: [] })).toBe(true);
    expect(isOpenAiWindow(events)).toBe(false);
  });
});
