'use strict';
/**
 * Jest setup file (jest.config.js `setupFilesAfterEnv`, run before every test file in its worker): a watchdog
 * thread that ends a jest worker whose event loop has been blocked for {@link BLOCKED_LIMIT_MS}
 * milliseconds, naming the test file it was running. Jest's test and hook timeouts are timers: a
 * file that spins synchronously (or in a chain of promises that never yields to the timers) is never
 * stopped by them, and the whole run waits until CI's own limit (2026-12-05: a time-travel read
 * walking down 2^62 revisions held a worker at 100% CPU for over an hour). Ended, the worker's file
 * fails ("A jest worker process … was terminated") and the run goes on with a new worker.
 *
 * One watchdog per worker process (the setup runs once per file; the first starts it, and it is kept
 * on the `worker_threads` module object: jest gives each file its own globals and `process`, but
 * Node's modules are shared). The main
 * thread writes its clock (milliseconds, `Date.now()`) into a shared array every second from a
 * timer of Node's own `timers` module (jest's fake timers do not replace it); the watchdog thread
 * reads it every second. Set JEST_BLOCKED_LIMIT_MS to change the limit (0: no watchdog).
 */
const workerThreads = require('node:worker_threads');
const timers = require('node:timers');

/** How long the event loop may go without a turn before the worker is ended, in milliseconds. */
const BLOCKED_LIMIT_MS = Number(process.env.JEST_BLOCKED_LIMIT_MS ?? 180_000);
const STARTED = Symbol.for('session-service.tests.event-loop-watchdog');

const testFile = expect.getState().testPath ?? '(unknown file)';
if (BLOCKED_LIMIT_MS > 0 && !workerThreads[STARTED]) {
  const heartbeat = new Float64Array(new SharedArrayBuffer(8));
  heartbeat[0] = Date.now();
  timers.setInterval(() => (heartbeat[0] = Date.now()), 1_000).unref();
  const watchdog = new workerThreads.Worker(
    `
    const { workerData, parentPort } = require('node:worker_threads');
    const fs = require('node:fs');
    let file = workerData.file;
    parentPort.on('message', (m) => (file = m));
    setInterval(() => {
      const blocked = Date.now() - workerData.heartbeat[0];
      if (blocked < workerData.limit) return;
      fs.writeSync(2, '\\nevent-loop watchdog: this jest worker (pid ' + process.pid + ') has had no event-loop turn for ' +
        Math.round(blocked / 1000) + ' s while running ' + file + ': ending it (a synchronous loop or a promise chain that never yields)\\n');
      process.kill(process.pid, 'SIGKILL');
    }, 1_000);
    `,
    { eval: true, workerData: { heartbeat, limit: BLOCKED_LIMIT_MS, file: testFile } },
  );
  watchdog.unref();
  workerThreads[STARTED] = watchdog;
} else if (workerThreads[STARTED]) {
  workerThreads[STARTED].postMessage(testFile);
}
