/**
 * The snippet of a long index row is cut from one piece of it (`largeRowSnippet`, newcomer ncapi66 F1): the piece holding
 * the query's words, wherever in the row it is, with the words marked as FTS5 marks them (its tokenizer's folding
 * included) and `…` where the row goes on.
 */
import { searchRecall } from './queries/recall-query';
import { RECALL_SNIPPET_WHOLE_ROW_LIMIT } from './recall-large-row-snippet';
import { RecordedSessionLog, user } from './testing/recorded-session-log';
import { projectedReadModels } from './testing/projected-read-models';

const filler = (n: number) => 'the quick brown fox jumps over the lazy dog '.repeat(Math.ceil(n / 44)).slice(0, n);

describe('recall snippets of long rows (ncapi66 F1)', () => {
  const log = new RecordedSessionLog();
  log.append('long', user('deep', `${filler(150_000)} the needle zq7 is here ${filler(100_000)}`));
  log.append('long', user('accent', `${filler(60_000)} a café au lait ${filler(3_000)}`));
  log.append('long', user('apart', `alpha9 ${filler(50_000)} omega9 ${filler(500)}`));
  log.append('long', user('ending', `${filler(20_000)} tailword9`));
  // The word inside longer words early in the row, whole only later (ncrecall69 F1: the row's start shown unmarked).
  log.append(
    'long',
    user('inside', `# Policy: zqbaggage fees and zqpayment rules ${filler(5_000)} each zqbag is counted; every zqpay is logged ${filler(3_000)}`),
  );
  // A word near the end of the first piece (2,048 code units) and in the middle of the next (ncrecall69 F2).
  const EDGES = Array.from({ length: 16 }, (_, i) => 2000 + 4 * i);
  for (const at of EDGES) log.append('long', user(`edge${at}`, `${filler(at)} edgeword${at} ${filler(5_000)}`));
  const store = projectedReadModels(log);
  const snippetOf = (q: string) => {
    const items = searchRecall(store, { tenantId: 'default', q, limit: 5 }).items;
    expect(items).toHaveLength(1);
    return items[0].snippet;
  };

  it('is longer than the whole-row limit in every case here', () => {
    for (const e of log.events) expect(JSON.stringify(e.data).length).toBeGreaterThan(RECALL_SNIPPET_WHOLE_ROW_LIMIT);
  });

  it('marks a word deep inside the row, cut on both sides', () => {
    const snippet = snippetOf('needle zq7');
    expect(snippet).toContain('<mark>needle</mark> <mark>zq7</mark>');
    expect(snippet.startsWith('…')).toBe(true);
    expect(snippet.endsWith('…')).toBe(true);
  });

  it("marks a word as the index folds it (cafe finds café) in every order and with the session's first mention", () => {
    expect(snippetOf('cafe')).toContain('<mark>café</mark>');
    const mention = searchRecall(store, { tenantId: 'default', q: 'cafe', sessionId: 'long' }).items;
    expect(mention.map((h) => [h.eventId, h.firstMention])).toEqual([['accent', true]]);
    expect(mention[0].snippet).toContain('<mark>café</mark>');
  });

  it('marks the word where it is a whole word, past pieces holding it only inside longer words (ncrecall69 F1)', () => {
    const bag = snippetOf('zqbag');
    expect(bag).toContain('<mark>zqbag</mark> is counted');
    expect(bag.startsWith('…')).toBe(true);
    expect(snippetOf('zqpay')).toContain('every <mark>zqpay</mark> is logged');
  });

  it('shows what follows a word near the end of a piece, from the next piece (ncrecall69 F2: the snippet ended at the word)', () => {
    for (const at of EDGES) {
      const snippet = snippetOf(`edgeword${at}`);
      // At least five words on either side of the mark, and the row going on both ways.
      expect(snippet).toMatch(new RegExp(`(\\S+ ){5}\\s*<mark>edgeword${at}</mark>( \\S+){5}`));
      expect(snippet.startsWith('…') && snippet.endsWith('…')).toBe(true);
    }
  });

  it('marks one of two words no piece holds together, and ends without … at the end of the row', () => {
    expect(snippetOf('alpha9 omega9')).toMatch(/<mark>(alpha9|omega9)<\/mark>/);
    const end = snippetOf('tailword9');
    expect(end).toContain('<mark>tailword9</mark>');
    expect(end.endsWith('…')).toBe(false);
  });
});
