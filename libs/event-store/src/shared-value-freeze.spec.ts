import { freezeShared, sharedValuesFrozen, withoutSharedValueFreeze } from './shared-value-freeze';
import { jsonText, knownJsonText, rememberJsonText } from './known-json';

describe('values shared along the append path are frozen in test runs', () => {
  it('the test run set it (test/support/freeze-shared-values.js): otherwise no change to a shared value would fail', () => {
    expect(sharedValuesFrozen()).toBe(true);
  });

  it('freezeShared freezes every object and array at any depth, and gives the value itself', () => {
    const value = { a: [1, { b: { c: 'x' } }], d: null, e: 'y' };
    expect(freezeShared(value)).toBe(value);
    expect(Object.isFrozen(value)).toBe(true);
    expect(Object.isFrozen(value.a)).toBe(true);
    expect(Object.isFrozen(value.a[1])).toBe(true);
    expect(Object.isFrozen((value.a[1] as { b: object }).b)).toBe(true);
    expect(freezeShared('text')).toBe('text');
    expect(freezeShared(null)).toBeNull();
  });

  it('freezes a value nested deeper than the call stack would allow a recursive walk', () => {
    let deep: Record<string, unknown> = {};
    const root = deep;
    for (let i = 0; i < 200_000; i++) deep = deep.next = {};
    freezeShared(root);
    expect(Object.isFrozen(deep)).toBe(true);
  });

  it('remembered metadata cannot be changed under its remembered JSON text', () => {
    const metadata = { trace: { id: 't1' }, tags: ['a'] };
    rememberJsonText(metadata, JSON.stringify(metadata));
    expect(() => (metadata.trace.id = 't2')).toThrow(TypeError);
    expect(() => metadata.tags.push('b')).toThrow(TypeError);
    expect(knownJsonText(metadata)).toBe(JSON.stringify({ trace: { id: 't1' }, tags: ['a'] }));
    expect(jsonText({ metadata })).toBe(JSON.stringify({ metadata: { trace: { id: 't1' }, tags: ['a'] } }));
  });

  it('withoutSharedValueFreeze leaves values as they are while it runs, and freezes again after, also when its body throws', async () => {
    const during = { a: { b: 1 } };
    await withoutSharedValueFreeze(async () => {
      freezeShared(during);
      await Promise.resolve();
      expect(sharedValuesFrozen()).toBe(false);
    });
    expect(Object.isFrozen(during)).toBe(false);
    await expect(withoutSharedValueFreeze(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(sharedValuesFrozen()).toBe(true);
    expect(Object.isFrozen(freezeShared({ c: 1 }))).toBe(true);
  });
});
