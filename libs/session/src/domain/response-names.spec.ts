/**
 * Tool responses sent without a name are named after the call the tool-call rules pair them with,
 * in the state given: earlier in the append, an open call archived with its turn, or the latest
 * call with the id in the window.
 */
import type { SessionEvent } from '@lib/compaction';
import { emptySessionWindow, evolveSessionWindow, type SessionWindowState } from './session-window';
import { nameResponsesFromCalls } from './response-names';
import { CONVERSATION_EVENT } from '../events/session-stream-events';

const call = (id: string, callId: string, name: string): SessionEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: [{ id: callId, name, arguments: '{}' }],
});
const answer = (id: string, callId: string, name = ''): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name, data: 'r' }] });
const namesOf = (events: SessionEvent[]) => events.flatMap((e) => (e.type === 'tool' ? e.responses.map((r) => r.name) : []));

function stateOf(events: SessionEvent[], archivedOpen: Array<[string, string]> = []): SessionWindowState {
  const state = emptySessionWindow();
  events.forEach((event, i) =>
    evolveSessionWindow(state, { type: CONVERSATION_EVENT, data: { event, costs: { cl100k_base: 1, o200k_base: 1, chars: 1 } }, revision: BigInt(i) }),
  );
  for (const [id, name] of archivedOpen) state.archivedOpenCalls.set(id, { compactionId: 'cmp', name });
  return state;
}

describe('nameResponsesFromCalls', () => {
  it('names a response after the latest call with its id in the window', () => {
    const state = stateOf([call('c1', 'k', 'lookup'), answer('t1', 'k', 'lookup'), call('c2', 'k', 'book')]);
    expect(namesOf(nameResponsesFromCalls([answer('r', 'k')], state))).toEqual(['book']);
  });

  it('prefers a call earlier in the append, and an open call archived with its turn over the window', () => {
    const state = stateOf([call('c1', 'k', 'lookup')], [['a', 'archived-tool']]);
    expect(namesOf(nameResponsesFromCalls([call('c2', 'k', 'book'), answer('r', 'k')], state))).toEqual(['book']);
    expect(namesOf(nameResponsesFromCalls([answer('r', 'a')], state))).toEqual(['archived-tool']);
  });

  it('keeps a name sent with the response, and leaves a response with no call unnamed (the ledger refuses it)', () => {
    const state = stateOf([call('c1', 'k', 'lookup')]);
    expect(namesOf(nameResponsesFromCalls([answer('r', 'k', 'as-sent'), answer('s', 'nowhere')], state))).toEqual(['as-sent', '']);
    expect(namesOf(nameResponsesFromCalls([answer('r', 'k')], null))).toEqual(['']);
  });

  it('returns the events it does not rename as they are, and copies the others', () => {
    const events = [{ id: 'u', type: 'user', text: 'hi' } as SessionEvent, answer('r', 'k')];
    const named = nameResponsesFromCalls(events, stateOf([call('c1', 'k', 'lookup')]));
    expect(named[0]).toBe(events[0]);
    expect(named[1]).not.toBe(events[1]);
    expect(namesOf(events)).toEqual(['']);
  });
});
