/**
 * The documentation's links lead somewhere: in README.md, CHANGELOG.md, every docs/*.md and the
 * packages' READMEs (which link into them), every relative Markdown link names a file that exists,
 * and every `#anchor` (in the same file or in another Markdown file) is the slug of a heading of
 * that file, by GitHub's rules (lower case, punctuation but `-` and `_` dropped, spaces to `-`;
 * a repeated heading gets `-1`, `-2`, …). README's reference moved into docs/: a link left
 * pointing at a section's old place fails here. Pure file reads.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DOCUMENTATION_FILES, REPOSITORY_ROOT } from '../support/documentation';

/** The packages' READMEs: they link into the documentation. */
const PACKAGE_READMES = ['apps/replay/README.md', 'bench/README.md', 'libs/client/README.md'];

/** The lines of `text` outside fenced code blocks, with their line numbers (1-based). */
function proseLines(text: string): Array<{ line: number; text: string }> {
  const lines: Array<{ line: number; text: string }> = [];
  let fence: string | null = null;
  text.split('\n').forEach((line, i) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) fence = fence === null ? marker : null;
    else if (fence === null) lines.push({ line: i + 1, text: line });
  });
  return lines;
}

/** GitHub's anchor for a heading's text. */
function headingSlug(heading: string): string {
  const rendered = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link or image: its text
    .replace(/<[^>]+>/g, '') // HTML tags
    .replace(/[`*]/g, '') // code spans and emphasis
    .trim();
  return rendered
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown file's headings (ATX headings outside code blocks), repeated ones numbered as GitHub does. */
function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(markdown)) {
    const heading = /^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$/.exec(text)?.[1];
    if (heading === undefined) continue;
    const slug = headingSlug(heading);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/**
 * The targets of a Markdown file's inline links and images (not in code blocks or code spans), with
 * the line each starts on. A link's text may wrap onto the next line, as a paragraph's words do.
 */
function linkTargets(markdown: string): Array<{ line: number; target: string }> {
  const prose = markdown.split('\n').map(() => '');
  for (const { line, text } of proseLines(markdown)) prose[line - 1] = text;
  // a code span's content is not Markdown: blank it out, keeping lines and columns (a span may wrap
  // onto the next line, never across a blank one)
  const text = prose.join('\n').replace(/(`+)(?:[^`\n]|\n(?!\n)|(?!\1)`)*?\1/g, (span) => span.replace(/[^\n]/g, ' '));
  const targets: Array<{ line: number; target: string }> = [];
  for (const match of text.matchAll(/!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+"[^"]*")?\s*\)/g)) {
    targets.push({ line: text.slice(0, match.index).split('\n').length, target: match[1] });
  }
  return targets;
}

/** What is wrong with each relative link of `file` (a path from `root`, the repository's by default): `file:line: target: why`. */
function brokenLinks(file: string, root = REPOSITORY_ROOT): string[] {
  const absolute = path.join(root, file);
  const anchorsOf = new Map<string, Set<string>>();
  const anchors = (target: string) => {
    if (!anchorsOf.has(target)) anchorsOf.set(target, headingAnchors(fs.readFileSync(target, 'utf8')));
    return anchorsOf.get(target)!;
  };
  const broken: string[] = [];
  for (const { line, target } of linkTargets(fs.readFileSync(absolute, 'utf8'))) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('//')) continue; // http:, https:, mailto:
    const hash = target.indexOf('#');
    const filePart = hash === -1 ? target : target.slice(0, hash);
    const anchor = hash === -1 ? null : decodeURIComponent(target.slice(hash + 1));
    const resolved = filePart === '' ? absolute : path.resolve(path.dirname(absolute), decodeURIComponent(filePart));
    const where = `${file}:${line}: ${target}`;
    if (!resolved.startsWith(root + path.sep) && resolved !== root) broken.push(`${where}: outside the repository`);
    else if (!fs.existsSync(resolved)) broken.push(`${where}: no such file`);
    else if (anchor !== null && !resolved.endsWith('.md')) broken.push(`${where}: an anchor into a file that is not Markdown`);
    else if (anchor !== null && !anchors(resolved).has(anchor))
      broken.push(`${where}: no heading of ${path.relative(root, resolved)} has the anchor #${anchor}`);
  }
  return broken;
}

describe('the documentation links', () => {
  it('covers README.md, CHANGELOG.md and the reference under docs/', () => {
    expect(DOCUMENTATION_FILES.slice(0, 2)).toEqual(['README.md', 'CHANGELOG.md']);
    expect(DOCUMENTATION_FILES).toEqual(expect.arrayContaining(['docs/configuration.md', 'docs/http-api.md', 'docs/stores.md', 'docs/upgrading.md']));
  });

  it.each([...DOCUMENTATION_FILES, ...PACKAGE_READMES])('%s: every relative link names a file there, every #anchor a heading of its file', (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it('reads headings and links as GitHub does', () => {
    expect(headingSlug('Switching stores (SQLite → PostgreSQL): `npm run copy-store`')).toBe('switching-stores-sqlite--postgresql-npm-run-copy-store');
    expect(headingSlug('Model summarizer: what it sends, its failures, the backoff')).toBe('model-summarizer-what-it-sends-its-failures-the-backoff');
    expect([...headingAnchors('# A\n\n## Logs\n\n```bash\n# not a heading\n```\n\n### Logs\n')]).toEqual(['a', 'logs', 'logs-1']);
    expect(linkTargets('[a](#x) `[b](#code)` [`c`](docs/c.md#y) ![d](d.png)\n```\n[e](#fenced)\n```\n')).toEqual([
      { line: 1, target: '#x' },
      { line: 1, target: 'docs/c.md#y' },
      { line: 1, target: 'd.png' },
    ]);
  });

  it('finds a broken link: a file that is not there, and an anchor no heading has, also in a link whose text wraps', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'docs-links-'));
    try {
      fs.mkdirSync(path.join(dir, 'docs'));
      fs.writeFileSync(
        path.join(dir, 'README.md'),
        '# A\n\n## Logs\n\n[ok](#logs) [ok](docs/b.md#b) [gone](docs/c.md) [moved](docs/b.md#logs) [here](#nowhere) [up](../x.md)\n' +
          'a link whose text [wraps\nonto the next line](#wrapped) and `a code span [that\nwraps](#not-a-link)`\n',
      );
      fs.writeFileSync(path.join(dir, 'docs', 'b.md'), '# B\n\n[back](../README.md#logs)\n');
      expect(brokenLinks('README.md', dir)).toEqual([
        'README.md:5: docs/c.md: no such file',
        'README.md:5: docs/b.md#logs: no heading of docs/b.md has the anchor #logs',
        'README.md:5: #nowhere: no heading of README.md has the anchor #nowhere',
        'README.md:5: ../x.md: outside the repository',
        'README.md:6: #wrapped: no heading of README.md has the anchor #wrapped',
      ]);
      expect(brokenLinks('docs/b.md', dir)).toEqual([]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
