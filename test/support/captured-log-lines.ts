/**
 * The service's log lines in an in-process test: what a spec reads to check a line was (or was not) written.
 */
import { Logger } from '@nestjs/common';

/**
 * From now until `jest.restoreAllMocks()`, captures the message (first argument) of every Nest
 * `Logger` line at `levels` into the returned array, printing none of them.
 */
export function captureLogLines(levels: ReadonlyArray<'log' | 'warn' | 'error'> = ['log', 'warn', 'error']): string[] {
  const lines: string[] = [];
  for (const level of levels) {
    jest.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => {
      lines.push(String(args[0]));
    });
  }
  return lines;
}
