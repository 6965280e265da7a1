import { Command, InvalidArgumentError } from 'commander';
import { parseScriptArguments, USAGE_EXIT_CODE } from './script-command-line';

/** A program with one option of each kind the scripts use: a flag, a value checked by a parser, and no arguments. */
function program(): Command {
  return new Command()
    .name('demo')
    .option('--quick', 'a flag')
    .option('--count <n>', 'a positive integer', (value: string) => {
      if (!/^[1-9]\d*$/.test(value)) throw new InvalidArgumentError(`Use a positive integer.`);
      return Number(value);
    })
    .allowExcessArguments(false);
}

describe('parseScriptArguments', () => {
  let stdout: jest.SpyInstance;
  let stderr: jest.SpyInstance;
  beforeEach(() => {
    stdout = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  });
  afterEach(() => jest.restoreAllMocks());

  const written = (spy: jest.SpyInstance) => spy.mock.calls.map(([text]) => String(text)).join('');

  it('given accepted arguments, returns undefined (run) with the options parsed and prints nothing', () => {
    const p = program();
    expect(parseScriptArguments(p, ['--quick', '--count', '3'])).toBeUndefined();
    expect(p.opts()).toEqual({ quick: true, count: 3 });
    expect(written(stdout) + written(stderr)).toBe('');
  });

  it.each([['--help'], ['-h']])('given %s, prints the usage on stdout and returns 0', (flag) => {
    expect(parseScriptArguments(program(), [flag])).toBe(0);
    expect(written(stdout)).toMatch(/^Usage: demo /);
    expect(written(stderr)).toBe('');
  });

  it.each([
    [['--bogus'], /^demo: unknown option '--bogus'/],
    [['--hepl'], /^demo: unknown option '--hepl' \(Did you mean --help\?\)/],
    [['--count', 'x'], /^demo: option '--count <n>' argument 'x' is invalid\. Use a positive integer/],
    [['extra'], /^demo: too many arguments/],
  ])('given %j, writes one line on stderr ending with (see --help) and returns the usage exit code 2', (args, line) => {
    expect(parseScriptArguments(program(), args)).toBe(USAGE_EXIT_CODE);
    expect(USAGE_EXIT_CODE).toBe(2);
    const text = written(stderr);
    expect(text).toMatch(line);
    expect(text).toMatch(/\(see --help\)\n$/);
    expect(text.split('\n')).toHaveLength(2);
    expect(written(stdout)).toBe('');
  });

  it('given a hint, puts it on the usage error line before (see --help)', () => {
    expect(parseScriptArguments(program(), ['--data-dir', 'x'], 'set DATA_DIR instead')).toBe(2);
    expect(written(stderr)).toMatch(/^demo: unknown option '--data-dir': set DATA_DIR instead \(see --help\)\n$/);
  });
});
