import { sendRaw } from '../../../../test/support/raw-http';
import type { AddressInfo } from 'node:net';
import Fastify from 'fastify';
import { Logger } from '@nestjs/common';
import { answerClientErrors } from './framework-answers';
import { LINES_PER_WINDOW } from '../observability/rate-limited-lines';

describe('lines of requests Node could not parse', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('are capped at 10 warn lines per 60 s, the rest told in one line with their count (anyone can send them, without a key)', async () => {
    // Only the clock and timers are faked (the sockets run as usual): the window's end is reached by advancing the clock.
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const warned: string[] = [];
    jest.spyOn(Logger.prototype, 'warn').mockImplementation((message: unknown) => void warned.push(String(message)));
    const app = Fastify({ clientErrorHandler: answerClientErrors(() => undefined) });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    try {
      for (let i = 0; i < 200; i++) expect(await sendRaw(port, 'FOO / HTTP/1.1\r\nHost: x\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 /);
      expect(warned).toHaveLength(LINES_PER_WINDOW);
      expect(
        warned.every((line) =>
          /^refused a request Node could not parse \(HPE_INVALID_METHOD\): 400 malformed_request \(request id [0-9a-f-]{36}\)$/.test(line),
        ),
      ).toBe(true);
      jest.advanceTimersByTime(60_000);
      expect(warned).toHaveLength(LINES_PER_WINDOW + 1);
      expect(warned[LINES_PER_WINDOW]).toBe(
        `${200 - LINES_PER_WINDOW} more requests refused as Node could not parse them (or timed out) in the last 60 s, not logged one by one: ${200 - LINES_PER_WINDOW} × HPE_INVALID_METHOD: 400 malformed_request`,
      );
    } finally {
      jest.useRealTimers();
      await app.close();
    }
  });
});
