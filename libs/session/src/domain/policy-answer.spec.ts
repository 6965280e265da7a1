import { policyAnswer } from './policy-answer';

describe('policyAnswer: the one shape of a session policy (GET and PUT …/policy, NATS)', () => {
  const strategy = { type: 'turn-window' as const, maxTurns: 3 };
  const trigger = { type: 'turn-count' as const, maxTurns: 5 };

  it('shows the policy in force with its event: setAt, revision and position as decimal strings', () => {
    const data = { strategy, trigger, estimator: 'chars' as const, setAt: '2026-01-01T00:00:00.000Z' };
    expect(policyAnswer('s', { data, revision: 12n, position: 9007199254740993n }, 40n)).toEqual({
      sessionId: 's',
      strategy,
      trigger,
      estimator: 'chars',
      setAt: '2026-01-01T00:00:00.000Z',
      revision: '12',
      position: '9007199254740993',
      requestedBy: null,
    });
  });

  it('shows a recorded clear with trigger and estimator null, whatever the event holds', () => {
    const data = { strategy: null, trigger, estimator: 'cl100k_base' as const, setAt: '2026-01-02T00:00:00.000Z' };
    expect(policyAnswer('s', { data, revision: 3n }, 8n)).toEqual({
      sessionId: 's',
      strategy: null,
      trigger: null,
      estimator: null,
      setAt: '2026-01-02T00:00:00.000Z',
      revision: '3',
      requestedBy: null,
    });
  });

  it('answers no policy ever set with the session revision, without setAt nor position', () => {
    expect(policyAnswer('s', null, 7n)).toEqual({ sessionId: 's', strategy: null, trigger: null, estimator: null, revision: '7', requestedBy: null });
  });

  it("names who wrote the event (its requestedBy's known fields), null for an event without one (newcomer ncui74 F1)", () => {
    const requestedBy = { keyLabel: 'API_KEYS#2', requestId: 'r-1', requestIdFrom: 'client' as const, via: 'http' as const };
    const set = { strategy, trigger, estimator: 'chars' as const, setAt: '2026-01-01T00:00:00.000Z', requestedBy: { ...requestedBy, apiKey: 'never' } };
    expect(policyAnswer('s', { data: set, revision: 1n }, 1n).requestedBy).toEqual(requestedBy);
    const clear = {
      strategy: null,
      trigger: null,
      estimator: null,
      setAt: '2026-01-02T00:00:00.000Z',
      requestedBy: { requestId: 'cmd-9', via: 'nats' as const },
    };
    expect(policyAnswer('s', { data: clear, revision: 2n }, 2n).requestedBy).toEqual({ requestId: 'cmd-9', via: 'nats' });
  });
});
