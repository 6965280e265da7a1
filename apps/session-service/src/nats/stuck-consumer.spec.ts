import type { ConsumerInfo } from '@nats-io/jetstream';
import { StuckConsumerDetector, StuckConsumerGuard, stuckCheckMs, type ConsumerSnapshot } from './stuck-consumer';

const BOUND = 60_000;

function snapshot(over: Partial<ConsumerSnapshot> = {}): ConsumerSnapshot {
  return { created: 'c1', pending: 869, ackPending: 132, maxAckPending: 1000, deliveredSeq: 9131, deliveredStreamSeq: 9131, ackFloorStreamSeq: 8000, ...over };
}

/** A consumer info as JetStream gives it, from the fields the detector reads. */
function info(s: ConsumerSnapshot): ConsumerInfo {
  return {
    created: s.created,
    num_pending: s.pending,
    num_ack_pending: s.ackPending,
    config: { max_ack_pending: s.maxAckPending, durable_name: 'svc' },
    delivered: { consumer_seq: s.deliveredSeq, stream_seq: s.deliveredStreamSeq },
    ack_floor: { consumer_seq: 0, stream_seq: s.ackFloorStreamSeq },
  } as unknown as ConsumerInfo;
}

describe('StuckConsumerDetector', () => {
  it('finds the consumer stuck once it has delivered nothing for the bound while commands are pending and this replica asked for them all along', () => {
    const d = new StuckConsumerDetector(BOUND);
    expect(d.observe(snapshot(), 0, 0)).toEqual({ pending: 869, idleMs: 0, stuck: false, delivering: false });
    expect(d.observe(snapshot(), 0, 59_999)).toMatchObject({ idleMs: 59_999, stuck: false });
    expect(d.observe(snapshot(), 0, 60_000)).toMatchObject({ idleMs: 60_000, stuck: true, delivering: false });
  });

  it('is not stuck while it delivers (a redelivery counts), nor with nothing pending', () => {
    const d = new StuckConsumerDetector(BOUND);
    d.observe(snapshot(), 0, 0);
    expect(d.observe(snapshot({ deliveredSeq: 9132 }), 0, 50_000)).toMatchObject({ idleMs: 0, stuck: false, delivering: true });
    expect(d.observe(snapshot({ deliveredSeq: 9132 }), 0, 100_000)).toMatchObject({ idleMs: 50_000, stuck: false });
    // Nothing pending for a while: the quiet time counts from when commands are pending again.
    expect(d.observe(snapshot({ deliveredSeq: 9132, pending: 0 }), 0, 200_000)).toEqual({ pending: 0, idleMs: 0, stuck: false, delivering: true });
    expect(d.observe(snapshot({ deliveredSeq: 9132 }), 0, 230_000)).toMatchObject({ idleMs: 30_000, stuck: false });
  });

  it('is not stuck while this replica asks for nothing (its slots full) or asked only lately', () => {
    const d = new StuckConsumerDetector(BOUND);
    d.observe(snapshot(), null, 0);
    expect(d.observe(snapshot(), null, 120_000)).toMatchObject({ idleMs: 120_000, stuck: false });
    expect(d.observe(snapshot(), 100_000, 120_000)).toMatchObject({ stuck: false });
    expect(d.observe(snapshot(), 100_000, 160_000)).toMatchObject({ stuck: true });
  });

  it('is not stuck while the consumer holds back by design (max_ack_pending reached)', () => {
    const d = new StuckConsumerDetector(BOUND);
    d.observe(snapshot({ ackPending: 1000 }), 0, 0);
    expect(d.observe(snapshot({ ackPending: 1000 }), 0, 120_000)).toMatchObject({ stuck: false, idleMs: 120_000 });
  });

  it('counts again from a consumer re-created elsewhere (another created) and after a reset (a failed check)', () => {
    const d = new StuckConsumerDetector(BOUND);
    d.observe(snapshot(), 0, 0);
    expect(d.observe(snapshot({ created: 'c2', deliveredSeq: 0 }), 0, 70_000)).toMatchObject({ idleMs: 0, stuck: false, delivering: false });
    expect(d.observe(snapshot({ created: 'c2', deliveredSeq: 0 }), 0, 130_000)).toMatchObject({ idleMs: 60_000, stuck: true });
    d.reset();
    expect(d.observe(snapshot({ created: 'c2', deliveredSeq: 0 }), 0, 190_000)).toMatchObject({ idleMs: 0, stuck: false });
  });
});

describe('stuckCheckMs', () => {
  it('is a fifth of the bound, between 1 s and 10 s', () => {
    expect([stuckCheckMs(5_000), stuckCheckMs(20_000), stuckCheckMs(60_000), stuckCheckMs(3_600_000)]).toEqual([1_000, 4_000, 10_000, 10_000]);
  });
});

