/**
 * Recall snippets are cut and marked between grapheme clusters (newcomer report ncmultilingual,
 * F1 and F2): FTS5's own cut of a short snippet split `क्षत्रिय`, a tag flag, a ZWJ sequence and an
 * Arabic letter from its haraka; a part of an emoji sequence (`👍` in `👍🏿`, the digit of `1️⃣`)
 * was marked alone, inside its cluster.
 */
import fc from 'fast-check';
import { searchRecall } from './queries/recall-query';
import { recallFold } from './recall-document';
import { marksOnClusters, snippetCutsOnClusters } from './recall-snippet-clusters';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

const SCOTLAND = '🏴󠁧󠁢󠁳󠁣󠁴󠁿';
const ENGLAND = '🏴󠁧󠁢󠁥󠁮󠁧󠁿';

/** The text a snippet shows: HTML entities decoded, `<mark>` tags dropped. */
function shown(snippet: string): string {
  return snippet.replace(/<\/?mark>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}

describe('recall snippets are cut between grapheme clusters (ncmultilingual F1)', () => {
  const log = new RecordedSessionLog();
  log.append('deva', user('deva', '東京駅क्षत्रिय'.repeat(3)));
  log.append('flag', user('flag', `alpha 👩🏽‍💻 beta ${SCOTLAND} gamma `.repeat(6)));
  log.append('family', user('family', 'ab👨‍👩‍👧‍👦'.repeat(12)));
  log.append('coder', user('coder', '👩🏽‍💻'.repeat(12)));
  log.append('arabic', user('arabic', '東京駅مُحَمَّد'.repeat(12)));
  log.append('before', user('before', `${'👨‍👩‍👧‍👦'.repeat(10)}東京駅${'👨‍👩‍👧‍👦'.repeat(10)}`));
  const store = projectedReadModels(log);
  const snippet = (q: string, sessionId: string) => {
    const items = searchRecall(store, { tenantId: 'default', q, sessionId }).items;
    expect(items).toHaveLength(1);
    return items[0].snippet;
  };

  it('given a Devanagari conjunct at the cut (trigram index), when recall shows the hit, then the cut follows the whole cluster', () => {
    expect(snippet('東京駅', 'deva')).toBe('<mark>東京駅</mark>क्षत्रिय<mark>東京駅</mark>क्षत्रिय<mark>東京駅</mark>क्ष…');
  });

  it('given a tag flag at the cut (word index), when recall shows the hit, then the flag keeps its tag characters', () => {
    expect(snippet('alpha', 'flag')).toMatch(new RegExp(`beta ${SCOTLAND}…$`, 'u'));
  });

  it('given a ZWJ sequence at the cut inside a mark, when recall shows the hit, then the rest of the sequence goes inside the mark', () => {
    expect(snippet('👨‍👩‍👧‍👦', 'family')).toBe('ab<mark>👨‍👩‍👧‍👦</mark>ab<mark>👨‍👩‍👧‍👦</mark>ab<mark>👨‍👩‍👧‍👦</mark>…');
  });

  it('given a skin-toned ZWJ sequence at the cut, when recall shows the hit, then it is not shown as its first emoji', () => {
    expect(snippet('👩🏽‍💻', 'coder')).toBe(`<mark>${'👩🏽‍💻'.repeat(6)}</mark>👩🏽‍💻…`);
  });

  it('given an Arabic letter with harakat at the cut, when recall shows the hit, then the letter keeps its haraka', () => {
    expect(snippet('東京駅', 'arabic')).toMatch(/<mark>東京駅<\/mark>مُ…$/u);
  });

  it('given a cut at the start inside a ZWJ sequence, when recall shows the hit, then the start moves back to the whole sequence', () => {
    expect(shown(snippet('東京駅', 'before'))).toMatch(/^…(👨‍👩‍👧‍👦)+東京駅(👨‍👩‍👧‍👦)+…$/u);
  });
});

describe('recall marks a match inside an emoji sequence as the whole sequence (ncmultilingual F2)', () => {
  const log = new RecordedSessionLog();
  log.append('s', user('keycap', 'press 1️⃣ now'));
  log.append('s', user('family', 'family 👨‍👩‍👧‍👦 here'));
  log.append('s', user('thumb', 'thumb 👍🏿 here'));
  log.append('s', user('england', `flag ${ENGLAND} here`));
  log.append('s', user('dev', 'dev 👩‍💻 here'));
  const store = projectedReadModels(log);
  const snippets = (q: string) => Object.fromEntries(searchRecall(store, { tenantId: 'default', q }).items.map((item) => [item.eventId, item.snippet]));

  it.each([
    ['1', 'keycap', 'press <mark>1️⃣</mark> now'],
    ['👩', 'family', 'family <mark>👨‍👩‍👧‍👦</mark> here'],
    ['👨‍👩', 'family', 'family <mark>👨‍👩‍👧‍👦</mark> here'],
    ['👩', 'dev', 'dev <mark>👩‍💻</mark> here'],
    ['💻', 'dev', 'dev <mark>👩‍💻</mark> here'],
    ['👍', 'thumb', 'thumb <mark>👍🏿</mark> here'],
    ['🏿', 'thumb', 'thumb <mark>👍🏿</mark> here'],
    ['🏴', 'england', `flag <mark>${ENGLAND}</mark> here`],
  ])('given q=%s, when recall shows the hit %s, then the whole cluster is marked', (q, eventId, expected) => {
    expect(snippets(q)[eventId]).toBe(expected);
  });
});

describe('snippetCutsOnClusters', () => {
  it('moves both cuts outwards to cluster boundaries of the body, inside a mark that touches them', () => {
    const body = 'x 👨‍👩‍👧‍👦 y 👍🏿 z';
    expect(snippetCutsOnClusters('…\u0001👧‍👦\u0002 y 👍…', body)).toBe('…\u0001👨‍👩‍👧‍👦\u0002 y 👍🏿…');
    expect(snippetCutsOnClusters('…‍👦 y \u0001👍\u0002…', body)).toBe('…👨‍👩‍👧‍👦 y \u0001👍🏿\u0002…');
  });

  it('drops the … of a cut that moves to an end of the body, and keeps a snippet whose text is not in the body as it is', () => {
    expect(snippetCutsOnClusters('…👩‍👧‍👦 y', '👨‍👩‍👧‍👦 y')).toBe('👨‍👩‍👧‍👦 y');
    expect(snippetCutsOnClusters('…b c…', 'a b d')).toBe('…b c…');
    expect(snippetCutsOnClusters('a b', 'a b c')).toBe('a b');
  });
});

describe('marksOnClusters', () => {
  it('widens marks to whole clusters and merges those that then touch or overlap, never over a leading or trailing …', () => {
    expect(marksOnClusters('\u0001👨\u0002‍\u0001👩\u0002‍👧‍👦 and \u0001é\u0002')).toBe('\u0001👨‍👩‍👧‍👦\u0002 and \u0001é\u0002');
    expect(marksOnClusters('e\u0001\u0301\u0002x')).toBe('\u0001e\u0301\u0002x');
    expect(marksOnClusters('…\u0001\u0301a\u0002…')).toBe('…\u0001\u0301a\u0002…');
    expect(marksOnClusters('no marks')).toBe('no marks');
  });
});

describe('property: every recall snippet is whole grapheme clusters of the event text, marks too', () => {
  const piece = fc.constantFrom(
    'alpha',
    'beta',
    ' ',
    ' ',
    '\n',
    '東京駅',
    '新幹線',
    'क्षत्रिय',
    'मुंबई',
    'مُحَمَّد',
    'الحَجْزِ',
    '👨‍👩‍👧‍👦',
    '👩‍💻',
    '👩🏽‍💻',
    '👍🏿',
    '👍',
    SCOTLAND,
    ENGLAND,
    '1️⃣',
    '#️⃣',
    '1',
    '🇯🇵',
    'e\u0301',
  );
  const text = fc.array(piece, { minLength: 1, maxLength: 120 }).map((parts) => parts.join(''));
  const boundaries = (t: string) => new Set([...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(t)].map((s) => s.index).concat(t.length));

  /** Whether `snippet` (HTML) is, without its marks and `…`, a run of whole clusters of `event` with its marks on cluster boundaries. */
  function wholeClusters(snippet: string, event: string): boolean {
    let marked = shown(snippet.replace(/<mark>/g, '\u0001').replace(/<\/mark>/g, '\u0002'));
    marked = marked.replace(/^…/, '').replace(/…$/, '');
    const edges: number[] = [];
    let kept = '';
    for (const part of marked.split(/([\u0001\u0002])/)) {
      if (part === '\u0001' || part === '\u0002') edges.push(kept.length);
      else kept += part;
    }
    const whole = boundaries(event);
    for (let at = event.indexOf(kept); at >= 0; at = event.indexOf(kept, at + 1))
      if (whole.has(at) && whole.has(at + kept.length) && edges.every((edge) => whole.has(at + edge))) return true;
    return false;
  }

  it('for random texts of words, CJK, Devanagari, Arabic with harakat, ZWJ sequences, skin tones, tag flags and keycaps', () => {
    fc.assert(
      fc.property(
        fc.array(text, { minLength: 1, maxLength: 3 }),
        fc.constantFrom('alpha', '東京駅', 'क्षत्रिय', 'مُحَمَّد', '👩', '👍', '💻', '1', '🏴', '👨‍👩‍👧‍👦', '👩🏽‍💻', SCOTLAND),
        (texts, q) => {
          const log = new RecordedSessionLog();
          texts.forEach((t, k) => log.append('p', user(`e${k}`, t)));
          const store = projectedReadModels(log);
          try {
            for (const item of searchRecall(store, { tenantId: 'default', q, limit: 100 }).items) {
              const event = recallFold(texts[Number(item.eventId.slice(1))]);
              if (!wholeClusters(item.snippet, event)) throw new Error(`q=${q}: ${JSON.stringify(item.snippet)} splits a cluster of ${JSON.stringify(event)}`);
            }
          } finally {
            store.close();
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
