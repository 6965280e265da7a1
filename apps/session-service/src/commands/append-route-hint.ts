/**
 * The two append routes take different lists: native session events (`{"events": […]}`, HTTP
 * `POST …/events`, NATS `append`) and OpenAI chat messages (`{"messages": […]}`, HTTP
 * `POST …/messages`, NATS `messages`). A body sent to the other route is told where it goes,
 * instead of a bare `events: is required`.
 */
import { InvalidRequestError } from '@lib/session';

/** An append route, named by the list field its body takes. */
export type AppendRoute = 'events' | 'messages';

const ROUTES: Record<AppendRoute, { takes: string; http: string; nats: string }> = {
  events: { takes: 'native session events', http: 'POST /v1/sessions/:sessionId/events', nats: 'append' },
  messages: { takes: 'OpenAI chat messages', http: 'POST /v1/sessions/:sessionId/messages', nats: 'messages' },
};

/**
 * Refuses a body meant for the other append route: a JSON object without `route`'s list field
 * (`events` or `messages`) that has the other route's one. Any other body passes (its validation
 * says what is wrong with it).
 * @throws InvalidRequestError (400 `validation_failed`, parameter `route`), e.g. `events: is
 *   required: this route takes native session events; OpenAI chat messages ({"messages": […]}) go
 *   to POST /v1/sessions/:sessionId/messages (over NATS: the messages command)`.
 */
export function checkAppendRoute(body: unknown, route: AppendRoute): void {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return;
  const other: AppendRoute = route === 'events' ? 'messages' : 'events';
  if (Object.hasOwn(body, route) || !Object.hasOwn(body, other)) return;
  const here = ROUTES[route];
  const there = ROUTES[other];
  throw new InvalidRequestError(
    route,
    `${route}: is required: this route takes ${here.takes}; ${there.takes} ({"${other}": […]}) go to ${there.http} (over NATS: the ${there.nats} command)`,
    'validation_failed',
  );
}
