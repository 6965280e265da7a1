import { rejectionLogLine } from './nats-rejection-log';

describe('rejectionLogLine', () => {
  it('says the code, status, subject and message id, and that a subject naming no session without Reply-To is answered nowhere (the docs/nats.md example)', () => {
    expect(
      rejectionLogLine({
        code: 'invalid_subject',
        status: 400,
        subject: 'compaction.commands.default',
        msgId: 'c-17',
        deliveryCount: 1,
        published: { results: false, replyTo: false },
      }),
    ).toBe(
      'command rejected: invalid_subject (400), subject "compaction.commands.default", Nats-Msg-Id "c-17"; no answer published (no session in the subject, no Reply-To): this line is its only record',
    );
  });

  it('names where the answer went, the delivery after the first, and a missing message id', () => {
    expect(
      rejectionLogLine({
        code: 'store_unavailable',
        status: 503,
        subject: 'compaction.commands.default.demo.append',
        msgId: null,
        deliveryCount: 5,
        published: { results: true, replyTo: true },
      }),
    ).toBe(
      'command rejected: store_unavailable (503), subject "compaction.commands.default.demo.append", no Nats-Msg-Id, delivery 5; answer published on the results subject and Reply-To',
    );
  });

  it('stays short whatever the client sent: subject and id are cut, control characters escaped', () => {
    const line = rejectionLogLine({
      code: 'invalid_session_id',
      status: 400,
      subject: `compaction.commands.default.${'s'.repeat(5000)}.append`,
      msgId: `id\n${'x'.repeat(5000)}`,
      deliveryCount: 1,
      published: { results: true, replyTo: false },
    });
    expect(line.length).toBeLessThan(400);
    expect(line).not.toContain('\n');
    expect(line).toContain('(5035 characters)');
    expect(line).toContain('"id\\nxxx');
  });

  it('names a refused Reply-To (quoted and cut), also when the answer went nowhere', () => {
    expect(
      rejectionLogLine({
        code: 'invalid_reply_to',
        status: 400,
        subject: 'compaction.commands.tenant-a.demo.policy',
        msgId: 'tenant-a:c-1',
        deliveryCount: 1,
        published: { results: true, replyTo: false, refusedReplyTo: 'compaction.commands.tenant-b.demo.policy' },
      }),
    ).toBe(
      'command rejected: invalid_reply_to (400), subject "compaction.commands.tenant-a.demo.policy", Nats-Msg-Id "tenant-a:c-1"; answer published on the results subject; nothing published on Reply-To "compaction.commands.tenant-b.demo.policy" (not a reply subject)',
    );
    const nowhere = rejectionLogLine({
      code: 'invalid_subject',
      status: 400,
      subject: 'compaction.commands.tenant-a',
      msgId: null,
      deliveryCount: 1,
      published: { results: false, replyTo: false, refusedReplyTo: `$JS.API.STREAM.PURGE.X\n${'x'.repeat(5000)}` },
    });
    expect(nowhere).toContain('no answer published (no session in the subject, Reply-To refused): this line is its only record');
    expect(nowhere).toContain('nothing published on Reply-To "$JS.API.STREAM.PURGE.X\\nxxx');
    expect(nowhere.length).toBeLessThan(500);
  });
});
