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
