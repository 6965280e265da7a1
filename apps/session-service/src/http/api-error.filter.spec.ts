import { humanBytes, payloadTooLarge, toApiError } from './api-error.filter';

describe('413 payload_too_large', () => {
  it('gives sizes for people in binary units', () => {
    expect([512, 1024, 20_000, 5 * 1024 * 1024, 3 * 1024 ** 3].map(humanBytes)).toEqual(['512 bytes', '1 KiB', '19.5 KiB', '5 MiB', '3 GiB']);
  });

  it("names MAX_BODY_BYTES and its value: body-parser's error carries the limit", () => {
    const err = Object.assign(new Error('request entity too large'), { type: 'entity.too.large', limit: 5 * 1024 * 1024 });
    expect(toApiError(err)).toEqual({
      status: 413,
      body: { code: 'payload_too_large', message: 'request body is larger than MAX_BODY_BYTES (5242880 bytes, 5 MiB); split the events into several requests' },
    });
    expect(payloadTooLarge().message).toBe('request body is larger than the limit (MAX_BODY_BYTES); split the events into several requests');
  });
});
