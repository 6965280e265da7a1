/**
 * A stand-in for `NatsCommandExecutor` in consumer tests: each run of a command answers 201
 * (`compact`, addressed to the session its subject names) with the number of runs so far in the
 * body (`{ run: n }`), so a second run answers differently; `runs` lists the command ids run.
 */
import type { CommandAnswer, CommandMessage } from '../../apps/session-service/src/nats/nats-command-executor';
import { parseCommandSubject } from '../../apps/session-service/src/nats/nats-names';

export class CountingExecutor {
  readonly runs: string[] = [];
  /** `prefix`: the `NATS_PREFIX` the command subjects are under. */
  constructor(private readonly prefix: string) {}

  async execute(message: CommandMessage): Promise<CommandAnswer> {
    this.runs.push(message.commandId);
    return { status: 201, body: { run: this.runs.length }, kind: 'compact', address: parseCommandSubject(this.prefix, message.subject) ?? undefined };
  }
}
