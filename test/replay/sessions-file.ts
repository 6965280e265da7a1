/**
 * Reads the conversations to replay: a JSON array of tau-bench sessions
 * (`[{ task_id, traj: [messages] }]`) or of plain OpenAI chat message arrays (`[[messages]]`),
 * and splits each into turns the way an agent appends them.
 */
import * as fs from 'node:fs';
// The service's own parser of OpenAI messages (a pure module: no Nest, no store), imported by
// path so that checking a file does not load the whole session library.
import { openAiFieldPath, openAiMessagesToEvents } from '../../libs/session/src/domain/openai-chat-format';
import { ToolCallLedger } from '../../libs/session/src/domain/tool-call-ledger';
import { SessionError } from '../../libs/session/src/errors';
import type { SessionEvent } from '@lib/compaction';
import { ReplayError } from './replay-error';

/** One conversation to replay. */
export interface ReplaySession {
  /** A label from the file (`task_id`), or the index when the file has none. */
  label: string;
  /** Its OpenAI chat messages, in order. */
  messages: Record<string, unknown>[];
}

const ROLES = new Set(['system', 'developer', 'user', 'assistant', 'tool']);

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function checkMessages(messages: unknown, where: string): Record<string, unknown>[] {
  if (!Array.isArray(messages)) throw new ReplayError(`${where} should be an array of chat messages but is ${describe(messages)}`);
  if (messages.length === 0) throw new ReplayError(`${where} is an empty conversation`);
  messages.forEach((m, i) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) throw new ReplayError(`${where}[${i}] should be a chat message object but is ${describe(m)}`);
    const role = (m as Record<string, unknown>).role;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw new ReplayError(`${where}[${i}].role should be one of system, developer, user, assistant, tool but is ${JSON.stringify(role) ?? 'missing'}`);
    }
  });
  checkAsTheServiceWould(messages as Record<string, unknown>[], where);
  return messages as Record<string, unknown>[];
}

/**
 * Parses the conversation turn by turn, as the replay will send it, with the parser
 * `POST /v1/sessions/:id/messages` uses (content present and text, tool calls well formed, tool
 * messages answering an earlier call, no lone surrogate, ids unique per request), so a message
 * the service would reject with 400/422 stops the command before anything is sent. The parser's
 * `messages[k]` (an index in the turn) becomes the message's index in the session.
 * Limits of a particular service (text length, messages per request) are not checked here: a
 * rejection for those is reported during the run (see run-replay.ts).
 */
function checkAsTheServiceWould(messages: Record<string, unknown>[], where: string): void {
  sessionEvents(messages, (err, offset, count) => {
    const text = String((err as Error)?.message ?? err).replace(/\s*\n\s*/g, ' ');
    const m = /^messages\[(\d+)\](\S*):\s*(.*)$/.exec(text);
    if (m) throw new ReplayError(`${where}[${offset + Number(m[1])}]${m[2]}: ${m[3]}`);
    throw new ReplayError(`${where}[${offset}..${offset + count - 1}] (one turn) is not valid: ${text}`);
  });
}

/**
 * The session events the service makes of `messages` when they are appended turn by turn (one
 * event per message, in order; ids `replay-check-<k>` per turn, not the service's). A turn the
 * parser rejects goes to `onInvalid` (its error, the turn's first message index and length),
 * which must throw; without it the parser's error is thrown.
 */
export function sessionEvents(
  messages: readonly Record<string, unknown>[],
  onInvalid?: (err: unknown, offset: number, count: number) => never,
): SessionEvent[] {
  const knownCallNames = new Map<string, string>();
  // The service's tool-call rules (a tool message answers an earlier call, once), across turns.
  const ledger = ToolCallLedger.of([]);
  const all: SessionEvent[] = [];
  let offset = 0;
  for (const turn of splitTurns(messages)) {
    let events: SessionEvent[];
    try {
      events = openAiMessagesToEvents(turn, { knownCallNames, idPrefix: `replay-check-${offset}-` });
      events.forEach((e, k) => ledger.accept(e, k));
    } catch (caught) {
      // named as POST …/messages names it: messages[k].tool_call_id
      const err =
        caught instanceof SessionError && caught.location
          ? caught.restatedAt(`messages[${caught.location.index}]${openAiFieldPath(`.${caught.location.field}`)}`)
          : caught;
      if (onInvalid) onInvalid(err, offset, turn.length);
      throw err;
    }
    for (const e of events) {
      if (e.type === 'assistant') for (const call of e.toolCalls ?? []) knownCallNames.set(call.id, call.name);
    }
    all.push(...events);
    offset += turn.length;
  }
  return all;
}

/**
 * Checks the parsed JSON of a sessions file and returns its conversations.
 * @param source name used in error messages (the file path).
 * @throws ReplayError (one line) when the shape is wrong.
 */
export function parseSessions(data: unknown, source: string): ReplaySession[] {
  const expected = 'a JSON array of sessions ([{ task_id, traj: [messages] }]) or of message arrays ([[messages]])';
  if (!Array.isArray(data)) throw new ReplayError(`${source} is not ${expected}: its top level is ${describe(data)}`);
  if (data.length === 0) throw new ReplayError(`${source} holds no sessions (an empty array)`);
  return data.map((item, i) => {
    if (Array.isArray(item)) return { label: String(i), messages: checkMessages(item, `${source}: session [${i}]`) };
    if (typeof item === 'object' && item !== null && 'traj' in item) {
      const rec = item as Record<string, unknown>;
      const label = typeof rec.task_id === 'string' || typeof rec.task_id === 'number' ? String(rec.task_id) : String(i);
      return { label, messages: checkMessages(rec.traj, `${source}: session [${i}].traj`) };
    }
    throw new ReplayError(
      `${source} is not ${expected}: session [${i}] is ${describe(item)}${typeof item === 'object' && item !== null ? ' without a "traj" array' : ''}`,
    );
  });
}

/**
 * Reads and checks a sessions file.
 * @throws ReplayError (one line) when the file cannot be read, is not JSON, or has the wrong shape.
 */
export function loadSessionsFile(file: string): ReplaySession[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why = e.code === 'ENOENT' ? 'no such file' : e.code === 'EISDIR' ? 'it is a directory' : e.code === 'EACCES' ? 'permission denied' : e.message;
    throw new ReplayError(`cannot read ${file}: ${why}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ReplayError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  return parseSessions(data, file);
}

/**
 * Splits a conversation into turns: a user message and everything after it until the next user
 * message. Messages before the first user message (the system prompt) go with the first turn;
 * a conversation without a user message is one batch.
 */
export function splitTurns(messages: readonly Record<string, unknown>[]): Record<string, unknown>[][] {
  const turns: Record<string, unknown>[][] = [];
  let current: Record<string, unknown>[] = [];
  let seenUser = false;
  for (const m of messages) {
    if (m.role === 'user') {
      if (seenUser) {
        turns.push(current);
        current = [];
      }
      seenUser = true;
    }
    current.push(m);
  }
  if (current.length > 0) turns.push(current);
  return turns;
}
