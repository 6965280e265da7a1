/**
 * The formatter and the token estimators of DESIGN §3.1. Expected strings are written from the
 * §3.1 table by hand; `chars` costs are hand-counted; tokenizer counts are checked against the
 * `tiktoken` package (the Rust tokenizer compiled to WASM), an implementation independent of the
 * gpt-tokenizer port the library uses.
 */
import fc from 'fast-check';
import { get_encoding, type Tiktoken as WasmTiktoken } from 'tiktoken';
import { ESTIMATOR_NAMES, eventCost, formatEvent, formatEventLines, getEstimator, isEstimatorName, type SessionEvent, type TokenEstimator } from '../src';
import { withUnicodeWhiteSpace } from '../src/bpe-token-counter';

describe('formatEventLines / formatEvent (DESIGN §3.1)', () => {
  const cases: Array<[string, SessionEvent, string[]]> = [
    ['user', { id: 'u', type: 'user', text: 'hi there' }, ['User: hi there']],
    ['system', { id: 's', type: 'system', text: 'Be brief.' }, ['System: Be brief.']],
    ['assistant text', { id: 'a', type: 'assistant', text: 'ok' }, ['Assistant: ok']],
    [
      'assistant tool calls, no text',
      {
        id: 'c',
        type: 'assistant',
        text: null,
        toolCalls: [
          { id: '1', name: 'f', arguments: '{"x":1}' },
          { id: '2', name: 'g', arguments: '{}' },
        ],
      },
      ['Assistant [tool calls: f({"x":1}), g({})]'],
    ],
    [
      'assistant text and tool call',
      { id: 'c', type: 'assistant', text: 'Checking.', toolCalls: [{ id: '1', name: 'f', arguments: 'not json' }] },
      ['Assistant: Checking. [tool calls: f(not json)]'],
    ],
    [
      'assistant blank text with a call',
      { id: 'c', type: 'assistant', text: '  ', toolCalls: [{ id: '1', name: 'f', arguments: '{}' }] },
      ['Assistant [tool calls: f({})]'],
    ],
    [
      'tool',
      {
        id: 't',
        type: 'tool',
        responses: [
          { toolCallId: '1', name: 'f', data: '{"ok":true}' },
          { toolCallId: '2', name: 'g', data: 'done' },
        ],
      },
      ['Tool [responses: f -> {"ok":true}, g -> done]'],
    ],
    ['summary', { id: 'm', type: 'summary', shadowPrompt: 'Summarize.', text: 'We did X.' }, ['User: Summarize.', 'Assistant: We did X.']],
    ['missing user text', { id: 'u', type: 'user', text: null }, ['User: [no text content]']],
    ['empty system text', { id: 's', type: 'system', text: '' }, ['System: [no text content]']],
    ['missing assistant text, no calls', { id: 'a', type: 'assistant', text: null }, ['Assistant: [no text content]']],
  ];
  it.each(cases)('%s', (_name, event, lines) => {
    expect(formatEventLines(event)).toEqual(lines);
    expect(formatEvent(event)).toBe(lines.join('\n'));
  });

  it('keeps multi-line text as one formatted line', () => {
    expect(formatEventLines({ id: 'u', type: 'user', text: 'a\nb' })).toEqual(['User: a\nb']);
  });
});

