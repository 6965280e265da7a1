import fc from 'fast-check';
import type { JetStreamManager, StoredMsg } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { commandSubject } from './nats-names';
import {
  earlierCommandInStream,
  FinishedSequences,
  OrderWaits,
  sessionCommandFilter,
  STALLED_AFTER_ACK_WAITS,
  storedTimestampNanos,
} from './nats-session-order';

const sessionId = fc
  .string({ unit: fc.constantFrom(...'ab01_-.'.split('')), minLength: 1, maxLength: 12 })
  .filter((s) => !s.startsWith('.') && !s.endsWith('.') && !s.includes('..'));
const kind = fc.constantFrom('compact', 'append', 'messages', 'policy', 'explode');

/** NATS subject matching: `*` is exactly one token. */
function matches(filter: string, subject: string): boolean {
  const f = filter.split('.');
  const s = subject.split('.');
  return f.length === s.length && f.every((t, i) => t === '*' || t === s[i]);
}

describe('sessionCommandFilter', () => {
  it("matches the commands of the subject's session, whatever their kind, and no other session's (ids with dots included)", () => {
    fc.assert(
      fc.property(sessionId, sessionId, kind, kind, (a, b, k1, k2) => {
        const filter = sessionCommandFilter(commandSubject('p', 't', a, k1));
        expect(matches(filter, commandSubject('p', 't', a, k2))).toBe(true);
        expect(matches(filter, commandSubject('p', 't', b, k2))).toBe(a === b);
        expect(matches(filter, commandSubject('p', 'u', a, k2))).toBe(false);
      }),
    );
  });
});

describe('FinishedSequences', () => {
  it('remembers the last `capacity` sequences recorded, forgetting the oldest first', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.nat(), { maxLength: 50 }), fc.integer({ min: 1, max: 20 }), (seqs, capacity) => {
        const finished = new FinishedSequences(capacity);
        for (const seq of seqs) finished.add(seq, seq * 7);
        seqs.forEach((seq, i) => expect(finished.has(seq, seq * 7)).toBe(i >= seqs.length - capacity));
      }),
    );
  });
});

/** A message of a fake command stream: its sequence, subject and stored time (RFC 3339, ns). */
interface FakeMsg {
  seq: number;
  subject: string;
  timestamp: string;
}

/** A JetStreamManager whose `streams.getMessage` answers `next_by_subj` from `stream()` (the stream as it is now), as nats-server does. */
function fakeJsm(stream: () => FakeMsg[]): JetStreamManager {
  return {
    streams: {
      getMessage: (_name: string, q: { seq: number; next_by_subj: string }) => {
        const filter = q.next_by_subj.split('.');
        const m = stream().find((c) => c.seq >= q.seq && c.subject.split('.').every((t, i) => filter[i] === '*' || filter[i] === t));
        if (!m) return Promise.resolve(null);
        const h = headers();
        h.set('Nats-Msg-Id', `id-${m.seq}`);
        return Promise.resolve({
          seq: m.seq,
          subject: m.subject,
          timestamp: m.timestamp,
          time: new Date(Date.parse(m.timestamp)),
          header: h,
        } as unknown as StoredMsg);
      },
    },
  } as unknown as JetStreamManager;
}

/** The RFC 3339 time with nanoseconds of `ns` nanoseconds after 2026-12-02T14:00:00Z. */
function stamp(ns: number): string {
  const base = Date.parse('2026-12-02T14:00:00Z');
  const ms = base + Math.floor(ns / 1_000_000);
  return `${new Date(ms).toISOString().slice(0, 19)}.${String((ms % 1000) * 1_000_000 + (ns % 1_000_000)).padStart(9, '0')}Z`;
}

describe('storedTimestampNanos', () => {
  it("gives a stored message's time as JsMsg.info.timestampNanos gives the same instant (the ack subject's integer token, parsed)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 18n }), fc.integer({ min: 0, max: 9 }), (ns, cut) => {
        // A server may write fewer than 9 fraction digits (trailing zeros dropped).
        const exact = (ns / 10n ** BigInt(cut)) * 10n ** BigInt(cut);
        const ms = Number(exact / 1_000_000n);
        const fraction = String(exact % 1_000_000_000n)
          .padStart(9, '0')
          .slice(0, 9 - cut);
        const text = `${new Date(ms).toISOString().slice(0, 19)}${fraction ? `.${fraction}` : ''}Z`;
        expect(storedTimestampNanos(text)).toBe(parseInt(exact.toString(), 10));
      }),
    );
  });
});

