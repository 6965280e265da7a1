/**
 * The extractive summary never splits a word where it shortens a long line (in every form: the
 * unbudgeted sections, the whole-summary bound, the compact form), and its artefact list leaves
 * out bare JSON keys, the parts of a listed date and the values already listed in a `key=value`.
 */
import fc from 'fast-check';
import { extractiveSummary, getEstimator, truncateMiddle } from '../src';
import { summaryRequest } from './summary-request';

const cl100k = getEstimator('cl100k_base');
const WORD = /[\p{L}\p{N}\p{M}_]+/gu;
const MARKER = / ?\[… \d+ (?:characters|more) omitted …\] ?/g;

const request = summaryRequest;

/** The words of `output` that touch an omission marker and are not whole words of `input`. */
function splitWords(output: string, input: string): string[] {
  const words = new Set(input.match(WORD) ?? []);
  const bad: string[] = [];
  for (const m of output.matchAll(MARKER)) {
    const at = m.index ?? 0;
    const before = /[\p{L}\p{N}\p{M}_]+$/u.exec(output.slice(Math.max(0, at - 200), at));
    const after = /^[\p{L}\p{N}\p{M}_]+/u.exec(output.slice(at + m[0].length, at + m[0].length + 200));
    for (const w of [before?.[0], after?.[0]]) if (w !== undefined && !words.has(w)) bad.push(w);
  }
  return bad;
}

/** A tau-bench-like conversation: user prose, tool calls and long JSON tool results. */
function conversation(): string[] {
  const events: string[] = [];
  for (let i = 0; i < 6; i++) {
    const user = {
      user_id: `lucas_brown_${4820 + i}`,
      name: { first_name: 'Lucas', last_name: 'Brown' },
      address: { address1: `${100 + i} Laurel Lane`, address2: `Suite ${500 + i}`, city: 'Houston', zip: '10029' },
      email: `lucas.brown${i}@example.com`,
      dob: '1967-03-12',
      reservations: [`OI5L9${i}`, `KA7I6${i}`],
    };
    const reservation = {
      reservation_id: `RES${i}Z9`,
      origin: 'DEN',
      destination: 'IAH',
      flights: [{ flight_number: `HAT0${10 + i}`, date: '2024-05-12', price: 1260 + i }],
      payment_history: [{ payment_id: `credit_card_98798${i}`, amount: 455 + i }],
    };
    events.push(`User: Hi, I would like to change the reservation_id I booked; my user id is lucas_brown_${4820 + i} and the trip is important to me.`);
    events.push(`Assistant [tool calls: get_user_details({"user_id": "lucas_brown_${4820 + i}"})]`);
    events.push(`Tool [responses: get_user_details -> ${JSON.stringify(user, null, 1).replace(/\n/g, ' ')}]`);
    events.push(`Tool [responses: get_reservation_details -> ${JSON.stringify(reservation)}]`);
    events.push(
      `Assistant: **Reservation details:** the reservation holds ${reservation.flights.length} flight from DEN to IAH. **Payment:** it was paid by credit card; ${'please confirm the change you want and I will look at the options available on that date. '.repeat(4)}`,
    );
  }
  return events;
}

