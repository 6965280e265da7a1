/**
 * deterministicEventId is RFC 4122 UUID version 5: the expected values below were computed with
 * Python's `uuid.uuid5` (an independent implementation), not with this code.
 */
import { deterministicEventId, EVENT_ID_NAMESPACE } from '../src';

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
});
