/**
 * The log line of re-created NATS streams and consumer says what each meant (newcomer ncnats66 F3: it said commands were
 * refused to their publishers when only the consumer had been missing and nothing was refused).
 */
import { natsNames } from './nats-names';
import { recreatedConsequences } from './nats-transport';

const names = natsNames('compaction');

describe('what re-creating NATS streams and the consumer meant', () => {
  it.each([
    [[names.commandConsumer], 'commands waiting in the command stream are delivered to the new consumer'],
    [[names.commandStream, names.commandConsumer], 'commands published while the command stream was missing were refused to their publishers and not stored'],
    [[names.decisionStream], 'decisions wait in the feed'],
    [[names.commandConsumer, names.resultStream], 'commands waiting in the command stream are delivered to the new consumer, decisions wait in the feed'],
  ])('given %j re-created, then the line says: %s', (created, said) => {
    expect(recreatedConsequences(created, names)).toBe(said);
  });
});
