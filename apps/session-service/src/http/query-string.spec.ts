import { badQueryEncodingOf, parseQueryString } from './query-string';

describe('parseQueryString', () => {
  it('parses as the router did: repeats become arrays, + is a space, a name alone has the empty value', () => {
    expect({ ...parseQueryString('a=1&b=&c&a=2&q=caf%C3%A9+au+lait&&') }).toEqual({ a: ['1', '2'], b: '', c: '', q: 'café au lait' });
    expect({ ...parseQueryString('') }).toEqual({});
    expect(badQueryEncodingOf(parseQueryString('q=%25FF&x=%F0%9F%98%80'))).toBeNull();
    expect(Object.getPrototypeOf(parseQueryString('__proto__=1'))).toBeNull();
  });

  it.each([
    ['q=zeta%FF', 'q'],
    ['q=%ED%A0%80zeta', 'q'],
    ['limit=5&userId=alice%FF', 'userId'],
    ['q=50%', 'q'],
    ['q=%zz', 'q'],
  ])('names the parameter whose value is not valid percent-encoded UTF-8: %s', (text, parameter) => {
    const answer = badQueryEncodingOf(parseQueryString(text));
    expect(answer).toEqual({
      code: 'invalid_query_encoding',
      parameter,
      message: expect.stringMatching(new RegExp(`^${parameter}: its value is not valid percent-encoded UTF-8: percent-encode the UTF-8 bytes`)),
    });
  });

  it('names a parameter whose name is not valid percent-encoded UTF-8 as sent', () => {
    expect(badQueryEncodingOf(parseQueryString('q=x&%FF=1'))).toMatchObject({
      parameter: '%FF',
      message: expect.stringMatching(/^%FF: this query parameter name is not valid/),
    });
  });

  it('answers nothing for a value that did not come from the parser', () => {
    expect(badQueryEncodingOf({ q: 'zeta%FF' })).toBeNull();
    expect(badQueryEncodingOf(undefined)).toBeNull();
  });
});
