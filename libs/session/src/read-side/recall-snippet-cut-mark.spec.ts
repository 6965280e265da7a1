/**
 * A snippet whose end cut falls inside a match shows the whole match, marked (newcomer ncrecheck66 F3): FTS5 closes a mark
 * where its window of tokens ends, and showed `<mark>東京タワ</mark>…` for `東京タワー`.
 */
import { searchRecall } from './queries/recall-query';
import { cutMarkCompleted } from './recall-snippet-cut-mark';
import { RecordedSessionLog, user } from './testing/recorded-session-log';
import { projectedReadModels } from './testing/projected-read-models';

const KANA = 'あいうえおかきくけこさしすせそたちつてとなにぬねのはひふへほまみむめもやゆよらりるれろわをん'.repeat(3);

describe('a mark at the end cut of a recall snippet (ncrecheck66 F3)', () => {
  const log = new RecordedSessionLog();
  // Two matches 17 characters apart: FTS5's 24-token window of the trigram index ends inside the second.
  log.append('tower', user('short', `${KANA}東京タワー${KANA.slice(0, 17)}東京タワー${KANA}`));
  // The same in a row longer than the whole-row limit (its snippet is cut from a piece).
  log.append('tower', user('long', `${KANA.repeat(20)}東京タワー${KANA.slice(0, 17)}東京タワー${KANA.repeat(20)}`));
  const store = projectedReadModels(log);
  const snippetOf = (eventId: string) =>
    searchRecall(store, { tenantId: 'default', q: '東京タワー', limit: 5 }).items.find((h) => h.eventId === eventId)!.snippet;

  it.each(['short', 'long'])('given the window ends inside a match (%s row), when recall shows it, then the whole match is marked', (eventId) => {
    const snippet = snippetOf(eventId);
    expect(snippet).toContain(`<mark>東京タワー</mark>${KANA.slice(0, 17)}<mark>東京タワー</mark>`);
    expect(snippet).not.toMatch(/<mark>東京タワ<\/mark>/);
    expect(snippet.endsWith('…')).toBe(true);
  });
});

describe('cutMarkCompleted', () => {
  it('grows the mark to the longest phrase the text holds from its start, folded as the index folds', () => {
    const body = 'x Café Olé y';
    expect(cutMarkCompleted('…\u0001Caf\u0002…', body, ['"cafe"'])).toBe('…\u0001Café\u0002…');
    expect(cutMarkCompleted('…\u0001Caf\u0002…', body, ['"ca"', '"cafe ole"'])).toBe('…\u0001Café Olé\u0002…');
    expect(cutMarkCompleted('x \u0001Caf\u0002…', 'x Café', ['"café"'])).toBe('x \u0001Café\u0002');
  });

  it('leaves the snippet as it is when no phrase continues past the mark, or no mark touches the cut', () => {
    expect(cutMarkCompleted('…\u0001Caf\u0002…', 'x Café Olé y', ['"cab"'])).toBe('…\u0001Caf\u0002…');
    expect(cutMarkCompleted('…\u0001Café\u0002 O…', 'x Café Olé y', ['"café"'])).toBe('…\u0001Café\u0002 O…');
    expect(cutMarkCompleted('…\u0001Caf\u0002…', 'nothing here', ['"café"'])).toBe('…\u0001Caf\u0002…');
  });
});

describe('a match cut unmarked at a snippet end (ncrecheck67 F2)', () => {
  const log = new RecordedSessionLog();
  // The window starts inside the first match (18 characters apart), or ends at the first token of a touching second one.
  log.append('tower2', user('start', `${KANA}東京タワー${KANA.slice(0, 18)}東京タワー${KANA}`));
  log.append('tower2', user('touching', `${KANA.slice(0, 20)}東京タワー東京タワー${KANA}`));
  const store = projectedReadModels(log);
  const snippets = () => searchRecall(store, { tenantId: 'default', q: '東京タワー', sessionId: 'tower2', limit: 5 }).items.map((h) => h.snippet);

  it('given matches the window cuts, when recall shows them, then no part of a match is outside a mark', () => {
    for (const snippet of snippets()) {
      const shownText = snippet.replace(/<mark>[^<]*<\/mark>/g, '|');
      // Whatever is outside the marks holds no piece of the phrase's start or end that belongs to a match.
      expect({ snippet, cut: /^…?京タワー|^…?タワー|東…$|東京…$|東京タ…$/.test(shownText) }).toEqual({ snippet, cut: false });
      expect(snippet).toContain('<mark>東京タワー');
    }
  });
});

describe('cutMarkCompleted at either end', () => {
  it('marks a match the start cut falls inside, and one that starts at the last characters before the end cut', () => {
    expect(cutMarkCompleted('…afé Olé y', 'x Café Olé y', ['"café"'])).toBe('…\u0001Café\u0002 Olé y');
    expect(cutMarkCompleted('x \u0001Café\u0002 C…', 'x Café Café', ['"café"'])).toBe('x \u0001Café\u0002 \u0001Café\u0002');
    expect(cutMarkCompleted('x \u0001Café\u0002C…', 'x CaféCafé z', ['"café"'])).toBe('x \u0001CaféCafé\u0002 z'.replace(' z', '…'));
  });
});
