import { configurationRefusalMessage, MAX_SHOWN_VALUE_LENGTH } from './configuration-refusal';

const refusal = (value: string | number, mask?: 'url' | 'url-list' | 'secret') =>
  configurationRefusalMessage({ variable: 'NAME', value, problem: 'what is wrong', fix: 'what to do', mask });

describe('configurationRefusalMessage: NAME=<value>: <what is wrong>: <what to fix>', () => {
  it('shows the value as given, bare when that is unambiguous', () => {
    expect(refusal('notaurl')).toBe('NAME=notaurl: what is wrong: what to do');
    expect(refusal(8080)).toBe('NAME=8080: what is wrong: what to do');
    expect(refusal('/srv/data')).toBe('NAME=/srv/data: what is wrong: what to do');
  });

  it('quotes a value that is empty, holds white space or an invisible character, or starts with a quote', () => {
    expect(refusal('')).toBe('NAME="": what is wrong: what to do');
    expect(refusal(' 80')).toBe('NAME=" 80": what is wrong: what to do');
    expect(refusal('/srv/my data')).toBe('NAME="/srv/my data": what is wrong: what to do');
    expect(refusal('a\u200bb')).toBe('NAME="a\\u200bb": what is wrong: what to do');
    expect(refusal('"80"')).toBe('NAME="\\"80\\"": what is wrong: what to do');
  });

  it('masks credentials: of a URL, of each URL of a list, or the whole value', () => {
    expect(refusal('postgres://admin:hunter2@db/events?password=x', 'url')).toBe('NAME=postgres://admin:***@db/events?password=***: what is wrong: what to do');
    expect(refusal('nats://a:pw@n1:4222,tok@n2:4222', 'url-list')).toBe('NAME=nats://a:***@n1:4222,***@n2:4222: what is wrong: what to do');
    expect(refusal('https://h/v1?api_key=sk-123', 'url')).toBe('NAME=https://h/v1?api_key=***: what is wrong: what to do');
    expect(refusal('key-1234-secret:tenantA', 'secret')).toBe('NAME=***: what is wrong: what to do');
  });

  it(`cuts a value after ${MAX_SHOWN_VALUE_LENGTH} characters, saying how long it is`, () => {
    expect(refusal('😀'.repeat(MAX_SHOWN_VALUE_LENGTH + 1))).toBe(
      `NAME=${'😀'.repeat(MAX_SHOWN_VALUE_LENGTH)}… (${MAX_SHOWN_VALUE_LENGTH + 1} characters): what is wrong: what to do`,
    );
    expect(refusal('x'.repeat(MAX_SHOWN_VALUE_LENGTH))).toBe(`NAME=${'x'.repeat(MAX_SHOWN_VALUE_LENGTH)}: what is wrong: what to do`);
  });
});
