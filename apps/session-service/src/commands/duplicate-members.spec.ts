import fc from 'fast-check';
import { visit } from 'jsonc-parser';
import { countKeys, countMembers, DuplicateMemberError, findDuplicateMember, rejectDuplicateMembers } from './duplicate-members';

/** `rejectDuplicateMembers` of a text as the body parsers call it: after JSON.parse accepted it. */
const reject = (text: string) => rejectDuplicateMembers(text, JSON.parse(text), 'request body');

/** The first repeated member name (offset of its quote) by another parser: jsonc-parser's visitor, which unescapes names. */
function referenceDuplicate(text: string): { name: string; position: number } | undefined {
  const names: Array<Set<string>> = [];
  let found: { name: string; position: number } | undefined;
  visit(text, {
    onObjectBegin: () => void names.push(new Set()),
    onObjectEnd: () => void names.pop(),
    onObjectProperty: (name, offset) => {
      const own = names[names.length - 1];
      if (own.has(name)) found ??= { name, position: offset };
      own.add(name);
    },
  });
  return found;
}

describe('a body whose object gives a member name twice (newcomer ncverify50 F1)', () => {
  it('is refused naming the name, its path and where both are (line, column; position as JSON.parse counts)', () => {
    const text = '{"events":[{"id":"e1","type":"user","text":"A",\n "text":"B"}]}';
    expect(() => reject(text)).toThrow(
      new DuplicateMemberError('request body', {
        name: 'text',
        path: 'events[0].text',
        position: 49,
        line: 2,
        column: 2,
        first: { line: 1, column: 37 },
      }),
    );
    expect(() => reject(text)).toThrow(
      'request body gives the member "text" twice in one object, at events[0].text: first at line 1, column 37, again at line 2, column 2 (position 49); send each member once (JSON parsers differ on which one they keep)',
    );
  });

  it('at the top level, inside arrays at any index, and deep', () => {
    expect(findDuplicateMember('{"events":[1],"userId":"u","events":[2]}')).toMatchObject({ name: 'events', path: 'events', position: 27 });
    expect(findDuplicateMember('[{"a":1},[0,{"b":{"x":[1,2],"c":1,"c":2}}]]')).toMatchObject({ path: '[1][1].b.c' });
    expect(findDuplicateMember('{"events":[{"id":"1"},{"id":"2","metadata":{"k":{"k":1}},"metadata":{}}]}')).toMatchObject({ path: 'events[1].metadata' });
  });

  it('compares names after unescaping: "\\u0061" is "a"; escaped quotes and backslashes are skipped as string contents', () => {
    expect(findDuplicateMember('{"a":1,"\\u0061":2}')).toMatchObject({ name: 'a', path: 'a', position: 7 });
    expect(findDuplicateMember('{"\\"":1,"\\u0022":2}')).toMatchObject({ name: '"', path: '"' });
    // a value holding `","a":` and escaped backslashes before the closing quote is no member
    expect(findDuplicateMember('{"a":"\\",\\"a\\":\\\\","b":"\\\\\\\\"}')).toBeUndefined();
    expect(() => reject('{"x":"\\\\","a\\\\":1,"a\\\\":2}')).toThrow(/member "a\\\\" twice in one object, at a\\: /);
  });

  it('the same name in two objects, or as a value, is no duplicate; nor is "a" beside "A" or "a "', () => {
    for (const text of ['{"a":{"a":1},"b":{"a":2}}', '[{"a":1},{"a":2}]', '{"a":"a","b":["a","a"]}', '{"a":1,"A":2,"a ":3}', '{ "a" : { "b" : 1 } , "b" : 2 }'])
      expect(() => reject(text)).not.toThrow();
  });

  it('finds the member across whitespace between the name and its colon', () => {
    expect(findDuplicateMember('{\r\n\t"a" \n: 1,\n  "a"\t:2}')).toMatchObject({ path: 'a', line: 4, column: 3 });
  });

  it('counts `__proto__` as any name (JSON.parse makes it an own member)', () => {
    expect(() => reject('{"__proto__":{"a":1},"b":2}')).not.toThrow();
    expect(() => reject('{"__proto__":1,"__proto__":2}')).toThrow(/"__proto__" twice/);
  });

  it('a top-level value that is no object, and an empty object, pass', () => {
    for (const text of ['1', '"a"', 'null', '[]', '{}', '[[],{}]']) expect(() => reject(text)).not.toThrow();
  });

  it('cuts a long name in the message as other answers quote client values', () => {
    const name = 'n'.repeat(500);
    expect(() => reject(JSON.stringify({ m: {} }).replace('{}', `{"${name}":1,"${name}":2}`))).toThrow(
      /member "n{64}…" \(500 characters\) twice in one object, at m\.n{64}… \(500 characters\): /,
    );
  });

  it('counts members in the text and keys in the value alike, and finds the duplicate another parser finds (random bodies)', () => {
    const name = fc.oneof(
      fc.constantFrom('a', 'b', '\\u0061', '\\"', '\\\\', 'é', 'e\\u0301', 'id'),
      fc.string({ maxLength: 3 }).map((s) => JSON.stringify(s).slice(1, -1)),
    );
    const value: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.string({ maxLength: 4 }).map((s) => JSON.stringify(s)),
        fc.integer().map(String),
        fc.array(tie('value'), { maxLength: 3 }).map((xs) => `[${xs.join(',')}]`),
        fc
          .array(fc.tuple(name, fc.constantFrom('', ' ', '\n'), tie('value')), { maxLength: 4 })
          .map((ms) => `{${ms.map(([n, sp, v]) => `"${n}"${sp}:${sp}${v}`).join(',')}}`),
      ),
    })).value;
    fc.assert(
      fc.property(value, (text) => {
        const expected = referenceDuplicate(text);
        expect(findDuplicateMember(text)).toEqual(expected === undefined ? undefined : expect.objectContaining(expected));
        expect(countMembers(text) === countKeys(JSON.parse(text))).toBe(expected === undefined);
        if (expected === undefined) expect(() => reject(text)).not.toThrow();
        else expect(() => reject(text)).toThrow(DuplicateMemberError);
      }),
      { numRuns: 2000 },
    );
  });

  it('counts keys of a value 10,000 levels deep without overflowing the stack', () => {
    const text = '{"a":'.repeat(10_000) + '1' + '}'.repeat(10_000);
    expect(countKeys(JSON.parse(text))).toBe(10_000);
    expect(countMembers(text)).toBe(10_000);
  });
});
