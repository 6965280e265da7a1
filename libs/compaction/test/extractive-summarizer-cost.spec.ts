/**
 * The extractive summarizer's cost on texts built to make its patterns backtrack (issue 17, item 1):
 * it runs on the event loop during compaction, so its work must grow linearly with the text. Checked
 * without a clock (the developers' guide: no timed unit tests): every regular expression in its
 * source is analysed by scslre, a static analysis of the JS regex engine's backtracking that finds
 * patterns whose work on a character repeated n times is super-linear (its `Move` report: a search
 * that rescans the rest of the text from each start, as the old e-mail and identifier patterns did;
 * `Self` and `Trade`: nested or adjacent quantifiers), plus one structural rule for what scslre does
 * not see (a repeated marker of several characters: the old tool-call pattern). The patterns it
 * replaced are kept here as oracles on texts short enough for them.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import fc from 'fast-check';
import { analyse, type AnalysisResult } from 'scslre';
import * as ts from 'typescript';
import { SPACELESS_LETTER } from '../src/script-runs';
import { extractiveSummary, type SummaryRequest } from '../src';

const request = (toSummarize: string[]): SummaryRequest => ({
  systemPrompt: 'unused',
  shadowPrompt: 'S?',
  currentSummaries: [],
  toSummarize,
  overlap: [],
  coveredIds: [],
});

// The patterns as they were: quadratic on long texts, exact on short ones.
const OLD_EMAIL = /[\w.+-]+@[\w-]+(?:\.[\w-]+)+/g;
const OLD_IDENTIFIER = /\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]{2,}\b/g;
const OLD_TOOL_CALLS = /^Assistant(?::[\s\S]*?)? \[tool calls: ([\s\S]*)\]$/;
// The identifier pattern of 2026-12-03 (quadratic on `-_-_…a1`, now found in one pass by identifierIn), an oracle on short texts.
const LAST_IDENTIFIER =
  /(?<![\p{L}\p{N}\p{M}_＿])(?=[\p{L}\p{N}\p{M}_＿－-]*\p{N})(?=[\p{L}\p{N}\p{M}_＿－-]*\p{L})[\p{L}\p{N}][\p{L}\p{N}\p{M}_＿－-]{2,}(?<=[\p{L}\p{N}\p{M}_＿])(?![\p{L}\p{N}\p{M}_＿])/gu;

const SOURCE_FILE = path.resolve(__dirname, '../src/extractive-summarizer.ts');

/** A regular expression of the summarizer's source: where it is (line) and its source and flags. */
interface FoundPattern {
  line: number;
  source: string;
  flags: string;
}

/**
 * Every regular expression of `file`: its literals, and its `new RegExp(…)` with the template
 * resolved (a constant of the file or {@link SPACELESS_LETTER} by its value; anything else, such as
 * an escaped value, as one literal character `x`).
 */
