import { clientErrorAnswer, requestLineTooLong, type ClientError } from './framework-answers';

const overflow = (raw: string): ClientError =>
  Object.assign(new Error('Header overflow'), { code: 'HPE_HEADER_OVERFLOW', rawPacket: Buffer.from(raw, 'latin1') });

describe('clientErrorAnswer: header overflow', () => {
  const headers = 'Host: x\r\nAccept: */*\r\n';

  it('answers 414 uri_too_long when the request line alone is over the limit, whether or not its line end arrived', () => {
    expect(clientErrorAnswer(overflow(`GET /${'a'.repeat(20_000)}`)).body.code).toBe('uri_too_long');
    expect(clientErrorAnswer(overflow(`GET /${'a'.repeat(20_000)} HTTP/1.1\r\n${headers}`)).body.code).toBe('uri_too_long');
    expect(clientErrorAnswer(overflow(`GET /x?q=${'a'.repeat(60_000)} HTTP/1.1\r\n${headers}\r\n`)).status).toBe(414);
  });

  it('answers 431 headers_too_large when the request line is short and the headers are large', () => {
    const answer = clientErrorAnswer(overflow(`GET /health HTTP/1.1\r\n${headers}X-Big: ${'a'.repeat(20_000)}\r\n`));
    expect(answer).toEqual({ status: 431, body: { code: 'headers_too_large', message: expect.stringMatching(/headers are larger than 16 KiB/) } });
  });

  it('takes the limit as given', () => {
    expect(requestLineTooLong(Buffer.from(`GET /${'a'.repeat(100)} HTTP/1.1\r\n`), 50)).toBe(true);
    expect(requestLineTooLong(Buffer.from(`GET /${'a'.repeat(100)} HTTP/1.1\r\n`), 500)).toBe(false);
    // a chunk whose first line is a header (the request line came earlier) is the headers' fault
    expect(requestLineTooLong(Buffer.from(`X-Big: ${'a'.repeat(100)}\r\n`), 50)).toBe(false);
  });
});

describe('clientErrorAnswer: request timeout', () => {
  it('answers 408 request_timeout naming REQUEST_TIMEOUT_MS and its value', () => {
    const err: ClientError = Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    expect(clientErrorAnswer(err, { requestTimeoutMs: 1500 })).toEqual({
      status: 408,
      body: { code: 'request_timeout', message: expect.stringMatching(/within 1500 ms \(REQUEST_TIMEOUT_MS\)/) },
    });
  });
});
