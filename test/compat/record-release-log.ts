/**
 * Records a release's log and windows as a fixture, so later releases can prove they still load
 * logs written before them (issue 11: "a log written by the previous release loads and gives the
 * same windows").
 *
 * Usage, from a checkout of the release to record (the lead ran it on commit bc761a6, the release
 * before the session decider work):
 *   npx ts-node --transpile-only -r tsconfig-paths/register test/compat/record-release-log.ts <out.json>
 *
 * It drives the service in-process through HTTP on a temporary store: a tool-call conversation,
 * a policy, compactions by several strategies (summaries included, with the extractive
 * summarizer), a superseded system message, then dumps every stored event and the windows
 * (native and OpenAI) at the end and at a few past revisions.
 */
import * as fs from 'node:fs';
import type { EventStore } from '@lib/event-store';
import { EVENT_STORE } from '@lib/session';
import { startService } from '../support/service-harness';

const SESSIONS = ['travel', 'tools'];

function turn(i: number) {
  return [
    { id: `u${i}`, type: 'user', text: `Turn ${i}: change reservation XK${i}Q9 to Saturday, seat ${i}A.` },
    { id: `c${i}`, type: 'assistant', text: null, toolCalls: [{ id: `call_${i}`, name: 'get_reservation', arguments: JSON.stringify({ id: `XK${i}Q9` }) }] },
    {
      id: `t${i}`,
      type: 'tool',
      responses: [{ toolCallId: `call_${i}`, name: 'get_reservation', data: JSON.stringify({ date: `2024-05-${10 + i}`, seat: `${i}A` }) }],
    },
    { id: `a${i}`, type: 'assistant', text: `Done: reservation XK${i}Q9 moved, seat ${i}A kept.` },
  ];
}

async function main(): Promise<void> {
  const out = process.argv[2];
  if (!out) throw new Error('usage: record-release-log.ts <out.json>');
  const h = await startService();
  const http = h.http;
  try {
    await http()
      .post('/v1/sessions/travel/events')
      .send({ userId: 'alice', events: [{ id: 's1', type: 'system', text: 'You are a travel agent.' }, ...turn(1), ...turn(2)] })
      .expect(201);
    await http()
      .put('/v1/sessions/travel/policy')
      .send({ strategy: { type: 'sliding-window', maxEvents: 12 }, trigger: { type: 'turn-count', maxTurns: 50 } })
      .expect(200);
    await http()
      .post('/v1/sessions/travel/events')
      .send({ events: [...turn(3), ...turn(4)] })
      .expect(201);
    await http()
      .post('/v1/sessions/travel/compactions')
      .send({ strategy: { type: 'token-count', maxTokens: 120 }, estimator: 'cl100k_base' })
      .expect(200);
    await http()
      .post('/v1/sessions/travel/events')
      .send({ events: [{ id: 's2', type: 'system', text: 'You are a careful travel agent.' }, ...turn(5), ...turn(6)] })
      .expect(201);
    await http()
      .post('/v1/sessions/travel/compactions')
      .send({ strategy: { type: 'recursive-summarization', maxEventsToKeep: 6, overlapSize: 2 } })
      .expect(200);
    await http()
      .post('/v1/sessions/travel/events')
      .send({ events: [...turn(7), ...turn(8)] })
      .expect(201);
    await http()
      .post('/v1/sessions/travel/compactions')
      .send({ strategy: { type: 'rolling-summary', keepTurns: 1, summarizeAtTokens: 50 } })
      .expect(200);
    await http()
      .post('/v1/sessions/travel/events')
      .send({ events: [...turn(9)] })
      .expect(201);

    await http()
      .post('/v1/sessions/tools/events')
      .send({ events: [...turn(1), ...turn(2), ...turn(3)] })
      .expect(201);
    await http()
      .post('/v1/sessions/tools/compactions')
      .send({ strategy: { type: 'turn-window', maxTurns: 1 } })
      .expect(200);
    await http()
      .post('/v1/sessions/tools/events')
      .send({ events: [...turn(4)] })
      .expect(201);
    await http()
      .post('/v1/sessions/tools/compactions')
      .send({ strategy: { type: 'sliding-window', maxEvents: 3 } })
      .expect(200);

    const store = h.service.app.get<EventStore>(EVENT_STORE);
    const events = (await store.readAll({})).map((e) => ({
      streamId: e.streamId,
      id: e.id,
      type: e.type,
      revision: e.revision.toString(),
      data: e.data,
      metadata: e.metadata,
    }));
    const head = (await store.headPosition()).toString();
    const windows = [];
    for (const sessionId of SESSIONS) {
      const last = events.filter((e) => e.streamId.endsWith(`.${sessionId}`)).length - 1;
      for (const atRevision of [null, 3, Math.floor(last / 2), last - 1]) {
        const query = atRevision === null ? `minPosition=${head}` : `atRevision=${atRevision}`;
        const native = await http().get(`/v1/sessions/${sessionId}/window?${query}`).expect(200);
        const openai = await http().get(`/v1/sessions/${sessionId}/window?format=openai&${query}`).expect(200);
        windows.push({
          sessionId,
          atRevision,
          ids: (native.body.events as Array<{ id: string }>).map((e) => e.id),
          tokens: native.body.tokens,
          openai: openai.body.messages,
        });
      }
    }
    fs.writeFileSync(out, JSON.stringify({ recordedFrom: process.env.RECORDED_FROM ?? 'unknown', events, windows }, null, 1) + '\n');
    console.log(`wrote ${events.length} events and ${windows.length} windows to ${out}`);
  } finally {
    await h.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
