import { interruptedExitCode, RunInterrupted, signalName, untilStopped } from './stop-on-signals';

describe('stop on signals', () => {
  it('exits as a shell reports a process ended by the signal', () => {
    expect(interruptedExitCode('SIGINT')).toBe(130);
    expect(interruptedExitCode('SIGTERM')).toBe(143);
  });

  it('stops waiting for work once the signal aborts, with the interruption naming the signal', async () => {
    const controller = new AbortController();
    const never = new Promise<never>(() => undefined);
    const waiting = untilStopped(never, controller.signal, () => new RunInterrupted(signalName(controller.signal), 'after 2 of 9 vectors'));
    controller.abort('SIGTERM');
    await expect(waiting).rejects.toThrow('interrupted by SIGTERM after 2 of 9 vectors');
  });

  it('gives the work its result when no signal came, and refuses to start once one did', async () => {
    const controller = new AbortController();
    await expect(untilStopped(Promise.resolve(7), controller.signal, () => new Error('stopped'))).resolves.toBe(7);
    controller.abort('SIGINT');
    await expect(untilStopped(Promise.resolve(7), controller.signal, () => new Error('stopped'))).rejects.toThrow('stopped');
  });
});