describe('StuckConsumerGuard with a controllable consumer-info source', () => {
  function setUp(options: { recreate?: (seen: ConsumerInfo) => Promise<boolean> } = {}) {
    let now = 0;
    let current: ConsumerSnapshot | Error = snapshot();
    let askingSince: number | null = 0;
    const lines: Array<[string, string]> = [];
    const recreated: ConsumerInfo[] = [];
    const checked: ConsumerInfo[] = [];
    const guard = new StuckConsumerGuard({
      stream: 'T_COMMANDS',
      consumer: 't-service',
      stuckAfterMs: BOUND,
      readInfo: () => (current instanceof Error ? Promise.reject(current) : Promise.resolve(info(current))),
      askingSince: () => askingSince,
      recreate:
        options.recreate ??
        (async (seen) => {
          recreated.push(seen);
          return true;
        }),
      onChecked: async (i) => void checked.push(i),
      log: { error: (l) => void lines.push(['error', l]), warn: (l) => void lines.push(['warn', l]), log: (l) => void lines.push(['log', l]) },
      now: () => now,
    });
    return {
      guard,
      lines,
      recreated,
      checked,
      at: async (ms: number, s: ConsumerSnapshot | Error = current) => {
        now = ms;
        current = s;
        await guard.check();
      },
      asking: (since: number | null) => void (askingSince = since),
    };
  }

  it('shows pending commands and the quiet time, logs one error line, re-creates the consumer once per bound, and clears once it delivers', async () => {
    const t = setUp();
    expect(t.guard.state()).toEqual({ pending: null, idleSeconds: 0, stuck: null, recreated: 0, lastRecreatedAt: null });
    for (let ms = 0; ms < BOUND; ms += 10_000) await t.at(ms);
    expect(t.guard.state()).toMatchObject({ pending: 869, idleSeconds: 50, stuck: null });
    expect(t.lines).toEqual([]);
    expect(t.checked).toHaveLength(6);

    await t.at(BOUND);
    const state = t.guard.state();
    expect(state.stuck).toContain('NATS consumer t-service is stuck: it has delivered no command for 60 s while 869 command(s) wait in the command stream');
    expect(state.stuck).toContain('delivered up to stream sequence 9131, acknowledged up to 8000, 132 awaiting acknowledgement');
    expect(state).toMatchObject({ recreated: 1, lastRecreatedAt: new Date(BOUND).toISOString() });
    expect(t.recreated.map((i) => i.created)).toEqual(['c1']);
    expect(t.lines.map(([level]) => level)).toEqual(['error', 'warn']);
    expect(t.lines[0][1]).toBe(state.stuck);
    expect(t.lines[1][1]).toContain('NATS consumer t-service re-created');

    // The re-created consumer (another `created`) delivers nothing either: still shown stuck, re-created again a bound later, no second error line.
    const again = snapshot({ created: 'c2', deliveredSeq: 0, deliveredStreamSeq: 0, ackFloorStreamSeq: 0, ackPending: 0 });
    for (let ms = BOUND + 10_000; ms < 2 * BOUND + 10_000; ms += 10_000) await t.at(ms, again);
    expect(t.guard.state().stuck).not.toBeNull();
    expect(t.recreated).toHaveLength(1);
    await t.at(2 * BOUND + 10_000, again);
    expect(t.recreated.map((i) => i.created)).toEqual(['c1', 'c2']);
    expect(t.lines.map(([level]) => level)).toEqual(['error', 'warn', 'warn']);

    // It delivers: one line, /health clear.
    await t.at(2 * BOUND + 20_000, snapshot({ created: 'c3', deliveredSeq: 0 }));
    await t.at(2 * BOUND + 30_000, snapshot({ created: 'c3', deliveredSeq: 500, pending: 369 }));
    expect(t.guard.state()).toMatchObject({ stuck: null, pending: 369, idleSeconds: 0, recreated: 2 });
    expect(t.lines.at(-1)).toEqual(['log', 'NATS consumer t-service delivers again (369 command(s) pending): no longer stuck']);
  });

  it('a failed check (NATS lost) counts the quiet time again, so an outage is not taken for a stuck consumer', async () => {
    const t = setUp();
    await t.at(0);
    await t.at(30_000, new Error('TIMEOUT'));
    await t.at(70_000, snapshot());
    expect(t.guard.state()).toMatchObject({ idleSeconds: 0, stuck: null });
    await t.at(129_000);
    expect(t.guard.state().stuck).toBeNull();
    await t.at(130_000);
    expect(t.guard.state().stuck).not.toBeNull();
  });

  it('does nothing while this replica asks for no commands (all its slots busy)', async () => {
    const t = setUp();
    t.asking(null);
    for (let ms = 0; ms <= 3 * BOUND; ms += 10_000) await t.at(ms);
    expect(t.guard.state()).toMatchObject({ stuck: null, idleSeconds: 180, pending: 869 });
    expect(t.recreated).toEqual([]);
  });

  it('when the re-creation is not needed (another replica did it) counts nothing; when it fails, says so once and tries again a bound later', async () => {
    let answer: () => Promise<boolean> = async () => false;
    const t = setUp({ recreate: () => answer() });
    await t.at(0);
    await t.at(BOUND);
    expect(t.guard.state()).toMatchObject({ recreated: 0 });
    expect(t.lines.map(([level]) => level)).toEqual(['error']);
    answer = () => Promise.reject(new Error('permissions violation for publish to "$JS.API.CONSUMER.DELETE.T_COMMANDS.t-service"'));
    await t.at(BOUND + 10_000);
    await t.at(2 * BOUND + 10_000);
    expect(t.guard.state().stuck).toContain('re-creating it failed: permissions violation');
    expect(t.guard.state().stuck).toContain('nats consumer rm T_COMMANDS t-service');
    await t.at(3 * BOUND + 20_000);
    expect(t.lines.map(([level]) => level)).toEqual(['error', 'error']);
  });
});
