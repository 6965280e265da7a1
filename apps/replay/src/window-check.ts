/**
 * Reads a session's active window the way an agent would before calling its model and checks it
 * as a provider would (DESIGN §5, issue 5 item 3): the OpenAI rendering passes
 * `validateOpenAiWindow` (system first and once, every tool message answers an earlier call,
 * every call of a closed turn answered, summaries in place, no lone surrogate), and the token
 * total the service reports equals the sum of the window's event costs.
 */
import { validateOpenAiWindow } from '@lib/session';
import type { Schemas, SessionServiceClient } from '@lib/client';
import { ok } from './service-client';

/** One problem found in a window. */
export interface WindowProblem {
  sessionId: string;
  /** 1-based turn after which the window was read; 0 for the final read after settling. */
  turn: number;
  /** Window revision read. */
  revision: string;
  code: string;
  message: string;
}

/** `GET …/window?format=events` (the generated client's schema). */
export type EventsWindow = Extract<Schemas['Window'], { events: unknown }>;

/** `GET …/window?format=openai` (the generated client's schema). */
export type OpenAiWindow = Extract<Schemas['Window'], { messages: unknown }>;

/** The window in the events rendering. @throws Error when the service answered the other one. */
export function eventsWindow(window: Schemas['Window']): EventsWindow {
  if (!('events' in window)) throw new Error(`GET /v1/sessions/${window.sessionId}/window?format=events answered without events`);
  return window;
}

/** The window in the OpenAI rendering. @throws Error when the service answered the other one. */
export function openAiWindow(window: Schemas['Window']): OpenAiWindow {
  if (!('messages' in window)) throw new Error(`GET /v1/sessions/${window.sessionId}/window?format=openai answered without messages`);
  return window;
}

/** What one checked read returns. */
export interface WindowReading {
  revision: string;
  /** The service's reported token total. */
  tokens: number;
  /** Events in the window. */
  eventCount: number;
  /** Summaries in the window. */
  summaryCount: number;
  problems: WindowProblem[];
}

/**
 * Reads the window in both formats (waiting for `minPosition` when given), at one revision
 * (re-reading when a background compaction lands between the two reads), and checks it.
 */
export async function readAndCheckWindow(
  client: SessionServiceClient,
  sessionId: string,
  estimator: Schemas['Estimator'],
  turn: number,
  minPosition?: string,
): Promise<WindowReading> {
  const read = (format: 'openai' | 'events') =>
    ok(
      client.GET('/v1/sessions/{sessionId}/window', { params: { path: { sessionId }, query: { estimator, format, ...(minPosition ? { minPosition } : {}) } } }),
    );
  let events!: EventsWindow;
  let openai!: OpenAiWindow;
  let sameRevision = false;
  for (let attempt = 0; attempt < 5 && !sameRevision; attempt++) {
    openai = openAiWindow(await read('openai'));
    events = eventsWindow(await read('events'));
    sameRevision = openai.revision === events.revision;
  }
  const problems: WindowProblem[] = [];
  const add = (revision: string, code: string, message: string) => problems.push({ sessionId, turn, revision, code, message });

  const summaries = events.events.flatMap((e) => (e.type === 'summary' ? [{ shadowPrompt: e.shadowPrompt, text: e.text }] : []));
  for (const p of validateOpenAiWindow(openai.messages, sameRevision ? { summaries } : {})) add(openai.revision, p.code, p.message);

  const sum = events.events.reduce((acc, e) => acc + e.tokens, 0);
  if (sum !== events.tokens) add(events.revision, 'token-total', `the window reports ${events.tokens} tokens but its events cost ${sum}`);
  if (sameRevision && openai.tokens !== events.tokens) {
    add(openai.revision, 'token-total', `the openai rendering reports ${openai.tokens} tokens, the events rendering ${events.tokens} at the same revision`);
  }
  if (!sameRevision) add(openai.revision, 'unstable-window', 'the window changed between every pair of reads (5 attempts)');
  return { revision: events.revision, tokens: events.tokens, eventCount: events.events.length, summaryCount: summaries.length, problems };
}
