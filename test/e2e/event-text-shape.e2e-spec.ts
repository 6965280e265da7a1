/**
 * An assistant event appended to `POST …/events` without `text` (tool calls only, or a refusal
 * only: the request schema lets `text` out) answers with `text: null` from every read that returns
 * events, as the OpenAPI `WindowEvent` requires and as `/messages` stores it; a resend with or
 * without `text: null` is the same event (newcomer ncpolyglot F1).
 */
import { WindowSchema } from '../../apps/session-service/src/http/response-schemas';
import { useService } from '../support/service-harness';

describe('an assistant event appended without text', () => {
  const harness = useService();
  const body = {
    events: [
      { id: 'u1', type: 'user', text: 'hi' },
      { id: 'c1', type: 'assistant', toolCalls: [{ id: 'call_1', name: 'x', arguments: '{}' }] },
      { id: 't1', type: 'tool', responses: [{ toolCallId: 'call_1', name: 'x', data: 'ok' }] },
      { id: 'r1', type: 'assistant', refusal: 'no' },
    ],
  };
  const textOf = (events: Array<Record<string, unknown>>) => Object.fromEntries(events.map((e) => [e.id, Object.hasOwn(e, 'text') ? e.text : 'absent']));
  const expected = { u1: 'hi', c1: null, t1: 'absent', r1: null };

  it('reads with text null from the window (now and at a revision), which matches the documented WindowEvent, and from the log', async () => {
    const session = '/v1/sessions/f1-no-text';
    const appended = await harness.http().post(`${session}/events`).send(body).expect(201);
    const window = await harness.http().get(`${session}/window?minPosition=${appended.body.position}`).expect(200);
    expect(textOf(window.body.events)).toEqual(expected);
    expect(WindowSchema.safeParse(window.body).success).toBe(true);
    const past = await harness.http().get(`${session}/window?atRevision=3`).expect(200);
    expect(textOf(past.body.events)).toEqual(expected);
    expect(WindowSchema.safeParse(past.body).success).toBe(true);
    const log = await harness.http().get(`${session}/events?minPosition=${appended.body.position}`).expect(200);
    expect(textOf(log.body.events.map((e: { data: { event: Record<string, unknown> } }) => e.data.event))).toEqual(expected);
  });

  it('is the same event when resent without text or with text null (201, nothing written)', async () => {
    const session = '/v1/sessions/f1-resend';
    const first = await harness.http().post(`${session}/events`).send(body).expect(201);
    const again = await harness.http().post(`${session}/events`).send(body).expect(201);
    expect(again.body).toEqual(first.body);
    const withNull = { events: body.events.map((e) => (e.type === 'assistant' ? { ...e, text: null } : e)) };
    const resent = await harness.http().post(`${session}/events`).send(withNull).expect(201);
    expect(resent.body).toEqual(first.body);
  });
});
