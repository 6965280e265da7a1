/**
 * The README's tested examples: the fenced blocks right after a `<!-- readme-test: … -->` comment
 * (see `test/e2e/readme-examples.e2e-spec.ts`, and `test/e2e/client-package.e2e-spec.ts` for the
 * typed-client block).
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository's README.md, as text. */
export const README = fs.readFileSync(path.join(__dirname, '..', '..', 'README.md'), 'utf8');

/** One marked block: its marker (`run`, `run with API_KEYS`, `typecheck and run`, `typecheck and run over NATS`), the heading above it, its code. */
export interface MarkedBlock {
  marker: string;
  heading: string;
  code: string;
}

/**
 * The fenced blocks that directly follow a `<!-- readme-test: … -->` comment, with the heading above
 * them. @throws Error naming the heading when a marker is not followed by its kind of block (`ts`
 * for `typecheck and run…`, a shell block otherwise).
 */
export function markedBlocks(markdown: string): MarkedBlock[] {
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
      throw new Error(`README: the readme-test marker under "${heading}" is not followed by a ${typescript ? 'ts' : 'shell'} block`);
    const end = lines.indexOf('```', i + 2);
    blocks.push({ marker: marker[1], heading, code: lines.slice(i + 2, end).join('\n') });
    i = end;
  }
  return blocks;
}

/** The README's typed-client example (the `typecheck and run` block). @throws Error when the README has none. */
export function readmeClientExample(): string {
  const block = markedBlocks(README).find((b) => b.marker === 'typecheck and run');
  if (!block) throw new Error('README: no "readme-test: typecheck and run" block (the typed-client example)');
  return block.code;
}

/** The compiler options an integrator's strict project may set, beside `strict`: the README's client example must type-check under them. */
export const INTEGRATOR_STRICT_OPTIONS = { strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true } as const;
