import { readsTransferEncoding, unsupportedTransferCodingAnswer } from './transfer-codings';

describe('readsTransferEncoding: only a lone chunked is read', () => {
  it.each([undefined, 'chunked', 'Chunked', ' CHUNKED ', 'chunked,', ', chunked'])('reads %p', (value) => {
    expect(readsTransferEncoding(value)).toBe(true);
  });

  // Node undoes the chunking and leaves any other coding: such a body would be read still encoded.
  it.each(['gzip, chunked', 'identity, chunked', 'deflate,chunked', 'chunked, chunked', 'x-gzip, chunked', '', 'chunked;ext=1'])('refuses %p', (value) => {
    expect(readsTransferEncoding(value)).toBe(false);
  });

  it('names the value sent, the coding read and Content-Encoding', () => {
    expect(unsupportedTransferCodingAnswer('gzip, chunked')).toEqual({
      code: 'unsupported_transfer_coding',
      message: expect.stringMatching(/^Transfer-Encoding: "gzip, chunked" is not supported: .*Transfer-Encoding: chunked.*Content-Encoding: gzip/),
    });
  });
});
