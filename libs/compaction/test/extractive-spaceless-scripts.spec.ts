/**
 * The extractive summary of text written without spaces (Chinese, Japanese, Thai): a long line is
 * shortened at a word boundary of its script (ICU's dictionary word boundaries), like an English
 * one, and an identifier written against such text (`予約番号XK42Q9を`) is listed (newcomer ncintl
 * F10, F11). English output is pinned: it does not change.
 */
import fc from 'fast-check';
import { extractiveSummary, getEstimator, MIN_COMPACT_SUMMARY_TOKENS, minCompactSummaryUnits, truncateMiddle, type TokenEstimator } from '../src';
import { summaryRequest } from './summary-request';
import { OMISSION_MARKER } from '../src/text';

const cl100k = getEstimator('cl100k_base');
const WORDS = new Intl.Segmenter('en', { granularity: 'word' });
const GRAPHEMES = new Intl.Segmenter('en', { granularity: 'grapheme' });
const SPACELESS_LETTER = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}]/u;

const request = summaryRequest;

/** The positions (UTF-16 code units) where `text` may be cut between words: ICU word boundaries. */
const wordBoundaries = (text: string): Set<number> => new Set([...WORDS.segment(text)].map((s) => s.index).concat(text.length));
const graphemeBoundaries = (text: string): Set<number> => new Set([...GRAPHEMES.segment(text)].map((s) => s.index).concat(text.length));

/** One long first message (a booking code glued to the text, no space, no punctuation), as in F10. */
const FIRST_MESSAGE = {
  ja: 'こんにちは大阪での会議が週末に移動になったのでいろいろと予定が変わってしまいました予約番号XK42Q9を土曜日に変更してくださいまた窓側の席とベジタリアンの食事をお願いしたく可能であれば同僚も予約に追加してくださいよろしくお願いします',
  zh: '你好我在大阪的会议改到了周末所以一切都变了请把预订号码XK42Q9改到星期六另外我想要一个靠窗的座位和素食餐如果可能的话请把我的同事也加到预订里非常感谢',
  th: 'สวัสดีครับการประชุมที่โอซาก้าถูกเลื่อนไปเป็นวันหยุดสุดสัปดาห์ทำให้ทุกอย่างเปลี่ยนไปกรุณาเปลี่ยนการจองXK42Q9เป็นวันเสาร์และขอที่นั่งริมหน้าต่างกับอาหารมังสวิรัติและเพิ่มเพื่อนร่วมงานในการจองถ้าเป็นไปได้ขอบคุณมากครับ',
} as const;

const ENGLISH =
  'Hello I am writing because my meeting in Osaka was moved to the weekend and so everything changes for me now please change reservation XK42Q9 to Saturday and also I would like a window seat and a vegetarian meal and please add my colleague to the booking if possible thank you very much';

