/**
 * The repository's documentation as the specs that check it read it: README.md (the introduction,
 * Try it and the layout), CHANGELOG.md (the API changes a client may notice) and the reference
 * under docs/ (configuration, HTTP API, stores, NATS, …), each file as text.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** The repository's root directory. */
export const REPOSITORY_ROOT = path.join(__dirname, '..', '..');

/** The documentation files, relative to the repository root: README.md, CHANGELOG.md, then docs/*.md in name order. */
export const DOCUMENTATION_FILES: readonly string[] = [
  'README.md',
  'CHANGELOG.md',
  ...fs
    .readdirSync(path.join(REPOSITORY_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The text of one documentation file, by its path from the repository root (`'docs/configuration.md'`). @throws Error when it is not one of {@link DOCUMENTATION_FILES}. */
export function documentationFile(file: string): string {
  if (!DOCUMENTATION_FILES.includes(file)) throw new Error(`${file} is not a documentation file (${DOCUMENTATION_FILES.join(', ')})`);
  return fs.readFileSync(path.join(REPOSITORY_ROOT, file), 'utf8');
}

/** Every documentation file with its text, in the order of {@link DOCUMENTATION_FILES}. */
export function documentation(): Array<{ file: string; text: string }> {
  return DOCUMENTATION_FILES.map((file) => ({ file, text: documentationFile(file) }));
}
