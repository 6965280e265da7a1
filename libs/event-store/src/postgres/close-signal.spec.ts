import { CloseSignal } from './close-signal';

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('CloseSignal', () => {
  it('passes outcomes through while open and keeps nothing of them', async () => {
    const signal = new CloseSignal();
    await expect(signal.race(Promise.resolve(1))).resolves.toBe(1);
    await expect(signal.race(Promise.reject(new Error('no')))).rejects.toThrow('no');
    expect((signal as unknown as { waits: Set<unknown> }).waits.size).toBe(0);
  });

  it('rejects the races in progress and later ones with the first close error; late values go to `late`', async () => {
    const signal = new CloseSignal();
    let answer!: (v: string) => void;
    const late: string[] = [];
    const racing = signal.race(new Promise<string>((resolve) => (answer = resolve)), (v) => late.push(v));
    const first = new Error('closed');
    signal.close(first);
    signal.close(new Error('again'));
    await expect(racing).rejects.toBe(first);
    answer('conn');
    await settle();
    expect(late).toEqual(['conn']);
    await expect(signal.race(Promise.resolve('after'), (v) => late.push(v))).rejects.toBe(first);
    await settle();
    expect(late).toEqual(['conn', 'after']);
  });
});