describe('earlierCommandInStream', () => {
  const subject = (session: string, kind = 'append') => commandSubject('p', 't', session, kind);

  it('never takes a command of a re-created stream (numbered from 1 again) as finished because one with its sequence was finished in the earlier life', async () => {
    // First life: seqs 1..5 of session s, all handled here and remembered as finished.
    const first: FakeMsg[] = [1, 2, 3, 4, 5].map((seq) => ({ seq, subject: subject('s'), timestamp: stamp(seq * 1_000_003) }));
    const finished = new FinishedSequences();
    for (const m of first) finished.add(m.seq, storedTimestampNanos(m.timestamp));
    // Second life (server restarted on an empty store): seq 2 and 3 of s are new, unapplied; 3 asks for 2.
    const second: FakeMsg[] = [
      { seq: 1, subject: subject('other'), timestamp: stamp(60_000_000_017) },
      { seq: 2, subject: subject('s'), timestamp: stamp(60_000_000_101) },
      { seq: 3, subject: subject('s'), timestamp: stamp(60_000_000_202) },
    ];
    const earlier = await earlierCommandInStream(
      fakeJsm(() => second),
      'P_COMMANDS',
      sessionCommandFilter(subject('s')),
      3,
      (seq, ns) => finished.has(seq, ns),
    );
    expect(earlier).toEqual({
      seq: 2,
      subject: subject('s'),
      msgId: 'id-2',
      time: new Date(Date.parse(second[1].timestamp)),
      timestampNanos: storedTimestampNanos(second[1].timestamp),
    });
  });

  it('returns the first earlier command of the session not finished here, whatever the lives of the stream (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Each message: its session (0..2), whether it is still in the stream, whether it was finished here (in this life);
        // plus the sequences of an earlier life finished here (same numbers, other stored times).
        fc.array(fc.record({ session: fc.nat(2), present: fc.boolean(), finishedHere: fc.boolean() }), { minLength: 1, maxLength: 30 }),
        fc.uniqueArray(fc.integer({ min: 1, max: 30 }), { maxLength: 30 }),
        fc.nat(29),
        async (msgs, oldLife, asking) => {
          const finished = new FinishedSequences();
          for (const seq of oldLife) finished.add(seq, storedTimestampNanos(stamp(seq * 1_000)));
          const stream: FakeMsg[] = msgs.map((m, i) => ({ seq: i + 1, subject: subject(`s${m.session}`), timestamp: stamp(10 ** 12 + (i + 1) * 1_000) }));
          msgs.forEach((m, i) => m.finishedHere && finished.add(i + 1, storedTimestampNanos(stream[i].timestamp)));
          const present = stream.filter((_, i) => msgs[i].present);
          const seq = Math.min(asking, msgs.length - 1) + 1;
          const session = `s${msgs[seq - 1].session}`;
          const expected = stream.findIndex((c, i) => c.seq < seq && msgs[i].present && !msgs[i].finishedHere && c.subject === subject(session));
          const earlier = await earlierCommandInStream(
            fakeJsm(() => present),
            'P_COMMANDS',
            sessionCommandFilter(subject(session)),
            seq,
            (s, ns) => finished.has(s, ns),
          );
          expect(earlier?.seq ?? null).toBe(expected < 0 ? null : expected + 1);
        },
      ),
    );
  });
});

describe('OrderWaits', () => {
  it('looks up at most once per ack wait from one ack wait on, warns once at 3 ack waits, counts stalled waits until they end (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.array(fc.record({ dt: fc.nat(1500), session: fc.nat(2), seqBump: fc.boolean(), end: fc.boolean(), earlier: fc.nat(2) }), { maxLength: 60 }),
        (ackWait, steps) => {
          const waits = new OrderWaits(ackWait);
          const model = new Map<number, { seq: number; since: number; lastLookUp: number; lookedUpFor: number; warned: boolean }>();
          let now = 0;
          let seqs = 100;
          for (const { dt, session, seqBump, end, earlier } of steps) {
            now += dt;
            if (end) {
              waits.done(`s${session}`);
              model.delete(session);
            } else {
              let w = model.get(session);
              const seq = seqBump || !w ? ++seqs : w.seq;
              if (!w || w.seq !== seq) model.set(session, (w = { seq, since: now, lastLookUp: now, lookedUpFor: earlier, warned: false }));
              const step = waits.waiting(`s${session}`, seq, now, earlier);
              expect(step.waitedMs).toBe(now - w.since);
              expect(step.lookUp).toBe(now - w.lastLookUp >= ackWait || (now - w.since >= ackWait && earlier !== w.lookedUpFor));
              if (step.lookUp) Object.assign(w, { lastLookUp: now, lookedUpFor: earlier });
              expect(step.warn).toBe(!w.warned && now - w.since >= STALLED_AFTER_ACK_WAITS * ackWait);
              if (step.warn) w.warned = true;
            }
            expect(waits.stalled).toBe([...model.values()].filter((w) => w.warned).length);
          }
        },
      ),
    );
  });

  // ncverify N1: after a kill -9 of nats-server, a session with 10 answered commands whose
  // acknowledgements were lost cleared one per ack wait (its later commands ~175 s late)
  it('given a wait of an ack wait whose earlier command was removed, when the next earlier command is met, then it is looked up at once', () => {
    const waits = new OrderWaits(30_000);
    expect(waits.waiting('s', 20, 0, 11).lookUp).toBe(false);
    expect(waits.waiting('s', 20, 30_000, 11).lookUp).toBe(true);
    expect(waits.waiting('s', 20, 30_010, 12).lookUp).toBe(true);
    expect(waits.waiting('s', 20, 30_020, 13).lookUp).toBe(true);
    expect(waits.waiting('s', 20, 30_030, 13).lookUp).toBe(false);
  });
});