describe('extractive summary: shortened lines keep whole words', () => {
  const events = conversation();
  // the input's words and the summary's own (headings, header, tool counts): the summary unbounded
  const input = `${events.join('\n')}\n${extractiveSummary(request(events), { maxChars: 1e9 })}`;

  it.each([200, 400, 700, 1200, 2500, 6000])('unbudgeted, maxChars %i: every word beside a marker is a whole word of the input', (maxChars) => {
    const text = extractiveSummary(request(events), { maxChars });
    expect(text.length).toBeLessThanOrEqual(maxChars);
    expect(text).toMatch(/omitted …\]/); // the case under test: something was shortened
    expect(splitWords(text, input)).toEqual([]);
  });

  it.each([40, 120, 300])('budgeted (compact or packed form), %i tokens: no split word', (budget) => {
    const text = extractiveSummary(request(events, budget), { estimator: cl100k });
    expect(splitWords(text, input)).toEqual([]);
  });

  it('cuts whole words out of a long JSON line, deterministically', () => {
    const line = `Tool [responses: get_user_details -> {"dob": "1967-03-12", "name": "Lucas", "note": "${'word '.repeat(80)}end"}]`;
    const a = truncateMiddle(line, 120, { atWords: true });
    expect(a).toBe(truncateMiddle(line, 120, { atWords: true }));
    expect(a.length).toBeLessThanOrEqual(120);
    expect(splitWords(a, line)).toEqual([]);
  });

  it('a single huge token has no boundary and is cut as before', () => {
    const token = 'x'.repeat(500);
    expect(truncateMiddle(token, 100, { atWords: true })).toBe(truncateMiddle(token, 100));
  });

  it('property: truncateMiddle with atWords never splits a word of a text that has a boundary, and stays within the bound', () => {
    const piece = fc.oneof(fc.stringMatching(/^[a-z0-9_]{1,30}$/), fc.constantFrom(' ', ', ', '": "', '{"', '"}', '-', '/', '\n', 'é', '😀'));
    fc.assert(
      fc.property(fc.array(piece, { minLength: 2, maxLength: 60 }), fc.integer({ min: 40, max: 400 }), (pieces, max) => {
        const text = pieces.join('');
        const out = truncateMiddle(text, max, { atWords: true });
        expect(out.length).toBeLessThanOrEqual(Math.max(max, 0));
        if ((text.match(WORD) ?? []).length > 1) expect(splitWords(out, text)).toEqual([]);
        expect(out).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});

describe('extractive summary: the artefact list', () => {
  const events = conversation();
  const artefacts = (text: string) => {
    const lines = text.split('\n');
    const at = lines.indexOf('Artefacts (identifiers, values, paths):');
    return at < 0 ? [] : lines[at + 1].replace(/ \(\+\d+ more\)$/, '').split(', ');
  };

  it('has no bare JSON keys, no parts of a listed date, no value repeated beside its key=value', () => {
    const list = artefacts(extractiveSummary(request(events.slice(0, 5)), { maxChars: 6000 }));
    expect(list).toEqual(expect.arrayContaining(['user_id=lucas_brown_4820', 'zip=10029', 'dob=1967-03-12', 'date=2024-05-12', 'reservation_id=RES0Z9']));
    for (const bare of ['first_name', 'last_name', 'address1', 'address2', 'flight_number', 'payment_id', 'payment_history']) expect(list).not.toContain(bare);
    for (const fragment of ['1967', '03', '12', '2024', '05']) expect(list).not.toContain(fragment);
    for (const repeat of ['10029', '1967-03-12', '2024-05-12', 'lucas_brown_4820']) expect(list).not.toContain(repeat);
    // a name used outside keys too (the user's prose) stays
    expect(list).toContain('reservation_id');
    expect(new Set(list).size).toBe(list.length);
  });

  it('keeps a date and its numbers when they stand alone', () => {
    const list = artefacts(extractiveSummary(request(['User: the trip on 2024-05-12 costs 2024 dollars, seat 12 of 05 rows']), { maxChars: 6000 }));
    expect(list).toEqual(expect.arrayContaining(['2024-05-12', '2024', '12', '05']));
  });
});

describe('extractive artefacts are whole words of any script (newcomer report ncrecall, item 4)', () => {
  const codes = ['DE77ÖÄ', 'ЁЖИК42', 'Zürich2024', 'größe_x1'];
  const texts = [`Buchungsnummer ${codes[0]}, Бронирование ${codes[1]}, Büro ${codes[2]} und Feld ${codes[3]}.`, 'Danke, erledigt.'];
  const inputWords = new Set([...texts.join(' ').matchAll(/[\p{L}\p{N}\p{M}_]+/gu)].map((m) => m[0]));
  /** The words of `summary` mixing letters and digits that are not words of the input (`v1` of the header's `extractive-v1` aside). */
  const fragments = (summary: string) =>
    [...summary.matchAll(/[\p{L}\p{N}\p{M}_]+/gu)].map((m) => m[0]).filter((w) => /\p{N}/u.test(w) && /\p{L}/u.test(w) && w !== 'v1' && !inputWords.has(w));

  it('given an identifier with non-ASCII letters, when summarized, then it is listed whole, never as its ASCII prefix', () => {
    const summary = extractiveSummary(request(texts));
    expect(summary).toContain(codes[0]);
    expect(summary).not.toMatch(/DE77(?!ÖÄ)/u);
    expect(summary).not.toMatch(/(?<![\p{L}\p{N}_])e_x1/u);
    expect(summary).not.toMatch(/(?<![\p{L}\p{N}_])42/u); // the digits of ЁЖИК42 are no number of their own
    expect(fragments(summary)).toEqual([]);
  });

  it('given a budget that forces the compact form, when summarized, then the identifiers listed are whole words of the input', () => {
    const filler = Array.from({ length: 40 }, (_, i) => `Satz ${i} mit vielen weiteren Wörtern ohne Bedeutung für den Inhalt.`).join(' ');
    for (const budget of [60, 90, 140]) {
      const summary = extractiveSummary(request([...texts, filler], budget), { estimator: cl100k });
      expect({ budget, fragments: fragments(summary) }).toEqual({ budget, fragments: [] });
      expect({ budget, bad: /DE77(?!ÖÄ)/u.test(summary) }).toEqual({ budget, bad: false });
    }
  });
});

describe('extractive identifiers take letters, digits and marks of any script (newcomer report ncintl, F7)', () => {
  const cases = [
    ['Please open C:\\Users\\Jürgen\\Größe.txt and mail jürgen.müller@straße.de', ['C:\\Users\\Jürgen\\Größe.txt', 'jürgen.müller@straße.de']],
    ['Please open /var/log/журнал-ошибок.log and mail иван@пример.рф', ['/var/log/журнал-ошибок.log', 'иван@пример.рф']],
    [
      'ファイル /home/ユーザー/ドキュメント/報告書_2024.pdf を開けません、メールは 山田太郎@例え.テスト です',
      ['/home/ユーザー/ドキュメント/報告書_2024.pdf', '山田太郎@例え.テスト'],
    ],
    ['注文番号はＡＢ－１２３４５６です。رقم الطلب AR-77812 والبريد user@مثال.مصر', ['ＡＢ－１２３４５６', 'AR-77812', 'user@مثال.مصر']],
  ] as const;

  it.each(cases)('given %j, when summarized, then its paths, e-mails and codes are listed whole', (line, identifiers) => {
    const summary = extractiveSummary(request([`Assistant: ${line}`, 'User: ok']), { maxChars: 6000 });
    const list = summary.split('\n')[summary.split('\n').indexOf('Artefacts (identifiers, values, paths):') + 1].split(', ');
    expect(list).toEqual(expect.arrayContaining([...identifiers]));
    // no cut-off prefix of them, and no sentence glued to a code
    for (const bad of ['C:\\Users\\J', '/var/log/', '１２３４５６です', '報告書_2024']) expect(list).not.toContain(bad);
  });

  it('given a pass too small for its sections, when summarized in the compact form, then no identifier is listed as a prefix that names another path or address', () => {
    for (const [line, identifiers] of cases.slice(0, 2)) {
      const events = ['User: help me please', `Assistant: ${line}`, 'User: ok', 'Assistant: done'];
      const archived = events.reduce((sum, e) => sum + cl100k.count(e), 0);
      for (const budget of [archived - 6, archived - 3, archived, archived + 3]) {
        const summary = extractiveSummary(request(events, budget), { estimator: cl100k });
        const listed = (summary.split('\n').find((l) => l.startsWith('Identifiers: ')) ?? 'Identifiers: ')
          .slice('Identifiers: '.length)
          .split(', ')
          .filter(Boolean);
        // a path or e-mail on the Identifiers line is one of the input's, whole (not `C:\\Users\\J`, `/var/log/`)
        expect({ budget, listed: listed.filter((x) => /[\\/@]/.test(x) && !(identifiers as readonly string[]).includes(x)) }).toEqual({ budget, listed: [] });
      }
    }
  });
});
