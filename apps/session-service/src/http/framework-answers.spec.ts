import {
  clientErrorAnswer,
  clientErrorLogLine,
  headLinesEndInBareLf,
  requestLineTooLong,
  RouteMethods,
  trailingSlashAnswer,
  type ClientError,
} from './framework-answers';

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
    // pipelined behind another request (its body with no line end of its own), on its line or alone
    const ahead = 'POST /v1/sessions/s/events HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}';
    expect(requestLineTooLong(Buffer.from(`${ahead}GET /${'a'.repeat(100)} HTTP/1.1\r\n${headers}`), 50)).toBe(true);
    expect(requestLineTooLong(Buffer.from(`${ahead}\r\nGET /${'a'.repeat(100)}`), 50)).toBe(true);
    expect(requestLineTooLong(Buffer.from(`${ahead}GET / HTTP/1.1\r\nX-Big: ${'a'.repeat(100)}\r\n`), 50)).toBe(false);
  });
});

describe('clientErrorAnswer: bytes after a request that closes its connection', () => {
  it('says a body needs Content-Length, not llhttp\'s "Data after Connection: close" (newcomer ncapi71 F7)', () => {
    const err: ClientError = Object.assign(new Error('Parse Error'), { code: 'HPE_CLOSED_CONNECTION', reason: 'Data after `Connection: close`' });
    expect(clientErrorAnswer(err)).toEqual({
      status: 400,
      body: { code: 'malformed_request', message: expect.stringContaining('give a body its length in Content-Length') },
    });
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

describe('clientErrorAnswer: what Node could not parse', () => {
  const parseError = (code: string, reason: string, raw: string): ClientError =>
    Object.assign(new Error(`Parse Error: ${reason}`), { code, reason, rawPacket: Buffer.from(raw, 'latin1') });

  it('tells a head whose lines end in a bare LF to end them with CRLF, also for HTTP/1.0 (it said "not valid HTTP/1.1")', () => {
    for (const raw of ['GET /health HTTP/1.0\n\n', 'GET /health HTTP/1.1\nHost: x\n\n', 'GET /health HTTP/1.1\r\nHost: x\n\r\n']) {
      const { status, body } = clientErrorAnswer(parseError('HPE_INVALID_VERSION', 'Expected CRLF after version', raw));
      expect([raw, status, body.code]).toEqual([raw, 400, 'malformed_request']);
      expect(body.message).toMatch(/bare LF.*CRLF/);
    }
  });

  it('finds a bare LF only in the head', () => {
    expect(headLinesEndInBareLf(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n{"a":\n1}'))).toBe(false);
    expect(headLinesEndInBareLf(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n'))).toBe(false);
    expect(headLinesEndInBareLf(Buffer.from('GET / HTTP/1.1\r\nHost: x\n'))).toBe(true);
    expect(headLinesEndInBareLf(undefined)).toBe(false);
  });

  it('tells a Transfer-Encoding Node refuses to send chunked alone and compress with Content-Encoding', () => {
    for (const err of [
      parseError('HPE_INVALID_TRANSFER_ENCODING', 'Request has invalid `Transfer-Encoding`', 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n'),
      parseError('HPE_INVALID_CONTENT_LENGTH', "Content-Length can't be present with Transfer-Encoding", 'POST / HTTP/1.1\r\nHost: x\r\n'),
    ])
      expect(clientErrorAnswer(err).body.message).toMatch(/Transfer-Encoding: chunked.*Content-Encoding: gzip/);
  });

  it("names the parser's reason otherwise", () => {
    const answer = clientErrorAnswer(parseError('HPE_INVALID_METHOD', 'Invalid method encountered', 'FETCH / HTTP/1.1\r\n'));
    expect(answer).toEqual({
      status: 400,
      body: {
        code: 'malformed_request',
        message: 'the request is not valid HTTP/1.1 or HTTP/1.0 (Invalid method encountered): check its method, request line and headers; see /docs',
      },
    });
  });
});

describe('clientErrorLogLine', () => {
  // It said "refused a request Node could not parse (ERR_HTTP_REQUEST_TIMEOUT)".
  it('words a request timeout as a timeout, naming REQUEST_TIMEOUT_MS and its value', () => {
    const err: ClientError = Object.assign(new Error('timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    const line = clientErrorLogLine(err, 408, 'request_timeout', { requestTimeoutMs: 1500 });
    expect(line).toBe('timed out a request whose head or body did not arrive within 1500 ms (REQUEST_TIMEOUT_MS); closed its connection: 408 request_timeout');
    expect(clientErrorLogLine(err, 408, 'request_timeout', { requestTimeoutMs: 1500 }, 'r-1', 'tenantB')).toBe(
      'timed out a request of tenant "tenantB" whose head or body did not arrive within 1500 ms (REQUEST_TIMEOUT_MS); closed its connection: 408 request_timeout (request id r-1)',
    );
  });

  it('words anything else as a request Node could not parse', () => {
    const err: ClientError = Object.assign(new Error('bad'), { code: 'HPE_INVALID_METHOD' });
    expect(clientErrorLogLine(err, 400, 'malformed_request')).toBe('refused a request Node could not parse (HPE_INVALID_METHOD): 400 malformed_request');
  });
});

describe('RouteMethods and trailingSlashAnswer', () => {
  const table = new RouteMethods();
  table.add({ url: '/v1/sessions', method: 'GET' });
  table.add({ url: '/v1/sessions/:sessionId', method: ['GET', 'HEAD'] });
  table.add({ url: '/v1/sessions/:sessionId', method: 'DELETE' });
  table.add({ url: '/v1/sessions/stats', method: 'GET' });

  it('matches the most specific pattern and every method of the path', () => {
    expect(table.match('/v1/sessions/bad1')).toEqual({ pattern: '/v1/sessions/:sessionId', methods: ['DELETE', 'GET', 'HEAD'] });
    expect(table.match('/v1/sessions/stats')).toEqual({ pattern: '/v1/sessions/stats', methods: ['DELETE', 'GET', 'HEAD'] });
    expect(table.match('/v1/nothing')).toBeNull();
  });

  it('says to remove a trailing slash only when the path without it is a route', () => {
    expect(trailingSlashAnswer(table, '/v1/sessions/bad1/', '?x=1')?.message).toBe(
      'no such route: routes have no trailing slash; remove it ("/v1/sessions/bad1?x=1")',
    );
    expect(trailingSlashAnswer(table, '/v1/nothing/', '')).toBeNull();
    expect(trailingSlashAnswer(table, '/', '')).toBeNull();
    expect(trailingSlashAnswer(table, '/v1/sessions', '')).toBeNull();
  });
});

describe('clientErrorAnswer: a URL with raw non-ASCII text or spaces', () => {
  const invalid = (line: string): ClientError =>
    Object.assign(new Error('Parse Error'), { code: 'HPE_INVALID_CONSTANT', rawPacket: Buffer.from(`${line}\r\nhost: x\r\n\r\n`) });
  it('says to percent-encode raw UTF-8 text or spaces in the URL', () => {
    for (const line of ['GET /v1/recall?q=東京 HTTP/1.1', 'GET /v1/recall?q=two words HTTP/1.1']) {
      const answer = clientErrorAnswer(invalid(line));
      expect(answer.status).toBe(400);
      expect(answer.body.code).toBe('malformed_request');
      expect(answer.body.message).toMatch(/must be percent-encoded/);
    }
  });
  it('keeps the general message for a request line that is otherwise broken', () => {
    expect(clientErrorAnswer(invalid('GET /v1/recall?q=tokyo HTTP/9')).body.message).toMatch(/not valid HTTP\/1\.1/);
  });
});