describe('a tiny pass (the compact form) of text without spaces keeps its head and tail, cut between words (F10)', () => {
  const estimators = [cl100k, getEstimator('o200k_base'), getEstimator('chars')];
  const cases = Object.entries(FIRST_MESSAGE).flatMap(([lang, message]) => estimators.map((e) => [lang, e.name, message, e] as const));

  it.each(cases)(
    'given a long %s message holding XK42Q9 and a budget of 30 (%s), when summarized, then its head and tail stay, cut at word boundaries, at least the floor of content, and the code is listed',
    (_lang, _name, text, estimator: TokenEstimator) => {
      // the floor in chars (128 code units) holds one such message whole: two of them
      const message = estimator.name === 'chars' ? `${text}${text}` : text;
      const summary = extractiveSummary(request([`User: ${message}`, 'Assistant: OK'], 30), { estimator });
      const m = /^User:(.*?)\[… \d+ characters omitted …\](.*?)\s*Assistant: OK(?:\nIdentifiers: (.*))?$/su.exec(summary);
      expect(m).not.toBeNull();
      const [head, tail, identifiers] = [m![1].trim(), m![2].trim(), m![3]];
      // before: "User: [… 119 characters omitted …] Assistant: OK", nothing of the message kept
      expect(head.length).toBeGreaterThanOrEqual(8);
      expect(tail.length).toBeGreaterThan(0);
      expect(message.startsWith(head)).toBe(true);
      expect(message.endsWith(tail)).toBe(true);
      const boundaries = wordBoundaries(message);
      expect(boundaries.has(head.length)).toBe(true);
      expect(boundaries.has(message.length - tail.length)).toBe(true);
      // the floor (docs/strategies-and-triggers.md: at least 32 tokens of the archived text, 128 code units for chars, the
      // marker not counted), as an English message of the same kind gets it (before: 6 tokens)
      const content = (t: string) => estimator.count(t.replace(OMISSION_MARKER, ''));
      const english = extractiveSummary(request([`User: ${estimator.name === 'chars' ? `${ENGLISH} ${ENGLISH}` : ENGLISH}`, 'Assistant: OK'], 30), {
        estimator,
      });
      expect(content(summary)).toBeGreaterThanOrEqual(Math.min(minCompactSummaryUnits(estimator), content(english)));
      expect(`${head} ${tail} ${identifiers ?? ''}`).toContain('XK42Q9');
    },
  );

  it('given the same message in English, when summarized, then the summary is as before', () => {
    expect(extractiveSummary(request([`User: ${ENGLISH}`, 'Assistant: OK'], 30), { estimator: cl100k })).toBe(
      'User: Hello I am writing because my meeting in Osaka was [… 190 characters omitted …] to the booking if possible thank you very much\nAssistant: OK\nIdentifiers: XK42Q9',
    );
    expect(MIN_COMPACT_SUMMARY_TOKENS).toBe(32);
  });
});

/** Eight requests, one booking code each, as in F11 (seven of them summarized). */
const REQUESTS = {
  ja: (i: number) =>
    `依頼${i}：大阪での会議が移動になったので予約番号XK42Q${i}を土曜日に変更してください。また窓側の席とベジタリアンの食事と空港から駅近くのホテルまでのタクシーもお願いします。`,
  zh: (i: number) => `请求${i}：我在大阪的会议改时间了，请把预订号码XK42Q${i}改到星期六。另外我需要靠窗的座位和素食餐，还有从机场到车站附近酒店的出租车。`,
  th: (i: number) => `คำขอ${i} กรุณาเปลี่ยนการจองXK42Q${i}เป็นวันเสาร์เพราะการประชุมที่โอซาก้าถูกเลื่อนและต้องการที่นั่งริมหน้าต่างอาหารมังสวิรัติและแท็กซี่จากสนามบินไปโรงแรม`,
  en: (i: number) =>
    `Request ${i}: please change reservation XK42Q${i} to Saturday because my meeting in Osaka moved and I also need a window seat and a vegetarian meal for the flight and a taxi from the airport to the hotel near the station.`,
} as const;

const sevenTurns = (f: (i: number) => string): string[] => Array.from({ length: 7 }, (_, i) => [`User: ${f(i)}`, `Assistant: OK ${i}`]).flat();

/** The lines of a section of `summary` (up to the next blank line). */
const sectionLines = (summary: string, title: string): string[] => {
  const blocks = summary.split('\n\n');
  const block = blocks.find((b) => b.startsWith(`${title}\n`));
  return block === undefined ? [] : block.split('\n').slice(1);
};