function patternsOf(file: string): FoundPattern[] {
  const text = fs.readFileSync(file, 'utf8');
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const constants = new Map<string, ts.Expression>();
  const found: FoundPattern[] = [];
  const lineOf = (node: ts.Node) => sourceFile.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const known: Record<string, string> = { SPACELESS_LETTER };
  const valueOf = (node: ts.Expression | undefined): string => {
    if (!node) return 'x';
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
    if (ts.isIdentifier(node)) return known[node.text] ?? valueOf(constants.get(node.text));
    if (ts.isTemplateExpression(node)) return node.head.text + node.templateSpans.map((span) => valueOf(span.expression) + span.literal.text).join('');
    return 'x';
  };
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.initializer) constants.set(node.name.text, node.initializer);
    if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
      const literal = node.getText(sourceFile);
      const slash = literal.lastIndexOf('/');
      found.push({ line: lineOf(node), source: literal.slice(1, slash), flags: literal.slice(slash + 1) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  // Constructions second: their templates may name constants declared after them.
  const constructions = (node: ts.Node): void => {
    if (ts.isNewExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'RegExp') {
      const [pattern, flags] = node.arguments ?? [];
      found.push({ line: lineOf(node), source: valueOf(pattern), flags: flags ? valueOf(flags) : '' });
    }
    ts.forEachChild(node, constructions);
  };
  constructions(sourceFile);
  return found;
}

/** scslre's reports on `pattern`: each a kind and the character whose repetition makes it super-linear. */
function superLinear(pattern: Pick<FoundPattern, 'source' | 'flags'>): string[] {
  return analyse({ source: pattern.source, flags: pattern.flags }).reports.map(
    (report) => `${report.type}${report.exponential ? ' (exponential)' : ''} on ${JSON.stringify(report.character.literal.source)}`,
  );
}

/**
 * Unbounded quantifiers over any character (`[\s\S]*`, `[^]+`, `.*` with `s`) that follow one
 * another in one alternative of `pattern`: each later one rescans what the earlier one may still
 * take, at every step of the earlier (`^A(?:[\s\S]*?)? \[m: ([\s\S]*)\]$` on a line repeating the
 * marker `m` without the final `]`: quadratic, and scslre does not see it: its repeated string is
 * the marker, not one character).
 */
function anyCharacterScansInSequence(result: AnalysisResult): number {
  const ANY = new Set(['[\\s\\S]', '[\\S\\s]', '[^]', '[\\d\\D]', '[\\w\\W]']);
  const dotAll = result.parsed.flags.dotAll;
  let most = 0;
  // The any-character scans on each path through `node`, counted along one alternative.
  const scans = (node: { type: string } & Record<string, unknown>): number => {
    switch (node.type) {
      case 'Quantifier': {
        const element = node.element as { type: string; raw: string } & Record<string, unknown>;
        const any = node.max === Infinity && (ANY.has(element.raw) || (dotAll && element.raw === '.'));
        return (any ? 1 : 0) + scans(element);
      }
      case 'Group':
      case 'CapturingGroup':
      case 'Pattern': {
        let best = 0;
        for (const alternative of node.alternatives as { elements: ({ type: string } & Record<string, unknown>)[] }[]) {
          const sum = alternative.elements.reduce((total, element) => total + scans(element), 0);
          most = Math.max(most, sum);
          best = Math.max(best, sum);
        }
        return best;
      }
      default:
        return 0;
    }
  };
  scans(result.parsed.pattern as unknown as { type: string } & Record<string, unknown>);
  return most;
}

describe('extractiveSummary costs linear work on adversarial texts (issue 17, item 1)', () => {
  const patterns = patternsOf(SOURCE_FILE);

  it('finds the summarizer’s patterns in its source (literals and constructions)', () => {
    expect(patterns.length).toBeGreaterThan(20);
    expect(patterns.filter((p) => p.source.includes(SPACELESS_LETTER))).not.toHaveLength(0);
  });

  it('no pattern of the summarizer backtracks super-linearly on a repeated character (scslre)', () => {
    const reports = patterns.flatMap((p) => superLinear(p).map((report) => `line ${p.line}: /${p.source}/${p.flags}: ${report}`));
    expect(reports).toEqual([]);
  });

  it('no pattern of the summarizer has two unbounded any-character scans in one alternative', () => {
    const found = patterns
      .filter((p) => anyCharacterScansInSequence(analyse({ source: p.source, flags: p.flags })) > 1)
      .map((p) => `line ${p.line}: /${p.source}/${p.flags}`);
    expect(found).toEqual([]);
  });

  it.each([
    ['the old e-mail pattern', OLD_EMAIL],
    ['the old identifier pattern', OLD_IDENTIFIER],
    ['the identifier pattern of 2026-12-03', LAST_IDENTIFIER],
  ])('the checks catch %s (quadratic: seconds of CPU on 200,000 characters)', (_, pattern) => {
    expect(superLinear(pattern)).not.toEqual([]);
  });

  it('the checks catch the old tool-call pattern', () => {
    expect(anyCharacterScansInSequence(analyse(OLD_TOOL_CALLS))).toBe(2);
    expect(anyCharacterScansInSequence(analyse(/^Tool \[responses: ([\s\S]*)\]$/))).toBe(1);
  });

  it.each([
    ['one letter', 'User: ' + 'a'.repeat(200_000)],
    ['hyphenated letters', 'User: ' + 'a-'.repeat(100_000)],
    ['hyphenated digits', 'Assistant: ' + '1-'.repeat(100_000)],
    ['hyphens and underscores before an identifier', 'User: ' + '-_'.repeat(100_000) + 'a1'],
    ['tool-call markers without a closing bracket', 'Assistant: ' + ' [tool calls: f('.repeat(12_500)],
  ])('summarizes 200,000 characters of %s', (_, text) => {
    expect(extractiveSummary(request([text, 'User: done'])).length).toBeGreaterThan(0);
  });

  const fragments = ['a', 'Z', '7', '-', '_', '.', '+', '@', 'x.io', ' ', 'ab12', '--', '__'];
  const shortText = fc.array(fc.constantFrom(...fragments), { maxLength: 40 }).map((p) => p.join(''));

  it('still finds every e-mail address and identifier the old patterns found (short texts)', () => {
    fc.assert(
      fc.property(shortText, (text) => {
        const summary = extractiveSummary(request([`User: ${text}`]), { maxChars: 20_000 });
        for (const m of text.matchAll(OLD_EMAIL)) expect(summary).toContain(m[0]);
        for (const m of text.matchAll(OLD_IDENTIFIER)) expect(summary).toContain(m[0]);
      }),
      { numRuns: 300 },
    );
  });

  // Full-width joiners and digits, a combining mark, a letter of another alphabet: what the one-pass identifierIn reads.
  const wideFragments = [...fragments, '＿', '－', '\u0301', 'é', '９', 'ж', '-_', 'a1'];
  const wideText = fc.array(fc.constantFrom(...wideFragments), { maxLength: 40 }).map((p) => p.join(''));

  it('finds every identifier the last identifier pattern found, in one pass (short texts)', () => {
    fc.assert(
      fc.property(wideText, (text) => {
        const summary = extractiveSummary(request([`User: ${text}`]), { maxChars: 20_000 });
        for (const m of text.matchAll(LAST_IDENTIFIER)) expect(summary).toContain(m[0]);
      }),
      { numRuns: 500 },
    );
  });

  const callFragments = ['Assistant', ':', ' [tool calls: ', 'f(', 'g.h(', '{}', ')', '), ', ']', ' ', 'x'];
  const callLine = fc.array(fc.constantFrom(...callFragments), { maxLength: 12 }).map((p) => p.join(''));

  it('names the tools of an assistant line as the old pattern did', () => {
    fc.assert(
      fc.property(callLine, (line) => {
        const summary = extractiveSummary(request([line]), { maxChars: 20_000 });
        const part = OLD_TOOL_CALLS.exec(line)?.[1];
        const names = part === undefined ? [] : [...part.matchAll(/(?:^|\), )([\w.:-]+)\(/g)].map((m) => m[1]);
        const toolsLine = summary.split('\n').indexOf('Tools used:');
        if (names.length === 0) expect(toolsLine).toBe(-1);
        else for (const name of names) expect(summary.split('\n')[toolsLine + 1]).toContain(name);
      }),
      { numRuns: 500 },
    );
  });
});
