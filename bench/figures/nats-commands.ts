/**
 * Figure 9: commands per second through NATS JetStream against the same commands over HTTP, in one
 * run on one service instance (embedded SQLite, durable commits). The workload: for each of
 * `sessions` sessions, rounds of 4 appends (one turn each, no client ids) and 1 compact
 * (turn-window, maxTurns 2); HTTP sends them with `clients` concurrent keep-alive connections,
 * NATS publishes them all at once to the command stream and counts the answers on the results
 * subjects. Both measure from the first command sent to the last answer received. Needs a NATS
 * server (`NATS_URL`, default nats://127.0.0.1:4222); skipped with one line without one.
 */
import { randomBytes } from 'node:crypto';
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { commandSubject, natsNames } from '../../apps/session-service/src/nats/nats-names';
import { JsonClient, startService } from '../lib/service';
import { nowMs, round } from '../lib/stats';
import { progress, type FigureResult } from '../lib/report';

/** Options of {@link runNatsCommands}. */
export interface NatsCommandsOptions {
  /** Sessions per transport. */
  sessions: number;
  /** Rounds of 4 appends + 1 compact per session. */
  rounds: number;
  /** Concurrent HTTP clients. */
  clients: number;
  /** Root of the temporary data directories (disk-backed). */
  dir?: string;
}

interface BenchCommand {
  session: string;
  kind: 'append' | 'compact';
  body: unknown;
}

function workload(label: string, sessions: number, rounds: number): BenchCommand[] {
  const out: BenchCommand[] = [];
  for (let r = 0; r < rounds; r++) {
    for (let k = 0; k < 5; k++) {
      for (let s = 0; s < sessions; s++) {
        const session = `${label}-${s}`;
        out.push(
          k < 4
            ? {
                session,
                kind: 'append',
                body: {
                  events: [
                    { type: 'user', text: `question ${r}.${k} about the order` },
                    { type: 'assistant', text: `answer ${r}.${k}` },
                  ],
                },
              }
            : { session, kind: 'compact', body: { strategy: { type: 'turn-window', maxTurns: 2 } } },
        );
      }
    }
  }
  return out;
}

/** Runs figure 9 (see the module doc). */
export async function runNatsCommands(options: NatsCommandsOptions): Promise<FigureResult> {
  const url = process.env.NATS_URL || 'nats://127.0.0.1:4222';
  const title = 'commands per second: NATS JetStream vs HTTP';
  let nc;
  try {
    nc = await connect({ servers: url, timeout: 2000 });
  } catch {
    return { figure: 9, title, rows: [], skipped: `no NATS server at ${url}` };
  }
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const names = natsNames(prefix);
  const running = await startService(options.dir, 'nats', { NATS_URL: url, NATS_PREFIX: prefix, LOG_LEVEL: 'silent' });
  const jsm = await jetstreamManager(nc);
  try {
    // HTTP: `clients` workers take the next command in order (each session's commands stay in order per worker pick).
    const http = new JsonClient(running.port, options.clients + 2);
    const overHttp = workload('http', options.sessions, options.rounds);
    progress(`figure 9: ${overHttp.length} commands over HTTP`);
    let next = 0;
    let httpErrors = 0;
    const httpStart = nowMs();
    await Promise.all(
      Array.from({ length: options.clients }, async () => {
        while (next < overHttp.length) {
          const c = overHttp[next++];
          const route = c.kind === 'append' ? `/v1/sessions/${c.session}/events` : `/v1/sessions/${c.session}/compactions`;
          const res = await http.request('POST', route, c.body);
          if (res.status >= 400) httpErrors++;
        }
      }),
    );
    const httpSeconds = (nowMs() - httpStart) / 1000;
    http.close();

    // NATS: publish everything, count the answers.
    const overNats = workload('nats', options.sessions, options.rounds);
    progress(`figure 9: ${overNats.length} commands over NATS`);
    const js = jetstream(nc);
    const encoder = new TextEncoder();
    let natsErrors = 0;
    const answers = nc.subscribe(`${prefix}.results.>`);
    const allAnswered = (async () => {
      let n = 0;
      for await (const m of answers) {
        if (Number(m.headers?.get('Status')) >= 400) natsErrors++;
        if (++n === overNats.length) break;
      }
    })();
    const natsStart = nowMs();
    // This process's CPU (the service runs in it, with the publisher and the answer counter): per command, less noisy than the rate on a shared machine.
    const natsCpuStart = process.cpuUsage();
    await Promise.all(
      overNats.map((c, i) =>
        js.publish(commandSubject(prefix, 'default', c.session, c.kind), encoder.encode(JSON.stringify(c.body)), { msgID: `${prefix}-${i}` }),
      ),
    );
    const publishedSeconds = (nowMs() - natsStart) / 1000;
    await allAnswered;
    const natsSeconds = (nowMs() - natsStart) / 1000;
    const natsCpu = process.cpuUsage(natsCpuStart);
    const natsCpuMsPerCommand = (natsCpu.user + natsCpu.system) / 1000 / overNats.length;
    const httpRate = overHttp.length / httpSeconds;
    const natsRate = overNats.length / natsSeconds;
    return {
      figure: 9,
      title,
      rows: [
        {
          figure: 9,
          metric: `commands/s through NATS JetStream (${overNats.length} commands, ${options.sessions} sessions)`,
          value: round(natsRate, 0),
          baseline: round(httpRate, 0),
          baselineName: `HTTP, ${options.clients} keep-alive clients`,
          ratio: round(natsRate / httpRate, 2),
          target: 'report',
        },
      ],
      details: {
        commands: overNats.length,
        httpSeconds,
        natsSeconds,
        publishedSeconds,
        httpErrors,
        natsErrors,
        natsCpuMsPerCommand,
        concurrency: running.service.config.natsConcurrency,
      },
      notes: [
        `NATS: all ${overNats.length} commands were stored by JetStream in ${round(publishedSeconds, 2)} s (the caller can walk away then); answers took ${round(natsSeconds, 2)} s in total, ${round(natsCpuMsPerCommand, 2)} ms of CPU per command (service and client, one process). Errors: HTTP ${httpErrors}, NATS ${natsErrors}.`,
      ],
    };
  } finally {
    await running.stop();
    for (const stream of [names.commandStream, names.resultStream, names.decisionStream]) await jsm.streams.delete(stream).catch(() => undefined);
    await nc.close();
  }
}
