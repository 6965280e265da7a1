import { ENVIRONMENT_VARIABLES, parseCommandLine, usage } from './command-line';
import { NUMBER_VARIABLES } from './number-variables';
import { documentationFile } from '../../../../test/support/documentation';

describe('the command line', () => {
  it('given --help or -h, when parsed, then help is asked for; given nothing, it is not', () => {
    expect([parseCommandLine(['--help']), parseCommandLine(['-h']), parseCommandLine([])]).toEqual([{ help: true }, { help: true }, { help: false }]);
  });

  it.each([['--port=3000'], ['start'], ['--help=yes'], ['-x']])('given %s, when parsed, then it is refused in one line naming the argument', (arg) => {
    expect(() => parseCommandLine([arg])).toThrow(new RegExp(`'${arg.split('=')[0].replace(/^--help$/, '-h, --help')}'.*see --help\\)$`));
    try {
      parseCommandLine([arg]);
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('given the usage, then every number variable shows its default and range from the one table', () => {
    const text = usage();
    for (const [name, { min, fallback }] of Object.entries(NUMBER_VARIABLES)) {
      expect(text).toMatch(new RegExp(`^  ${name} +.*, ${min} (to \\d+|or more) \\(default: ${fallback}\\)$`, 'm'));
    }
  });

  it('given the Configuration table (docs/configuration.md), then it names exactly the variables the usage lists', () => {
    const configuration = documentationFile('docs/configuration.md');
    // the table right under the title and the line back to README
    const table = configuration.split('# Configuration\n\nBack to [README.md](../README.md).\n\n')[1].split('\n\n')[0];
    const documented = table
      .split('\n')
      .filter((line) => line.startsWith('| `'))
      .flatMap((line) => [...line.split(' | ')[0].matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]));
    expect(new Set(documented)).toEqual(new Set(ENVIRONMENT_VARIABLES.map((v) => v.name)));
    expect(documented).toHaveLength(ENVIRONMENT_VARIABLES.length);
  });
});
