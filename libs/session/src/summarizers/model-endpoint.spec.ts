import fc from 'fast-check';
import { modelEndpointOf } from './model-endpoint';

describe('modelEndpointOf', () => {
  it('gives the text before the query as baseURL and the query, decoded, as defaultQuery, for any parameters', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('http://127.0.0.1:8080/v1', 'https://x.openai.azure.com/openai/v1', 'https://user:pw@host/deep/path/'),
        fc.dictionary(fc.string({ minLength: 1 }), fc.string(), { minKeys: 1, maxKeys: 4 }),
        (base, query) => {
          expect(modelEndpointOf(`${base}?${new URLSearchParams(query).toString()}`)).toEqual({ baseURL: base, defaultQuery: { ...query } });
        },
      ),
    );
  });

  it('leaves a URL without a query as it is', () => {
    expect(modelEndpointOf('http://127.0.0.1:8080/v1')).toEqual({ baseURL: 'http://127.0.0.1:8080/v1' });
    expect(modelEndpointOf('http://127.0.0.1:8080/v1?')).toEqual({ baseURL: 'http://127.0.0.1:8080/v1' });
  });

  it('refuses a fragment and a parameter given twice', () => {
    expect(() => modelEndpointOf('http://h/v1#x')).toThrow(/fragment/);
    expect(() => modelEndpointOf('http://h/v1?a=1#')).toThrow(/fragment/);
    expect(() => modelEndpointOf('http://h/v1?a=1&a=2')).toThrow(/"a" twice/);
  });
});
