/**
 * A recall snippet is bounded in characters whatever the text (newcomer report ncintl, F5): FTS5's
 * `snippet()` cuts in tokens, and a run of Japanese or Chinese without spaces, or of emoji, is one
 * unicode61 token, so a word found through the word index next to such a run got the whole event
 * as its snippet (198,000 characters per hit, 11.9 MB for a page of 20).
 */
import fc from 'fast-check';
import { hasLoneSurrogate } from '../domain/openai-chat-format';
import { searchRecall } from './queries/recall-query';
import { boundSnippet, RECALL_SNIPPET_MAX_LENGTH } from './recall-snippet-bound';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog, user } from './testing/recorded-session-log';

/** The text a snippet shows: HTML entities decoded, `<mark>` tags dropped. */
function shown(snippet: string): string {
  return snippet.replace(/<\/?mark>/g, '').replace(/&(amp|lt|gt|quot|#39);/g, (_, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e]!);
}
const codePoints = (text: string) => [...text].length;

describe(`recall snippets are at most ${RECALL_SNIPPET_MAX_LENGTH} characters (code points), whatever the text (ncintl F5)`, () => {
  const log = new RecordedSessionLog();
  log.append('s', user('emoji', `needleemoji ${'😀'.repeat(20_000)}`));
  log.append('s', user('ja', `needleja ${'東京駅の新幹線ホーム'.repeat(2_000)}`));
  log.append('s', user('mid', `${'東京駅の新幹線ホーム'.repeat(1_000)} needlemid ${'東京駅の新幹線ホーム'.repeat(1_000)}`));
  log.append('s', user('flags', `${'🇯🇵🇩🇪'.repeat(500)} needleflag ${'👩‍👩‍👧‍👦👍🏽'.repeat(500)}`));
  log.append('s', user('order', `お問い合わせ番号ORDX7Q2について。${'配送状況を確認しています'.repeat(2_000)}`));
  log.append('s', user('latin', `needlelatin ${'word '.repeat(2_000)}`));
  const store = projectedReadModels(log);
  const hit = (q: string) => {
    const items = searchRecall(store, { tenantId: 'default', q }).items;
    expect(items).toHaveLength(1);
    return items[0].snippet;
  };

  it.each(['needleemoji', 'needleja', 'needlemid', 'needleflag', 'ORDX7Q2', 'needlelatin'])(
    'given a word found through the word index next to a long run without spaces, when recall shows its hit (q=%s), then the snippet is bounded and holds the match',
    (q) => {
      const snippet = hit(q);
      expect(codePoints(shown(snippet))).toBeLessThanOrEqual(RECALL_SNIPPET_MAX_LENGTH);
      expect(hasLoneSurrogate(snippet)).toBe(false);
      expect(snippet.toLowerCase()).toContain(`<mark>${q.toLowerCase()}</mark>`);
    },
  );

  it('cuts a long run on grapheme boundaries: no flag re-paired, ZWJ family or skin tone split at the cut', () => {
    const cut = shown(hit('needleflag'));
    expect(cut.startsWith('…') && cut.endsWith('…')).toBe(true);
    const text = cut.replace(/^…|…$/g, '');
    const [before, after] = text.split('needleflag');
    // 🇯🇵🇩🇪 repeated: whole pairs only, in their order
    expect(before.trim()).toMatch(/^(🇩🇪)?(🇯🇵🇩🇪)*(🇯🇵)?$/u);
    expect(after.trim()).toMatch(/^(👩‍👩‍👧‍👦👍🏽)*(👩‍👩‍👧‍👦)?$/u);
  });

  it('cuts the excerpt of a substring hit (an emoji) between grapheme clusters too: no keycap or flag split', () => {
    const log = new RecordedSessionLog();
    for (let k = 0; k < 4; k++) log.append('t', user(`k${k}`, `${'#️⃣'.repeat(30 + k)}😀${'x🇯🇵'.repeat(30 + k)}`));
    for (const item of searchRecall(projectedReadModels(log), { tenantId: 'default', q: '😀' }).items)
      expect(shown(item.snippet)).toMatch(/^…(#️⃣)+😀(x🇯🇵)+x?…$/u);
  });

  it('keeps a short snippet as FTS5 cut it', () => {
    const log = new RecordedSessionLog();
    log.append('t', user('a', 'a short line with a heron in it'));
    expect(searchRecall(projectedReadModels(log), { tenantId: 'default', q: 'heron' }).items[0].snippet).toBe('a short line with a <mark>heron</mark> in it');
  });

  it('property: any text around a word, the snippet of its hit is at most the bound, well-formed, and holds the marked word', () => {
    const piece = fc.constantFrom(
      '東京駅の新幹線ホーム',
      '😀',
      '🇯🇵',
      '🏴󠁧󠁢󠁳󠁣󠁴󠁿',
      '👩‍👩‍👧‍👦',
      '👍🏽',
      '𠮷野家',
      'ฉันต้องการเปลี่ยนการจอง',
      '서울에서',
      'e\u0301',
      ' ',
      'word',
      '<&>"\'',
      '—',
      '\n',
      'x'.repeat(50),
    );
    const side = fc.array(piece, { maxLength: 400 }).map((parts) => parts.join(''));
    fc.assert(
      fc.property(side, side, fc.constantFrom('zebracorn', 'ORD7781'), (before, after, word) => {
        const log = new RecordedSessionLog();
        log.append('p', user('e', `${before} ${word} ${after}`));
        const store = projectedReadModels(log);
        try {
          const [item] = searchRecall(store, { tenantId: 'default', q: word }).items;
          expect(codePoints(shown(item.snippet))).toBeLessThanOrEqual(RECALL_SNIPPET_MAX_LENGTH);
          expect(hasLoneSurrogate(item.snippet)).toBe(false);
          expect(item.snippet.toLowerCase()).toContain(`<mark>${word.toLowerCase()}</mark>`);
        } finally {
          store.close();
        }
      }),
      { numRuns: 150 },
    );
  });
});

describe('boundSnippet', () => {
  const cluster = fc.constantFrom('🇯🇵', '🇩🇪', '🇰🇷', '👩‍👩‍👧‍👦', '👍🏽', '🏴󠁧󠁢󠁳󠁣󠁴󠁿', '#️⃣', '東', '𠮷', 'ก', 'ำ', 'e\u0301', '한', ' ', 'a', '&');
  const run = fc.array(cluster, { maxLength: 300 }).map((parts) => parts.join(''));
  const boundaries = (text: string) =>
    new Set([...new Intl.Segmenter('und', { granularity: 'grapheme' }).segment(text)].map((s) => s.index).concat(text.length));

  it('property: at most the bound, marks balanced, the first match whole, cut only on grapheme boundaries of the whole text', () => {
    fc.assert(
      fc.property(run, fc.constantFrom('needle', '東京', '🇯🇵'), run, fc.integer({ min: 20, max: 120 }), (before, match, after, max) => {
        const text = before + match + after;
        const out = boundSnippet(`${before}\u0001${match}\u0002${after}`, max);
        const visible = out.replace(/[\u0001\u0002]/g, '');
        expect([...visible].length).toBeLessThanOrEqual(max);
        expect(hasLoneSurrogate(out)).toBe(false);
        expect(out).toContain(`\u0001${match}\u0002`);
        expect(out.replace(/[^\u0001\u0002]/g, '')).toBe('\u0001\u0002');
        const start = visible.startsWith('…') && !text.startsWith('…') ? 1 : 0;
        const end = visible.endsWith('…') && !text.endsWith('…') ? visible.length - 1 : visible.length;
        const kept = visible.slice(start, end);
        const at = start === 0 ? 0 : text.indexOf(kept, Math.max(0, before.length - kept.length));
        expect(text.slice(at, at + kept.length)).toBe(kept);
        // cut between graphemes where the cut is outside the match's own clusters
        const whole = boundaries(text);
        if (at > 0 && whole.has(before.length)) expect(whole.has(at)).toBe(true);
        if (at + kept.length < text.length && whole.has(before.length + match.length)) expect(whole.has(at + kept.length)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('cuts a long run of flags between whole flags, wherever the cut falls in the run', () => {
    for (let before = 60; before < 90; before++)
      for (const after of [0, 1, 37]) {
        const flags = (n: number) => '🇯🇵🇩🇪🇰🇷'.repeat(n).slice(0, 4 * n);
        const out = boundSnippet(`${flags(before)} \u0001needle\u0002 ${flags(after)}`, 50);
        expect({ before, after, out }).toEqual({ before, after, out: expect.stringMatching(/^…?(🇯🇵|🇩🇪|🇰🇷)* \u0001needle\u0002 (🇯🇵|🇩🇪|🇰🇷)*…?$/u) });
        const [head] = out.replace(/^…/, '').split(' ');
        expect(flags(before).endsWith(head)).toBe(true);
      }
  });

  it('cuts a match longer than the room, its mark closed at the cut', () => {
    expect(boundSnippet(`ab\u0001${'x'.repeat(50)}\u0002cd`, 10)).toBe(`…\u0001${'x'.repeat(8)}\u0002…`);
  });
});