describe('a budgeted summary of text without spaces (F11)', () => {
  const cases = (['ja', 'zh', 'th'] as const).flatMap((lang) => [150, 250, 400].map((budget) => [lang, budget] as const));

  it.each(cases)(
    'given seven %s requests with a booking code each, when summarized within %i tokens, then no message is replaced by its length, shortened ones are cut at a word, and no sentence or word is listed as an identifier',
    (lang, budget) => {
      const messages = Array.from({ length: 7 }, (_, i) => REQUESTS[lang](i));
      const summary = extractiveSummary(request(sevenTurns(REQUESTS[lang]), budget), { estimator: cl100k });
      // before (ja): "- (86 characters, not shown)"; (th): "- คำขอ0 …", the message cut at its one space
      expect(summary.split('\n').filter((l) => /characters, not shown\)$/.test(l))).toEqual([]);
      for (const line of sectionLines(summary, 'User messages (oldest first):').filter((l) => !/^- \(\+\d+ more\)$/.test(l))) {
        const text = line.replace(/^- /, '');
        const message = messages.find((m) => m.startsWith(text.replace(/ …$/, '')));
        expect({ line, found: message !== undefined }).toEqual({ line, found: true });
        if (text.endsWith(' …')) {
          const kept = text.slice(0, -2);
          expect({ line, atWord: wordBoundaries(message!).has(kept.length) }).toEqual({ line, atWord: true });
          // shortened near the cap, not at the message's first space (Thai: "คำขอ0 …")
          expect(kept.length).toBeGreaterThan(message!.indexOf('XK42Q'));
        } else expect(text).toBe(message);
      }
      const listed = [
        ...sectionLines(summary, 'Artefacts (identifiers, values, paths):').flatMap((l) => l.replace(/ \(\+\d+ more\)$/, '').split(', ')),
        ...summary
          .split('\n')
          .filter((l) => l.startsWith('Identifiers: '))
          .flatMap((l) => l.slice('Identifiers: '.length).split(', ')),
      ];
      expect(listed.length).toBeGreaterThan(0);
      // before (ja): "大阪での会議が移動になったので予約番号XK42Q0を土曜日に変更してください, 依頼0, 依頼1, …"
      expect(listed.filter((a) => SPACELESS_LETTER.test(a) || !/^XK42Q\d$/.test(a))).toEqual([]);
    },
  );

  it.each(['ja', 'zh', 'th'] as const)(
    "given seven %s requests, when summarized within 150 tokens (the newcomer's pass), then all seven booking codes stay, as in English",
    (lang) => {
      const summary = extractiveSummary(request(sevenTurns(REQUESTS[lang]), 150), { estimator: cl100k });
      // before (ja, zh): XK42Q0 only; (th): none
      expect([0, 1, 2, 3, 4, 5, 6].filter((i) => !summary.includes(`XK42Q${i}`))).toEqual([]);
    },
  );

  it('given the same requests in English, when packed into 150 tokens, then the summary is as before', () => {
    expect(extractiveSummary(request(sevenTurns(REQUESTS.en), 150), { estimator: cl100k })).toBe(
      [
        '[Extractive summary (extractive-v1, no model) of 14 earlier events]',
        '',
        'User messages (oldest first):',
        '- Request 0: please change reservation XK42Q0 to Saturday because my meeting …',
        '- Request 6: please change reservation XK42Q6 to Saturday because my meeting …',
        '- (+5 more)',
        '',
        'Artefacts (identifiers, values, paths):',
        'XK42Q0, XK42Q1, XK42Q2, XK42Q3, XK42Q4, XK42Q5, XK42Q6',
        '',
        'Last events before the cut:',
        '- Assistant: OK 6',
        '- (+2 more)',
      ].join('\n'),
    );
  });
});

describe('identifiers written against other scripts', () => {
  const artefacts = (texts: string[]): string[] => {
    const lines = extractiveSummary(request(texts), { maxChars: 6000 }).split('\n');
    const at = lines.indexOf('Artefacts (identifiers, values, paths):');
    return at < 0 ? [] : lines[at + 1].split(', ');
  };

  it('given codes glued to Japanese, Chinese, Thai and Cyrillic words, when summarized, then each code is listed on its own and no run of those letters is', () => {
    expect(
      artefacts([
        'User: 依頼0：予約番号XK42Q9を土曜日に変更してください。',
        'User: กรุณาเปลี่ยนการจองTH1234เป็นวันเสาร์',
        'User: 请求1：请把预订号码ZH5678改到星期六。',
        'User: 注文番号1234567を確認してください',
        'User: номер заказаRU5566пожалуйста',
      ]),
    ).toEqual(['XK42Q9', 'TH1234', 'ZH5678', '1234567', 'RU5566']);
  });

  it('given identifiers of one script (with digits, marks, _ and -), when summarized, then they are listed whole as before', () => {
    expect(artefacts(['User: Buchungsnummer DE77ÖÄ, Бронирование ЁЖИК42, Büro Zürich2024, Feld größe_x1, code AB-12_cd and 12345 too.'])).toEqual([
      'DE77ÖÄ',
      'ЁЖИК42',
      'Zürich2024',
      'größe_x1',
      'AB-12_cd',
      '12345',
    ]);
  });
});

