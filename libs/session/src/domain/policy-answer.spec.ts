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
    });
  });

  it('answers no policy ever set with the session revision, without setAt nor position', () => {
    expect(policyAnswer('s', null, 7n)).toEqual({ sessionId: 's', strategy: null, trigger: null, estimator: null, revision: '7' });
  });
});
