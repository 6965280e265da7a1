import { rejectionLogLine } from './nats-rejection-log';

describe('rejectionLogLine', () => {
  it('says the code, status, subject and message id, and that a subject naming no session without Reply-To is answered nowhere (the README example)', () => {
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
});
