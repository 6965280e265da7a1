import { loadRebuildSettings } from './rebuild-settings';

describe("rebuild-read-models' own settings, checked like the service's numbers", () => {
  it('reads the log 1000 events at a time and prints progress at most every 2 s by default', () => {
    expect(loadRebuildSettings({})).toEqual({ pageSize: 1000, progressMs: 2000 });
    expect(loadRebuildSettings({ REBUILD_PAGE_SIZE: ' 1 ', REBUILD_PROGRESS_MS: '0' })).toEqual({ pageSize: 1, progressMs: 0 });
  });

  it.each([
    ['REBUILD_PAGE_SIZE', '0', /^REBUILD_PAGE_SIZE=0: out of range: use a number of events per read of the log, an integer from 1 to 100000$/],
    ['REBUILD_PAGE_SIZE', '-1', /^REBUILD_PAGE_SIZE=-1: not an integer in plain decimal digits: /],
    ['REBUILD_PAGE_SIZE', 'abc', /^REBUILD_PAGE_SIZE=abc: not an integer in plain decimal digits: /],
    ['REBUILD_PROGRESS_MS', '1e3', /^REBUILD_PROGRESS_MS=1e3: not an integer in plain decimal digits: use a time in milliseconds/],
    ['REBUILD_PROGRESS_MS', ' ', /^REBUILD_PROGRESS_MS=" ": set but blank: unset it for the default \(2000\)/],
  ])('refuses %s=%j (an empty rebuild "up to position 0" or "datatype mismatch" before), naming it', (name, value, message) => {
    expect(() => loadRebuildSettings({ [name]: value })).toThrow(message);
  });
});
