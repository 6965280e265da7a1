import { Writable } from 'node:stream';
import { createProgress } from './progress';

/** A stream collecting what is written; `tty` makes it look like a terminal to cli-progress. */
function sink(tty: boolean) {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString('utf8');
      callback();
    },
  }) as Writable & { isTTY?: boolean; columns?: number; cursorTo?: unknown; clearLine?: unknown; moveCursor?: unknown };
  if (tty) {
    stream.isTTY = true;
    stream.columns = 200;
    stream.cursorTo = (_x: number, _y?: number, cb?: () => void) => (cb?.(), true);
    stream.clearLine = (_dir: number, cb?: () => void) => (cb?.(), true);
    stream.moveCursor = (_dx: number, _dy: number, cb?: () => void) => (cb?.(), true);
  }
  return { stream, text: () => text };
}

describe('replay progress', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('off a terminal: a line at least every heartbeat while no turn is done, with the label of the work in between; none after stop', () => {
    const out = sink(false);
    const progress = createProgress(out.stream, true, 5000);
    progress.start(100, 'sliding-window');
    for (let i = 0; i < 20; i++) progress.tick('sliding-window');
    expect(out.text().trim().split('\n')).toEqual(['replay: 10/100 turns (10%) sliding-window 0 s', 'replay: 20/100 turns (20%) sliding-window 0 s']);
    progress.update('sliding-window: reading results, 3/150 sessions');
    jest.advanceTimersByTime(5000);
    progress.update('sliding-window: reading results, 90/150 sessions');
    jest.advanceTimersByTime(5000);
    const lines = out.text().trim().split('\n');
    expect(lines.slice(2)).toEqual([
      'replay: 20/100 turns (20%) sliding-window: reading results, 3/150 sessions 5 s',
      'replay: 20/100 turns (20%) sliding-window: reading results, 90/150 sessions 10 s',
    ]);
    progress.tick('turn-window');
    expect(out.text().trim().split('\n')).toHaveLength(4); // 21 %: no new decile, and the last line is fresh
    progress.stop();
    jest.advanceTimersByTime(60_000);
    expect(out.text().trim().split('\n')).toHaveLength(4);
  });

  it('off a terminal: a line after a heartbeat with no turn done (a slow session), at the default heartbeat of 5 s', () => {
    const out = sink(false);
    const progress = createProgress(out.stream);
    progress.start(1000, 'turn-window');
    progress.tick('turn-window');
    jest.advanceTimersByTime(4000);
    expect(out.text()).toBe('');
    jest.advanceTimersByTime(1000);
    expect(out.text()).toBe('replay: 1/1000 turns (0%) turn-window 5 s\n');
    progress.stop();
  });

  it('on a terminal: the bar shows the label of the work between turns', () => {
    const out = sink(true);
    const progress = createProgress(out.stream, true);
    progress.start(100, 'sliding-window');
    progress.tick('sliding-window');
    progress.update('sliding-window: reading results, 3/150 sessions');
    jest.advanceTimersByTime(1000);
    expect(out.text()).toContain('1/100 turns | sliding-window: reading results, 3/150 sessions |');
    progress.stop();
  });
});
