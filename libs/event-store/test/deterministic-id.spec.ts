/**
 * deterministicEventId is RFC 4122 UUID version 5: the expected values below were computed with
 * Python's `uuid.uuid5` (an independent implementation), not with this code.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { deterministicEventId, deterministicEventIdForms, EVENT_ID_NAMESPACE } from '../src';

describe('deterministicEventId', () => {
  it('is the UUID v5 of the name in a UUID namespace (Python: uuid5(NAMESPACE_DNS, "python.org"))', () => {
    expect(deterministicEventId('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'python.org')).toBe('886313e1-3b8a-5372-9b90-0c9aee199e5d');
  });

  it('maps a namespace that is not a UUID to its UUID v5 in EVENT_ID_NAMESPACE first, the same on every call', () => {
    expect(EVENT_ID_NAMESPACE).toBe('6f1c2b9e-4d7a-4e0b-9a35-3c8e5f2d71a4');
    for (let i = 0; i < 3; i++) {
      expect(deterministicEventId('session-memory-compaction/event', 'demo\u0000u1')).toBe('e1a0034f-2a16-5462-a339-b25adaec0ec6');
      expect(deterministicEventId('other', 'x')).toBe('b709a093-d979-50b2-a236-6bb4b41ad80f');
    }
  });

  it('stays correct past the number of namespaces it remembers', () => {
    const first = deterministicEventId('other', 'x');
    for (let i = 0; i < 1500; i++) deterministicEventId(`ns-${i}`, 'x');
    expect(deterministicEventId('other', 'x')).toBe(first);
    expect(first).toBe('b709a093-d979-50b2-a236-6bb4b41ad80f');
  });

  describe('with the incarnation of the stream (EventStore.streamIncarnation)', () => {
    const namespace = 'session-memory-compaction/event';

    it('gives the ids of the earlier formula for incarnation 0n, the default: streams never erased keep their ids', () => {
      expect(deterministicEventId(namespace, 'demo\u0000u1', 0n)).toBe('e1a0034f-2a16-5462-a339-b25adaec0ec6');
      expect(deterministicEventId(namespace, 'demo\u0000u1', 0n)).toBe(deterministicEventId(namespace, 'demo\u0000u1'));
    });

    it('gives other ids for the same name after an erasure (incarnation n > 0: the UUID v5 of the name in uuid5(namespace, "incarnation\\0<n>"), per Python)', () => {
      expect(deterministicEventId(namespace, 'demo\u0000u1', 3n)).toBe('009542bc-d72d-580a-82e6-48b00941b351');
      expect(deterministicEventId(namespace, 'demo\u0000u1', 4n)).toBe('999e07f7-f353-5c25-9534-c0124a6b5d4f');
      const lives = [0n, 1n, 3n, 4n].map((incarnation) => deterministicEventId(namespace, 'demo\u0000u1', incarnation));
      expect(new Set(lives).size).toBe(4);
    });

    it('gives the same id to every retry within one incarnation', () => {
      for (let i = 0; i < 3; i++) expect(deterministicEventId(namespace, 'demo\u0000u1', 1n)).toBe('1ee0cb70-54b6-56ed-9953-c8603796f09c');
    });

    it('refuses a negative incarnation', () => {
      expect(() => deterministicEventId(namespace, 'x', -1n)).toThrow(RangeError);
    });

    it('lists every form the project wrote for a name in a life: the current first, then the form without the incarnation (builds up to 3771ca3)', () => {
      expect(deterministicEventIdForms(namespace, 'demo\u0000u1', 3n)).toEqual([
        '009542bc-d72d-580a-82e6-48b00941b351',
        deterministicEventId(namespace, 'demo\u0000u1'),
      ]);
      // A life that starts at 0n has one form: both formulas agree there.
      expect(deterministicEventIdForms(namespace, 'demo\u0000u1', 0n)).toEqual([deterministicEventId(namespace, 'demo\u0000u1')]);
      expect(() => deterministicEventIdForms(namespace, 'x', -1n)).toThrow(RangeError);
    });
  });
});

describe('deterministicEventId against a reference UUID v5 (createHash, as before the one-shot hash)', () => {
  const reference = (namespace: Buffer, name: string): string => {
    const b = createHash('sha1').update(namespace).update(name, 'utf8').digest().subarray(0, 16);
    b[6] = (b[6] & 0x0f) | 0x50;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = b.toString('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  };
  const bytes = (uuid: string) => Buffer.from(uuid.replace(/-/g, ''), 'hex');

  it('gives the same id for any name (any Unicode, lone surrogates included) and namespace', () => {
    fc.assert(
      fc.property(fc.uuid(), fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.constantFrom('', '\ud800x', 'é\u0000🙂')), (namespace, name) => {
        expect(deterministicEventId(namespace, name)).toBe(reference(bytes(namespace), name));
      }),
      { numRuns: 2000 },
    );
  });
});
