import { replyRefusal } from './reply-refusal';

describe('replyRefusal (DESIGN §3.7: an unusable reply is a failure)', () => {
  it('refuses a reply holding a lone surrogate, naming where and never quoting the text', () => {
    expect(replyRefusal('Summary \ud800 end', 1000)).toBe('reply is not valid Unicode: a lone UTF-16 surrogate at code unit 8');
    expect(replyRefusal('cut in an emoji \ud83d', undefined)).toBe('reply is not valid Unicode: a lone UTF-16 surrogate at code unit 16');
    expect(replyRefusal('\udc00 low first', 1000)).toBe('reply is not valid Unicode: a lone UTF-16 surrogate at code unit 0');
  });

  it('takes well-formed text with emoji, flags and supplementary ideographs, and still bounds the length', () => {
    expect(replyRefusal('Summary 😀🇯🇵👩‍👩‍👧‍👦𠮷', 1000)).toBeUndefined();
    expect(replyRefusal('😀'.repeat(10), 10)).toBeUndefined();
    expect(replyRefusal('😀'.repeat(11), 10)).toMatch(/^reply longer than the longest text an event may hold \(11 characters, MAX_TEXT_LENGTH 10\)$/);
  });
});