describe('truncateMiddle between words of text without spaces', () => {
  const word = fc.constantFrom(
    '予約',
    '番号',
    'を',
    '土曜日',
    'に',
    '変更',
    'して',
    'ください',
    '会議',
    'ベジタリアン',
    'การจอง',
    'เป็น',
    'วันเสาร์',
    '预订',
    '号码',
    '星期六',
    'XK42Q9',
    '😀',
    '👩‍👩‍👧‍👦',
    '🇯🇵',
  );

  /** The longest word of `text` as ICU segments it (12 at least: the longest piece, a family emoji, is 11). */
  const longestWord = (text: string) => Math.max(12, ...[...WORDS.segment(text)].map((s) => s.segment.length));

  it('given pieces that ICU segments as one word longer than any piece, when cut between words, then a side may lose that whole word', () => {
    // found by the property below with a seed other than its own (741520597): the oracle allowed 12
    // code units lost per side, but Thai and a Latin code glued together are one word of 19 here
    const text = [
      '予約',
      'การจอง',
      '🇯🇵',
      '予約',
      '予約',
      'เป็น',
      'XK42Q9',
      'XK42Q9',
      'วันเสาร์',
      '予約',
      '予約',
      '予約',
      '予約',
      '👩‍👩‍👧‍👦',
      '予約',
      '予約',
      '👩‍👩‍👧‍👦',
      '予約',
      '予約',
      '🇯🇵',
      '予約',
      'วันเสาร์',
      '予約',
      'เป็น',
    ].join('');
    expect([...WORDS.segment(text)].map((s) => s.segment)).toContain('เป็นXK42Q9XK42Q9วัน');
    expect(longestWord(text)).toBe(19);
    const out = truncateMiddle(text, 94, { atWords: true });
    const [head, tail] = out.split(/ ?\[… \d+ characters omitted …\] ?/u);
    expect(wordBoundaries(text).has(head.length) && wordBoundaries(text).has(text.length - tail.length)).toBe(true);
    const keep = 94 - ` [… ${text.length} characters omitted …] `.length;
    expect(head.length + tail.length).toBeLessThan(keep - 2 * 12); // more than 12 lost on a side
    expect(head.length + tail.length).toBeGreaterThanOrEqual(keep - 2 * longestWord(text));
  });

  it('property: the kept head and tail end at word boundaries, never split a grapheme, and keep all but about a word at each end', () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 20, maxLength: 200 }), fc.integer({ min: 60, max: 400 }), (words, max) => {
        const text = words.join('');
        fc.pre(text.length > max);
        const out = truncateMiddle(text, max, { atWords: true });
        expect(out.length).toBeLessThanOrEqual(max);
        const m = /^(.*?) ?\[… (\d+) characters omitted …\] ?(.*)$/su.exec(out);
        expect(m).not.toBeNull();
        const [, head, omitted, tail] = m!;
        expect(text.startsWith(head) && text.endsWith(tail)).toBe(true);
        expect(head.length + Number(omitted) + tail.length).toBe(text.length);
        const graphemes = graphemeBoundaries(text);
        expect(graphemes.has(head.length) && graphemes.has(text.length - tail.length)).toBe(true);
        // the marker takes ~30 of max; each side loses at most its last word: a word as ICU segments
        // the text, which can span pieces (`เป็นXK42Q9XK42Q9วัน` is one word of 19), not a piece
        const keep = max - ` [… ${text.length} characters omitted …] `.length;
        expect(head.length + tail.length).toBeGreaterThanOrEqual(keep - 2 * longestWord(text));
      }),
      { numRuns: 200, seed: 11 },
    );
  });
});
