/**
 * Measures when the NATS command consumer acknowledges a command against when its answer was
 * published (natsack), from an observer connection: a core subscription on the results subjects
 * (an answer as it is published) and one on `$JS.ACK.<stream>.<consumer>.>` (every acknowledgement,
 * in-progress report, nak and termination as it reaches the server), for two service processes
 * sharing one SQLite file under 2,000 commands on 200 sessions (8 appends and 2 compactions each),
 * ack wait 3 s:
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/nats-ack-timing.ts <repository> <tag> [kill]
 *
 * `<repository>`: the tree whose service runs (this one, or a worktree of another commit, for an
 * A/B); NATS at `NATS_TEST_URL` (default 127.0.0.1:4222), streams of a prefix of their own,
 * deleted at the end. Prints JSON lines:
 * - `load`: ack − answer (ms, percentiles) and, at 500 random instants of the run, how many commands
 *   of one replica were answered but not acknowledged;
 * - with `kill`: SIGKILL of one replica once 150 commands of a second batch are acknowledged: how
 *   many of its commands were answered but unacknowledged at its death, how many unanswered ones
 *   were redelivered (both wait out the ack wait), and the time to the end;
 * - then `term`: a third replica starts, a third batch, SIGTERM of the survivor once 150 are
 *   acknowledged: commands given back (nak) and commands redelivered without a nak (left to the
 *   ack wait), with their stream sequences and the stopped replica's pid.
 * `BENCH_SERVICE_REQUIRE=<file.js>` preloads a module into each service process (`node -r`), e.g.
 * to log what its NATS client receives while looking for where a command went.
 * Timings are the observer's (its event loop included); compare runs interleaved, with the load average.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { startServiceProcess, type ServiceProcess } from '../test/support/service-process';
import { natsNames, commandSubject } from '../apps/session-service/src/nats/nats-names';

const repo = process.argv[2];
const tag = process.argv[3];
const doKill = process.argv[4] === 'kill';
if (!repo || !tag) {
  console.error('usage: bench/nats-ack-timing.ts <repository> <tag> [kill]');
  process.exit(2);
}
const SESSIONS = 200;
const PER_SESSION = 10;
const NATS_URL = process.env.NATS_TEST_URL || 'nats://127.0.0.1:4222';
const prefix = `acks-${tag.replace(/[^A-Za-z0-9_-]/g, '')}-${randomBytes(3).toString('hex')}`.slice(0, 32);
const names = natsNames(prefix);

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

async function main() {
  const nc = await connect({ servers: NATS_URL });
  const js = jetstream(nc);
  const jsm = await jetstreamManager(nc);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'natsack-m-'));
  const eventsFile = path.join(root, 'events.sqlite');
  const answerAt = new Map<string, { t: number; replica: string; dc: number }[]>(); // command id -> answers
  const ackAt = new Map<number, { t: number; kind: string }[]>(); // stream seq -> acks (+ACK, +WPI, -NAK, +TERM)
  const answers = nc.subscribe(`${prefix}.results.>`, {
    callback: (_e, m) => {
      const id = m.headers?.get('Command-Id') ?? '?';
      const list = answerAt.get(id) ?? [];
      list.push({ t: performance.now(), replica: m.headers?.get('Replica') ?? '?', dc: Number(m.headers?.get('Delivery-Count')) });
      answerAt.set(id, list);
    },
  });
  const acks = nc.subscribe(`$JS.ACK.${names.commandStream}.${names.commandConsumer}.>`, {
    callback: (_e, m) => {
      const tokens = m.subject.split('.');
      const seq = Number(tokens[5]);
      const list = ackAt.get(seq) ?? [];
      list.push({ t: performance.now(), kind: new TextDecoder().decode(m.data).split(' ')[0] });
      ackAt.set(seq, list);
    },
  });
  await nc.flush();
  const start = (name: string) =>
    startServiceProcess({
      dataDir: path.join(root, name),
      cwd: repo,
      command: [
        process.execPath,
        ...(process.env.BENCH_SERVICE_REQUIRE ? ['-r', process.env.BENCH_SERVICE_REQUIRE] : []),
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'apps/session-service/src/main.ts',
      ],
      env: {
        NATS_URL,
        NATS_PREFIX: prefix,
        NATS_ACK_WAIT_MS: '3000',
        SQLITE_EVENTS_FILE: eventsFile,
        LOG_LEVEL: process.env.SVC_LOG ?? 'error',
        TS_NODE_TRANSPILE_ONLY: 'true',
      },
    }).ready;
  const replicas: ServiceProcess[] = await Promise.all([start('a'), start('b')]);
  try {
    const seqOf = new Map<string, number>();
    const idOf = new Map<number, string>();
    const publish = async (batch: string) => {
      const sent: { id: string; subject: string; body: unknown }[] = [];
      for (let k = 0; k < PER_SESSION; k++)
        for (let i = 0; i < SESSIONS; i++) {
          const id = randomUUID();
          const kind = k % 5 === 4 ? 'compact' : 'append';
          const body =
            kind === 'append'
              ? {
                  events: [
                    { type: 'user', text: `question ${id}` },
                    { type: 'assistant', text: 'answer' },
                  ],
                }
              : { strategy: { type: 'turn-window', maxTurns: 2 } };
          sent.push({ id, subject: commandSubject(prefix, 'default', `${batch}-s${i}`, kind), body });
        }
      await Promise.all(
        sent.map(async (c) => {
          const ack = await js.publish(c.subject, JSON.stringify(c.body), { msgID: c.id });
          seqOf.set(c.id, ack.seq);
          idOf.set(ack.seq, c.id);
        }),
      );
      return sent;
    };
    const acked = (ids: string[]) => ids.filter((id) => (ackAt.get(seqOf.get(id)!) ?? []).some((a) => a.kind === '+ACK' || a.kind === '+TERM')).length;

    // Phase 1: the load, no fault.
    const t0 = performance.now();
    const one = (await publish('one')).map((c) => c.id);
    const deadline = Date.now() + 180_000;
    while (acked(one) < one.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    const t1 = performance.now();
    const deltas: number[] = [];
    const spans: { a: number; k: number; replica: string }[] = [];
    for (const id of one) {
      const a = answerAt.get(id)?.[0];
      const k = (ackAt.get(seqOf.get(id)!) ?? []).find((x) => x.kind === '+ACK' || x.kind === '+TERM');
      if (!a || !k) continue;
      deltas.push(k.t - a.t);
      spans.push({ a: a.t, k: k.t, replica: a.replica });
    }
    // Answered-but-unacknowledged at 500 random instants of the run, per replica.
    const counts: number[] = [];
    const maxima: number[] = [];
    for (let i = 0; i < 500; i++) {
      const t = t0 + Math.random() * (t1 - t0);
      const byReplica = new Map<string, number>();
      for (const s of spans) if (s.a <= t && t < s.k) byReplica.set(s.replica, (byReplica.get(s.replica) ?? 0) + 1);
      for (const n of [...byReplica.values(), ...Array(2 - byReplica.size).fill(0)]) counts.push(n);
      maxima.push(Math.max(0, ...byReplica.values()));
    }
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      JSON.stringify({
        tag,
        phase: 'load',
        commands: one.length,
        acked: acked(one),
        wallS: ((t1 - t0) / 1000).toFixed(1),
        ackMinusAnswerMs: {
          p50: pct(deltas, 50).toFixed(2),
          p90: pct(deltas, 90).toFixed(2),
          p99: pct(deltas, 99).toFixed(2),
          max: Math.max(...deltas).toFixed(1),
          min: Math.min(...deltas).toFixed(2),
        },
        answeredUnackedPerReplica: { mean: mean(counts).toFixed(2), p99: pct(counts, 99), max: Math.max(...counts) },
        load: os.loadavg().map((x) => x.toFixed(1)),
      }),
    );

    if (doKill) {
      const two = (await publish('two')).map((c) => c.id);
      while (acked(two) < 150) await new Promise((r) => setTimeout(r, 5));
      const tk = performance.now();
      const victimPid = String(replicas[0].pid);
      await replicas[0].kill();
      const killedAt = performance.now();
      // What the victim held at its death, as seen by the observer: answered (its answer seen) and never acknowledged.
      const d2 = Date.now() + 180_000;
      while (acked(two) < two.length && Date.now() < d2) await new Promise((r) => setTimeout(r, 100));
      const tEnd = performance.now();
      let answeredUnacked = 0;
      let unansweredRedelivered = 0;
      for (const id of two) {
        const list = answerAt.get(id) ?? [];
        const first = list[0];
        const byVictim = first && first.replica.endsWith(`:${victimPid}`) && first.t <= killedAt;
        const ackList = ackAt.get(seqOf.get(id)!) ?? [];
        const ackBeforeKill = ackList.some((a) => (a.kind === '+ACK' || a.kind === '+TERM') && a.t <= killedAt);
        if (byVictim && !ackBeforeKill) answeredUnacked++;
        if (!byVictim && list.some((a) => a.dc > 1)) unansweredRedelivered++;
      }
      console.log(
        JSON.stringify({
          tag,
          phase: 'kill',
          commands: two.length,
          acked: acked(two),
          answeredUnackedAtKill: answeredUnacked,
          unansweredRedelivered,
          killToAllAckedS: ((tEnd - killedAt) / 1000).toFixed(1),
          killDetectMs: (killedAt - tk).toFixed(0),
          load: os.loadavg().map((x) => x.toFixed(1)),
        }),
      );
      // Graceful stop mid-load: SIGTERM of the survivor, a new replica beside it.
      replicas.push(await start('c'));
      const three = (await publish('three')).map((c) => c.id);
      while (acked(three) < 150) await new Promise((r) => setTimeout(r, 5));
      const ts = performance.now();
      const stoppedPid = replicas[1].pid;
      await replicas[1].stop();
      const stoppedAt = performance.now();
      const d3 = Date.now() + 180_000;
      while (acked(three) < three.length && Date.now() < d3) await new Promise((r) => setTimeout(r, 100));
      let nakd = 0;
      let waitedAckWait = 0;
      const waitedSeqs: number[] = [];
      for (const id of three) {
        const list = ackAt.get(seqOf.get(id)!) ?? [];
        const nak = list.some((a) => a.kind === '-NAK');
        if (nak) nakd++;
        if (!nak && (answerAt.get(id) ?? []).some((a) => a.dc > 1)) {
          waitedAckWait++;
          waitedSeqs.push(seqOf.get(id)!);
        }
      }
      console.log(
        JSON.stringify({
          tag,
          phase: 'term',
          commands: three.length,
          acked: acked(three),
          givenBack: nakd,
          redeliveredAfterAckWait: waitedAckWait,
          redeliveredAfterAckWaitSeqs: waitedSeqs,
          stoppedPid: stoppedPid,
          stopMs: (stoppedAt - ts).toFixed(0),
          load: os.loadavg().map((x) => x.toFixed(1)),
        }),
      );
    }
  } finally {
    await Promise.all(replicas.map((r) => r.stop()));
    answers.unsubscribe();
    acks.unsubscribe();
    for (const s of [names.commandStream, names.resultStream, names.decisionStream]) await jsm.streams.delete(s).catch(() => undefined);
    await nc.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

void main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
