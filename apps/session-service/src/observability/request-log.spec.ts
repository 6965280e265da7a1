import { MAX_LOGGED_VALUE_LENGTH, requestLogSerializers } from './request-log';

describe('request log serializers', () => {
  it('logs the method and the path, without the query string', () => {
    expect(requestLogSerializers.req({ method: 'GET', url: '/v1/recall?q=secret' })).toEqual({ method: 'GET', url: '/v1/recall' });
    expect(requestLogSerializers.res({ statusCode: 404 })).toEqual({ statusCode: 404 });
  });

  it('cuts a very long path (a 5,000-character session id) to a bounded length, saying how much was cut', () => {
    const url = `/v1/sessions/${'x'.repeat(5000)}/window`;
    const logged = requestLogSerializers.req({ method: 'GET', url: `${url}?format=openai` }).url;
    expect(logged.startsWith(`/v1/sessions/${'x'.repeat(200)}`)).toBe(true);
    expect(logged.length).toBeLessThanOrEqual(MAX_LOGGED_VALUE_LENGTH + 40);
    expect(logged).toContain(`${url.length - MAX_LOGGED_VALUE_LENGTH} more characters`);
    expect(JSON.stringify(requestLogSerializers.req({ method: 'POST', url })).length).toBeLessThan(400);
  });

  it('never cuts through a surrogate pair, and leaves paths up to the limit as they are', () => {
    const url = `/${'a'.repeat(MAX_LOGGED_VALUE_LENGTH - 2)}😀😀`;
    const logged = requestLogSerializers.req({ method: 'GET', url }).url;
    expect(logged.startsWith(`/${'a'.repeat(MAX_LOGGED_VALUE_LENGTH - 2)}…`)).toBe(true);
    const exact = `/${'b'.repeat(MAX_LOGGED_VALUE_LENGTH - 1)}`;
    expect(requestLogSerializers.req({ method: 'GET', url: exact }).url).toBe(exact);
  });
});