describe('estimators (DESIGN §3.1)', () => {
  it('lists the three built-in names and recognizes them', () => {
    expect([...ESTIMATOR_NAMES].sort()).toEqual(['chars', 'cl100k_base', 'o200k_base']);
    expect(ESTIMATOR_NAMES[0]).toBe('cl100k_base');
    expect(isEstimatorName('chars')).toBe(true);
    expect(isEstimatorName('gpt2')).toBe(false);
    expect(isEstimatorName(undefined)).toBe(false);
  });

  it('caches instances', () => {
    for (const name of ESTIMATOR_NAMES) {
      expect(getEstimator(name)).toBe(getEstimator(name));
      expect(getEstimator(name).name).toBe(name);
    }
  });

  it('chars counts UTF-16 code units', () => {
    const chars = getEstimator('chars');
    expect(chars.count('')).toBe(0);
    expect(chars.count('héllo')).toBe(5);
    expect(chars.count('👍')).toBe(2); // one astral code point = a surrogate pair
    expect(chars.count('改签')).toBe(2);
  });

  it('eventCost sums the lines: a summary costs both, without the joining newline', () => {
    const chars = getEstimator('chars');
    // "User: Summarize." = 16, "Assistant: We did X." = 20
    expect(eventCost({ id: 'm', type: 'summary', shadowPrompt: 'Summarize.', text: 'We did X.' }, chars)).toBe(36);
    // "User: hi" = 8
    expect(eventCost({ id: 'u', type: 'user', text: 'hi' }, chars)).toBe(8);
    // 'Tool [responses: get_weather -> {"temp":"22C"}]' = 17 + 15 + 14 + 1
    expect(eventCost({ id: 't', type: 'tool', responses: [{ toolCallId: 'c', name: 'get_weather', data: '{"temp":"22C"}' }] }, chars)).toBe(47);
  });

  it('accepts a caller-supplied estimator', () => {
    const words: TokenEstimator = { name: 'words', count: (t) => t.split(/\s+/).filter(Boolean).length };
    // "User: Summarize." = 2 words, "Assistant: We did X." = 4 words
    expect(eventCost({ id: 'm', type: 'summary', shadowPrompt: 'Summarize.', text: 'We did X.' }, words)).toBe(6);
  });

  describe.each(['cl100k_base', 'o200k_base'] as const)('%s agrees with the WASM tiktoken', (name) => {
    let reference: WasmTiktoken;
    beforeAll(() => {
      reference = get_encoding(name);
    });
    afterAll(() => reference.free());
    const ref = (text: string) => reference.encode(text, [], []).length;

    it('costs a whitespace-only text as written, not as a missing text (a run of spaces costs what it costs a model)', () => {
      for (const text of [' '.repeat(10_000), '\n'.repeat(5_000), '\t \n'.repeat(3_000)]) {
        for (const event of [
          { id: 'u', type: 'user', text },
          { id: 't', type: 'tool', responses: [{ toolCallId: 'k', name: 'f', data: text }] },
        ] as SessionEvent[]) {
          const [line] = formatEventLines(event);
          expect(line).toContain(text);
          expect(eventCost(event, getEstimator(name))).toBe(ref(line));
        }
      }
      expect(eventCost({ id: 'u', type: 'user', text: ' '.repeat(100_000) }, getEstimator(name))).toBeGreaterThan(500);
    });

    it('on fixed samples', () => {
      const estimator = getEstimator(name);
      expect(estimator.count('hello world')).toBe(2);
      for (const s of [
        '',
        'User: hello',
        '请帮我把周五从上海飞往东京的航班改签到周六 ✈️ 🙏',
        'Tool [responses: f -> {"a":[1,2,3]}]',
        '<|endoftext|> is plain text here',
        '  \n\t ',
      ]) {
        expect(estimator.count(s)).toBe(ref(s));
      }
    });

    it('on random strings', () => {
      const estimator = getEstimator(name);
      fc.assert(
        fc.property(fc.string({ unit: 'grapheme', maxLength: 60 }), (s) => {
          expect(estimator.count(s)).toBe(ref(s));
        }),
        { numRuns: 200 },
      );
    });

    it("splits on exactly Unicode's White_Space where the encoding says \\s", () => {
      const whiteSpace = new RegExp(withUnicodeWhiteSpace('^\\s$'), 'u');
      const notWhiteSpace = new RegExp(withUnicodeWhiteSpace('^\\S$'), 'u');
      const inClass = new RegExp(withUnicodeWhiteSpace('^[^\\s\\p{L}]$'), 'u');
      for (let code = 0; code <= 0x10ffff; code++) {
        if (code >= 0xd800 && code <= 0xdfff) continue;
        const c = String.fromCodePoint(code);
        const expected = /\p{White_Space}/u.test(c);
        if (whiteSpace.test(c) !== expected || notWhiteSpace.test(c) === expected) throw new Error(`U+${code.toString(16)}`);
        if (inClass.test(c) !== (!expected && !/\p{L}/u.test(c))) throw new Error(`class, U+${code.toString(16)}`);
      }
      expect(withUnicodeWhiteSpace('a\\\\s')).toBe('a\\\\s');
    });

    // tiktoken's `\s` is Unicode's White_Space (Rust regex): it holds U+0085 and not U+FEFF, unlike
    // JavaScript's; and gpt-tokenizer misses the tokens starting with U+FEFF's bytes. Texts made of every
    // white-space and format character next to letters, digits, marks and punctuation (a newcomer found
    // `"word\uFEFF"` × 100 counted 302 for 202, `"x \u0085y"` × 50 counted 153 for 203).
    it('on texts of white space, format characters and byte order marks', () => {
      const estimator = getEstimator(name);
      const whiteSpace = [...'\t\n\v\f\r \u0085\u00a0\u1680\u2000\u2005\u200a\u2028\u2029\u202f\u205f\u3000'];
      const format = [...'\ufeff\u180e\u200b\u200c\u200d\u2060\u00ad'];
      const others = ['a', 'B', 's', "'", '1', '42', '.', '/', '#', 'using', '中', '\u0301', '😀', 'ß'];
      const unit = fc.constantFrom(...whiteSpace, ...format, ...others);
      fc.assert(
        fc.property(fc.array(unit, { maxLength: 24 }), (units) => {
          const text = units.join('');
          expect(estimator.count(text)).toBe(ref(text));
        }),
        { numRuns: 2000 },
      );
      for (const text of ['word\ufeff'.repeat(100), 'x \u0085y'.repeat(50), '\ufeff'.repeat(70), '\ufeffusing System;\n', '\u0085'.repeat(200) + 'x']) {
        expect(estimator.count(text)).toBe(ref(text));
      }
    });

    // Long pre-tokens go through the heap merge (issue 17): the counts must still be the reference's.
    it('on long runs without a split point (adversarial pre-tokens)', () => {
      const estimator = getEstimator(name);
      const runs = [
        'a'.repeat(3000),
        '😀'.repeat(1500),
        ' '.repeat(2999) + 'x',
        '\n \n'.repeat(1000),
        '!'.repeat(3000),
        '7'.repeat(3000),
        '日本語のテキスト'.repeat(375),
        'ab'.repeat(1500),
        'é'.repeat(3000),
        'QmFzZTY0IGJsb2IgZm9yIHRoZSB0b2tlbml6ZXI'.repeat(80),
      ];
      for (const run of runs) expect(estimator.count(run)).toBe(ref(run));
    });

    it('on random long pre-tokens', () => {
      const estimator = getEstimator(name);
      const letters = fc.constantFrom('a', 'b', 'e', 'z', 'Q', 'ß', 'é', '日', '語', 'ข', '😀', '\u0301');
      fc.assert(
        fc.property(
          fc.array(letters, { minLength: 65, maxLength: 600 }).map((a) => a.join('')),
          (s) => {
            expect(estimator.count(s)).toBe(ref(s));
          },
        ),
        { numRuns: 60 },
      );
    });

    // Short pre-tokens' counts are remembered in a table that is cleared when full: a count must not depend on what was counted before.
    it('on texts counted again, after their pieces were remembered and after the table was cleared', () => {
      const estimator = getEstimator(name);
      const word = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 14 });
      const texts = fc.sample(
        fc.array(word, { minLength: 1, maxLength: 40 }).map((w) => w.join(' ')),
        { numRuns: 600, seed: 14 },
      );
      const first = texts.map((t) => estimator.count(t));
      const again = texts.map((t) => estimator.count(t));
      expect(again).toEqual(first);
      expect(first).toEqual(texts.map(ref));
    });

    it('counts in steps to the same number', () => {
      const estimator = getEstimator(name);
      const text = 'word '.repeat(3000) + 'x'.repeat(5000);
      const steps = estimator.countInSteps(text);
      let yields = 0;
      let next = steps.next();
      while (!next.done) {
        yields++;
        next = steps.next();
      }
      expect(yields).toBeGreaterThan(1);
      expect(next.value).toBe(ref(text));
    });

    // `count` splits with one expression object it reuses: a count made while a count in steps is
    // suspended half-way, or one that starts where another ended, must not start mid-text.
    it('counts while a count in steps is suspended, and counts the same text twice in a row, to the reference', () => {
      const estimator = getEstimator(name);
      const long = 'Some words, then 12345 and more. '.repeat(200);
      const steps = estimator.countInSteps(long);
      expect(steps.next().done).toBe(false);
      for (const s of ['hello world', 'User: ok', long.slice(0, 500)]) {
        expect(estimator.count(s)).toBe(ref(s));
        expect(estimator.count(s)).toBe(ref(s));
      }
      let next = steps.next();
      while (!next.done) {
        expect(estimator.count('a b c')).toBe(ref('a b c'));
        next = steps.next();
      }
      expect(next.value).toBe(ref(long));
    });
  });

  // Both encodings remember short pre-tokens' counts in one table, one slot each: a count must
  // never be the other encoding's, whichever counted a pre-token first, also after the table was cleared.
  it('cl100k_base and o200k_base counted in turn on the same texts each agree with their reference', () => {
    const references = { cl100k_base: get_encoding('cl100k_base'), o200k_base: get_encoding('o200k_base') };
    try {
      const word = fc.string({ unit: 'grapheme', minLength: 1, maxLength: 14 });
      const texts = fc.sample(
        fc.array(word, { minLength: 1, maxLength: 40 }).map((w) => w.join(' ')),
        { numRuns: 500, seed: 7 },
      );
      // Texts whose counts differ between the encodings, so a count read from the other slot shows.
      const fixed = ['请帮我把周五的航班改签到周六', 'ॐ नमः शिवाय and ünïcödé', "it's they're we've 12345", 'Tool [responses: f -> {"a":[1,2,3]}]'];
      for (const order of [
        ['o200k_base', 'cl100k_base'],
        ['cl100k_base', 'o200k_base'],
      ] as const) {
        for (const text of [...fixed, ...texts]) {
          for (const name of order) expect([name, text, getEstimator(name).count(text)]).toEqual([name, text, references[name].encode(text, [], []).length]);
        }
      }
    } finally {
      references.cl100k_base.free();
      references.o200k_base.free();
    }
  });
});
