import { parseReplyPrefixes, replyToProblem } from './nats-reply-to';

describe('replyToProblem: where an answer may go', () => {
  const rule = { prefix: 'compaction', allowedPrefixes: ['_INBOX'] };

  it('allows an inbox, and a subject under a configured prefix', () => {
    expect(replyToProblem('_INBOX.Vx1b2c3d4e5f6g7h8.1', rule)).toBeNull();
    expect(replyToProblem('replies.tenant-a.x', { ...rule, allowedPrefixes: ['_INBOX', 'replies.tenant-a'] })).toBeNull();
  });

  it.each([
    ['compaction.commands.tenant-b.victim.policy', /under "compaction\."/],
    ['compaction.results.tenant-b.victim', /under "compaction\."/],
    ['compaction.decisions.tenant-b.victim', /under "compaction\."/],
    ['compaction', /under "compaction\."/],
    ['$JS.API.STREAM.PURGE.COMPACTION_COMMANDS', /\$ subject/],
    ['$SYS.REQ.SERVER.PING', /\$ subject/],
    ['deliver.tenant-a.audit', /not under "_INBOX\." \(NATS_REPLY_PREFIXES\)/],
    ['_INBOX', /not under "_INBOX\."/],
    ['_INBOXES.x', /not under "_INBOX\."/],
    ['_INBOX.*', /not a literal subject/],
    ['_INBOX.>', /not a literal subject/],
    ['_INBOX..x', /not a literal subject/],
    ['_INBOX.x.', /not a literal subject/],
    ['_INBOX.a b', /not a literal subject/],
    ['_INBOX.a\r\nPUB x 1', /not a literal subject/],
  ])('refuses %j', (subject, problem) => {
    expect(replyToProblem(subject, rule)).toMatch(problem);
  });

  it('refuses $ and own subjects even under a configured prefix', () => {
    expect(replyToProblem('$JS.API.INFO', { ...rule, allowedPrefixes: ['_INBOX', 'compaction'] })).toMatch(/\$ subject/);
    expect(replyToProblem('compaction.results.t.s', { ...rule, allowedPrefixes: ['compaction'] })).toMatch(/under "compaction\."/);
  });
});

describe('NATS_REPLY_PREFIXES', () => {
  it('defaults to _INBOX; takes comma-separated prefixes, a trailing dot dropped', () => {
    expect(parseReplyPrefixes(undefined, 'compaction')).toEqual(['_INBOX']);
    expect(parseReplyPrefixes('_INBOX., replies.tenant-a', 'compaction')).toEqual(['_INBOX', 'replies.tenant-a']);
  });

  it.each([
    ['', /empty entry/],
    ['_INBOX,,x', /empty entry/],
    ['$JS', /\$ subject/],
    ['compaction.results', /under NATS_PREFIX/],
    ['compaction', /under NATS_PREFIX/],
    ['_INBOX.*', /not a literal subject prefix/],
    ['a b', /not a literal subject prefix/],
  ])('refuses %j at start', (value, problem) => {
    expect(() => parseReplyPrefixes(value, 'compaction')).toThrow(problem);
    expect(() => parseReplyPrefixes(value, 'compaction')).toThrow(/^NATS_REPLY_PREFIXES=/);
  });
});
