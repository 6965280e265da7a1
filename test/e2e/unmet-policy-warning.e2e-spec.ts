/**
 * A policy that cannot be met (DESIGN §3.5: an automatic pass archives nothing while its trigger
 * still fires) is named in one warn line per recorded noop, saying why and what to change, for
 * every reason (newcomer ncclient60 F3: only `open-tool-call` wrote one, so a rolling summary whose
 * kept turns outgrew its trigger stayed silent while its window grew from 4,012 to 10,025 tokens).
 * The open-tool-call line: `pinned-session-warning.e2e-spec.ts`.
 */
import { AutoCompactionScheduler } from '@lib/session';
import { captureLogLines } from '../support/captured-log-lines';
import { useService } from '../support/service-harness';

describe('a policy that cannot be met is named in a warn line', () => {
  const service = useService();
  afterEach(() => jest.restoreAllMocks());

  /** Sets `policy` on `sessionId`, appends `events`, waits for the automatic pass, and answers the session's recorded noops and the warn lines written. */
  let captured: string[] = [];
  async function unmet(sessionId: string, policy: object, events: object[]): Promise<{ noops: Array<Record<string, unknown>>; lines: string[] }> {
    const lines = captureLogLines(['warn']);
    captured = lines;
    await service.http().put(`/v1/sessions/${sessionId}/policy`).send(policy).expect(200);
    await service.http().post(`/v1/sessions/${sessionId}/events`).send({ events }).expect(201);
    await service.service.app.get(AutoCompactionScheduler).whenIdle();
    const history = await service.http().get(`/v1/sessions/${sessionId}/compactions`).expect(200);
    return { noops: history.body.compactions, lines: lines.filter((l) => l.includes('is over its trigger and its automatic pass archived nothing')) };
  }

  it('within-limit: the strategy keeps more than the trigger allows; the line says to keep less or raise the trigger', async () => {
    const { noops, lines } = await unmet(
      'unmet-within',
      { strategy: { type: 'token-count', maxTokens: 1000 }, trigger: { type: 'token-count', threshold: 50 }, estimator: 'chars' },
      [{ id: 's1', type: 'system', text: 'x'.repeat(100) }],
    );
    expect(noops).toEqual([expect.objectContaining({ outcome: 'noop', reason: 'within-limit', triggerStillFires: true })]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('session "unmet-within"');
    expect(lines[0]).toContain('(within-limit; 108 UTF-16 code units in the window)');
    expect(lines[0]).toContain('keep less');
    expect(lines[0]).toContain('or raise the trigger');
  });

  it('newest-turn-only: the newest turn alone is over the trigger; the line says it is never archived', async () => {
    const { noops, lines } = await unmet(
      'unmet-newest',
      { strategy: { type: 'token-count', maxTokens: 50 }, trigger: { type: 'token-count', threshold: 50 }, estimator: 'chars' },
      [
        { id: 'u1', type: 'user', text: 'y'.repeat(100) },
        { id: 'a1', type: 'assistant', text: 'z'.repeat(100) },
      ],
    );
    expect(noops).toEqual([expect.objectContaining({ outcome: 'noop', reason: 'newest-turn-only', triggerStillFires: true })]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('session "unmet-newest"');
    expect(lines[0]).toContain('(newest-turn-only; ');
    expect(lines[0]).toContain('the newest turn is never archived');
  });

  it('a compacted pass that leaves the trigger firing: one line saying what it keeps is over the trigger (ncpg67 F1)', async () => {
    const lines = captureLogLines(['warn']);
    const sessionId = 'unmet-recursive';
    const policy = {
      strategy: { type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 },
      trigger: { type: 'token-count', threshold: 50 },
      estimator: 'chars',
    };
    await service.http().put(`/v1/sessions/${sessionId}/policy`).send(policy).expect(200);
    const events = ['u1', 'u2', 'u3', 'u4'].map((id) => ({ id, type: 'user', text: `question ${id} ${'w'.repeat(80)}` }));
    await service.http().post(`/v1/sessions/${sessionId}/events`).send({ events }).expect(201);
    await service.service.app.get(AutoCompactionScheduler).whenIdle();
    const history = await service.http().get(`/v1/sessions/${sessionId}/compactions`).expect(200);
    expect(history.body.compactions).toEqual([expect.objectContaining({ outcome: 'compacted', triggerStillFires: true })]);
    const still = lines.filter((l) => l.includes('is still over its trigger after its automatic pass'));
    expect(still).toHaveLength(1);
    expect(still[0]).toContain(`session "${sessionId}"`);
    expect(still[0]).toMatch(/\(\d+ UTF-16 code units in the window after it\)/);
    expect(still[0]).toContain('keep less');
  });

  it('a session whose every automatic pass leaves the trigger firing gets one line a minute, not one per pass (newcomer ncrace74: 482 lines per session in 45 s)', async () => {
    const lines = captureLogLines(['warn']);
    const sessionId = 'unmet-busy';
    await service
      .http()
      .put(`/v1/sessions/${sessionId}/policy`)
      .send({ strategy: { type: 'sliding-window', maxEvents: 4 }, trigger: { type: 'token-count', threshold: 10 }, estimator: 'chars' })
      .expect(200);
    const scheduler = service.service.app.get(AutoCompactionScheduler);
    for (let i = 0; i < 6; i++) {
      const events = [0, 1].map((j) => ({ id: `u${i}-${j}`, type: 'user', text: `question ${i} ${j} ${'w'.repeat(40)}` }));
      await service.http().post(`/v1/sessions/${sessionId}/events`).send({ events }).expect(201);
      await scheduler.whenIdle();
    }
    const history = await service.http().get(`/v1/sessions/${sessionId}/compactions`).expect(200);
    const firing = (history.body.compactions as Array<{ triggerStillFires?: boolean }>).filter((c) => c.triggerStillFires === true);
    expect(firing.length).toBeGreaterThan(1);
    expect(lines.filter((l) => l.includes(`session "${sessionId}"`) && l.includes('over its trigger'))).toHaveLength(1);
  });

  it('a pass that brings the window under its trigger writes no line', async () => {
    const { noops, lines } = await unmet(
      'met',
      { strategy: { type: 'turn-window', maxTurns: 1 }, trigger: { type: 'turn-count', maxTurns: 2 } },
      ['u1', 'u2', 'u3'].map((id) => ({ id, type: 'user', text: `question ${id}` })),
    );
    expect(noops).toEqual([expect.objectContaining({ outcome: 'compacted', triggerStillFires: false })]);
    expect(lines).toEqual([]);
    expect(captured.filter((l) => l.includes('is still over its trigger'))).toEqual([]);
  });
});
