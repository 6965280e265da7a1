/**
 * The documentation's tested examples: the fenced blocks right after a `<!-- readme-test: … -->` comment,
 * in README.md (Try it) and in the files under docs/ (see `test/e2e/readme-examples.e2e-spec.ts`, and
 * `test/e2e/client-package.e2e-spec.ts` for the typed-client block).
 */
import { documentation, documentationFile } from './documentation';

/** The repository's README.md, as text. */
export const README = documentationFile('README.md');

/** One marked block: its marker (`run`, `run with API_KEYS`, `typecheck and run`, `typecheck and run over NATS`), the file and the heading above it, its code. */
export interface MarkedBlock {
  marker: string;
  /** The documentation file it is in, from the repository root (`README.md`, `docs/configuration.md`). */
  file: string;
  heading: string;
  code: string;
}

/**
 * The fenced blocks of `markdown` (the text of `file`) that directly follow a `<!-- readme-test: … -->`
 * comment, with the heading above them. @throws Error naming the file and heading when a marker is not
 * followed by its kind of block (`ts` for `typecheck and run…`, a shell block otherwise).
 */
export function markedBlocks(markdown: string, file = 'README.md'): MarkedBlock[] {
  const blocks: MarkedBlock[] = [];
  let heading = '(top)';
  const lines = markdown.split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (/^#{1,6} /.test(lines[i])) heading = lines[i].replace(/^#+ /, '');
    const marker = /^<!-- readme-test: (.+?) -->$/.exec(lines[i]);
    if (!marker) continue;
    const typescript = marker[1].startsWith('typecheck and run');
    const language = typescript ? /^```ts$/ : /^```(bash|sh|shell)$/;
    if (!language.test(lines[i + 1] ?? ''))
      throw new Error(`${file}: the readme-test marker under "${heading}" is not followed by a ${typescript ? 'ts' : 'shell'} block`);
    const end = lines.indexOf('```', i + 2);
    blocks.push({ marker: marker[1], file, heading, code: lines.slice(i + 2, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The marked blocks of every documentation file (README.md, CHANGELOG.md, docs/*.md), in file order. */
export function documentedBlocks(): MarkedBlock[] {
  return documentation().flatMap(({ file, text }) => markedBlocks(text, file));
}

/** The typed-client example (the `typecheck and run` block, in docs/audit-page-and-client.md). @throws Error when the documentation has none. */
export function readmeClientExample(): string {
  const block = documentedBlocks().find((b) => b.marker === 'typecheck and run');
  if (!block) throw new Error('documentation: no "readme-test: typecheck and run" block (the typed-client example)');
  return block.code;
}

/** The compiler options an integrator's strict project may set, beside `strict`: the README's client example must type-check under them. */
export const INTEGRATOR_STRICT_OPTIONS = { strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true } as const;
