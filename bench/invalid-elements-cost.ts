/**
 * What refusing a body of many small invalid objects costs (newcomer ncverify53): CPU of
 * `appendEventsCommandFrom` (the validation every body route and NATS run) against `JSON.parse` of
 * the same text, for 1000 events of 1024 `{}` text parts, 128 `{}` tool calls, 128 `{}` responses.
 * Run from the root of a checkout: `node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/invalid-elements-cost.ts`.
 */
import { appendEventsCommandFrom } from '../apps/session-service/src/commands/session-command-requests';
import { requestSchemas } from '../apps/session-service/src/http/request-schemas';

const schemas = requestSchemas({ maxEventsPerRequest: 1000, maxTextLength: 1_000_000 });
const many = (n: number, item: unknown) => Array.from({ length: n }, () => item);
const cases: Record<string, unknown> = {
  '1000 x 1024 textParts {}': { events: many(1000, { type: 'user', text: 'x', textParts: many(1024, {}) }) },
  '1000 x 128 toolCalls {}': { events: many(1000, { type: 'assistant', text: 'x', toolCalls: many(128, {}) }) },
  '1000 x 128 responses {}': { events: many(1000, { type: 'tool', responses: many(128, {}) }) },
};
const ms = (f: () => void, rounds = 3) => {
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const t = process.hrtime.bigint();
    f();
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return best;
};
for (const [name, body] of Object.entries(cases)) {
  const text = JSON.stringify(body);
  let message = '';
  const parse = ms(() => JSON.parse(text));
  const refuse = ms(() => {
    try {
      appendEventsCommandFrom(schemas, 't', 's', JSON.parse(text));
    } catch (e) {
      message = (e as Error).message;
    }
  });
  console.log(
    `${name} (${(text.length / 1e6).toFixed(2)} MB): parse ${parse.toFixed(1)} ms, parse+refusal ${refuse.toFixed(1)} ms, ratio ${(refuse / parse).toFixed(1)}; ${message.slice(0, 100)}`,
  );
}
