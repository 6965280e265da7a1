import { requestLogLevel } from './request-log-level';

describe('requestLogLevel', () => {
  it.each([
    [200, false, 'debug'],
    [201, false, 'debug'],
    [400, false, 'debug'],
    [404, false, 'debug'],
    [422, false, 'debug'],
    [503, false, 'warn'],
    [503, true, 'warn'],
    [500, false, 'error'],
    [502, false, 'error'],
    [200, true, 'error'],
  ] as const)('status %i (failed: %s) → %s', (status, failed, level) => {
    expect(requestLogLevel(status, failed, 'debug')).toBe(level);
  });

  it('logs ordinary answers at the configured request level', () => {
    expect(requestLogLevel(201, false, 'info')).toBe('info');
  });
});

describe('requestLogLevel of an expected answer', () => {
  it('is info (503 shutting_down), unless the response failed', () => {
    expect(requestLogLevel(503, false, 'debug', 'info')).toBe('info');
    expect(requestLogLevel(503, true, 'debug', 'info')).toBe('warn');
  });

  it('is warn when marked so (503 projection_behind), unless the response failed', () => {
    expect(requestLogLevel(503, false, 'debug', 'warn')).toBe('warn');
    expect(requestLogLevel(200, true, 'debug', 'warn')).toBe('error');
  });
});
