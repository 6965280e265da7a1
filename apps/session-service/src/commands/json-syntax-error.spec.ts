import { jsonSyntaxError, malformedJsonMessage } from './json-syntax-error';

/** What `JSON.parse(text)` throws. */
function parseError(text: string): unknown {
  try {
    JSON.parse(text);
  } catch (err) {
    return err;
  }
  throw new Error(`${text} parsed`);
}

const where = (text: string) => jsonSyntaxError(parseError(text), text);

describe('jsonSyntaxError: where a body that is not JSON breaks', () => {
  it('takes the position V8 names, with its line and column (1-based) and its reason', () => {
    // The comma is missing at the start of line 3: position 12, line 3, column 3.
    expect(where('{"a":\n  1\n  "b":2}')).toEqual({ reason: "expected ',' or '}' after property value", position: 12, line: 3, column: 3 });
    expect(where('{"a":1,}')).toEqual({ reason: 'expected double-quoted property name', position: 7, line: 1, column: 8 });
  });

  it('finds the unexpected token V8 names no position for (its message quotes the text instead)', () => {
    // The value x is at offset 14 (the key "x" at offset 2 is fine): a search for the token would find the wrong one.
    expect(where('{"x": 1, "y": x}')).toEqual({ reason: 'unexpected character "x"', position: 14, line: 1, column: 15 });
    expect(where('{\n  // a comment\n}')).toMatchObject({ position: 4, line: 2, column: 3 });
  });

  it('a body that ends too soon breaks at its end', () => {
    expect(where('{"events": [')).toEqual({ reason: 'the body ends before its JSON value is complete', position: 12, line: 1, column: 13 });
  });

  it('counts a column in characters: a character outside the BMP (two UTF-16 units) is one', () => {
    // Position 8 (UTF-16) is the "x" after 😀 (two units): column 8.
    expect(where('{"😀":1 x}')).toMatchObject({ position: 8, line: 1, column: 8 });
  });

  it('the answer says it, without repeating the text around it', () => {
    const text = '{"secret-text": nope}';
    const message = malformedJsonMessage('request body', parseError(text), text);
    expect(message).toBe('request body is not valid JSON: unexpected character "n" at line 1, column 17 (position 16)');
    expect(malformedJsonMessage('request body', new Error('other'), text)).toBe('request body is not valid JSON');
    expect(malformedJsonMessage('request body', parseError(text), undefined)).toBe('request body is not valid JSON');
  });
});
