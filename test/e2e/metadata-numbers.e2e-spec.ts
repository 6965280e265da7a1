/**
 * `metadata` numbers a double does not hold as sent are refused over HTTP, nothing written, and
 * the same event with them as strings is stored as sent (newcomer ncpolyglot F2: a Python client's
 * `json.dumps` writes 64-bit integers exactly; they came back changed, `1e400` as null, and a
 * resend with another big integer was taken for a retry).
 */
import { useService } from '../support/service-harness';

describe('metadata numbers over HTTP', () => {
  const harness = useService();

  it('refuses a big integer or 1e400 (400 naming it, nothing written) and keeps them sent as strings', async () => {
    const session = '/v1/sessions/f2-numbers';
    const sent = '{"events":[{"id":"e1","type":"user","text":"hi","metadata":{"snowflake":1234567890123456789,"f":1.5,"huge":1e400}}]}';
    const refused = await harness.http().post(`${session}/events`).set('Content-Type', 'application/json').send(sent).expect(400);
    expect(refused.body).toMatchObject({ code: 'validation_failed', parameter: 'events[0].metadata.snowflake' });
    expect(refused.body.message).toMatch(/send it as a string/);
    await harness.http().get(`${session}/window`).expect(404);
    const asStrings = '{"events":[{"id":"e1","type":"user","text":"hi","metadata":{"snowflake":"1234567890123456789","f":1.5,"huge":"1e400"}}]}';
    const appended = await harness.http().post(`${session}/events`).set('Content-Type', 'application/json').send(asStrings).expect(201);
    const log = await harness.http().get(`${session}/events?minPosition=${appended.body.position}`).expect(200);
    expect(log.body.events[0].data.metadata).toEqual({ snowflake: '1234567890123456789', f: 1.5, huge: '1e400' });
    // A resend with another big integer is other content: refused as well, never a silent retry.
    const other = sent.replace('1234567890123456789', '1234567890123456790');
    await harness.http().post(`${session}/events`).set('Content-Type', 'application/json').send(other).expect(400);
  });
});
