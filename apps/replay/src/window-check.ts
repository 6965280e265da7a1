/**
 * Reads a session's active window the way an agent would before calling its model and checks it
 * as a provider would (DESIGN §5, issue 5 item 3): the OpenAI rendering passes
 * `validateOpenAiWindow` (system first and once, every tool message answers an earlier call,
 * every call of a closed turn answered, summaries in place, no lone surrogate), and the token
 * total the service reports equals the sum of the window's event costs.
 */
import { validateOpenAiWindow } from '@lib/session';
import type { ServiceClient } from './service-client';

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

/** Window in the `events` format, as far as the replay uses it. */
export interface EventsWindow {
  sessionId: string;
  revision: string;
  tokens: number;
  estimator: string;
  events: Array<{ id: string; type: string; tokens: number; shadowPrompt?: string; text?: string; compactionId?: string }>;
}

/** Window in the `openai` format. */
export interface OpenAiWindow {
  sessionId: string;
  revision: string;
  tokens: number;
  estimator: string;
  messages: unknown[];
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
  client: ServiceClient,
  sessionId: string,
  estimator: string,
  turn: number,
  minPosition?: string,
): Promise<WindowReading> {
  const base = `/window?estimator=${estimator}${minPosition ? `&minPosition=${minPosition}` : ''}`;
  let events!: EventsWindow;
  let openai!: OpenAiWindow;
  let sameRevision = false;
  for (let attempt = 0; attempt < 5 && !sameRevision; attempt++) {
    openai = await client.getSession<OpenAiWindow>(sessionId, `${base}&format=openai`);
    events = await client.getSession<EventsWindow>(sessionId, `${base}&format=events`);
    sameRevision = openai.revision === events.revision;
  }
  const problems: WindowProblem[] = [];
  const add = (revision: string, code: string, message: string) => problems.push({ sessionId, turn, revision, code, message });

  const summaries = events.events.filter((e) => e.type === 'summary').map((e) => ({ shadowPrompt: e.shadowPrompt ?? '', text: e.text ?? '' }));
  for (const p of validateOpenAiWindow(openai.messages, sameRevision ? { summaries } : {})) add(openai.revision, p.code, p.message);

  const sum = events.events.reduce((acc, e) => acc + e.tokens, 0);
  if (sum !== events.tokens) add(events.revision, 'token-total', `the window reports ${events.tokens} tokens but its events cost ${sum}`);
  if (sameRevision && openai.tokens !== events.tokens) {
    add(openai.revision, 'token-total', `the openai rendering reports ${openai.tokens} tokens, the events rendering ${events.tokens} at the same revision`);
  }
  if (!sameRevision) add(openai.revision, 'unstable-window', 'the window changed between every pair of reads (5 attempts)');
  return { revision: events.revision, tokens: events.tokens, eventCount: events.events.length, summaryCount: summaries.length, problems };
}
