import type { SessionEvent } from '@lib/compaction';
import { ToolCallConflictError, UnknownToolCallError } from '../errors';
import { ToolCallLedger } from './tool-call-ledger';

const call = (id: string, callId: string, name = 'f'): SessionEvent => ({
  id,
  type: 'assistant',
  text: null,
  toolCalls: [{ id: callId, name, arguments: '{}' }],
});
const user = (id: string): SessionEvent => ({ id, type: 'user', text: id });
const answer = (id: string, callId: string, name = 'f'): SessionEvent => ({ id, type: 'tool', responses: [{ toolCallId: callId, name, data: 'ok' }] });

describe('ToolCallLedger', () => {
  it('accepts reusing the id of an answered call, and the answer then belongs to the new call', () => {
    const ledger = ToolCallLedger.of([call('c1', 'x', 'first'), answer('t1', 'x', 'first')]);
    expect(() => ledger.accept(call('c2', 'x', 'second'), 0)).not.toThrow();
    expect(() => ledger.accept(answer('t2', 'x', 'second'), 1)).not.toThrow();
  });

  it('rejects a response to an unknown call, a second answer, a repeated or still-open id', () => {
    const ledger = ToolCallLedger.of([call('c1', 'x'), answer('t1', 'x'), call('c2', 'open')]);
    expect(() => ledger.accept(answer('t9', 'ghost'), 0)).toThrow(UnknownToolCallError);
    expect(() => ledger.accept(answer('t9', 'x'), 0)).toThrow(/already answered/);
    expect(() => ledger.accept(call('c9', 'open'), 0)).toThrow(/still waiting/);
    const twice: SessionEvent = {
      id: 'c9',
      type: 'assistant',
      text: null,
      toolCalls: [
        { id: 'y', name: 'f', arguments: '' },
        { id: 'y', name: 'f', arguments: '' },
      ],
    };
    expect(() => ledger.accept(twice, 0)).toThrow(ToolCallConflictError);
    // Errors say where: the event's index in the command and the native field at fault.
    expect(() => ledger.accept(twice, 3)).toThrow(expect.objectContaining({ location: { index: 3, field: 'toolCalls[1].id' } }));
    expect(() => ledger.accept(answer('t9', 'ghost'), 2)).toThrow(expect.objectContaining({ location: { index: 2, field: 'responses[0].toolCallId' } }));
    // A parallel answer event answering the same call twice.
    const double: SessionEvent = {
      id: 't8',
      type: 'tool',
      responses: [
        { toolCallId: 'open', name: 'f', data: '1' },
        { toolCallId: 'open', name: 'f', data: '2' },
      ],
    };
    expect(() => ledger.accept(double, 0)).toThrow(/already answered/);
  });

  it('takes a late answer to a call archived while open, attributing it to the compaction that archived the call', () => {
    const archived = new Map([['k1', { compactionId: 'cmp-1' }]]);
    const ledger = ToolCallLedger.of([answer('t0', 'x'), call('c2', 'x')], archived);
    expect(ledger.accept(answer('late', 'k1'), 0)).toEqual({ archivedBy: 'cmp-1' });
    // answered now: a second answer is a second answer
    expect(() => ledger.accept(answer('again', 'k1'), 1)).toThrow(/already answered/);
    // an answer to a window call is not archived
    expect(ledger.accept(answer('t2', 'x'), 2)).toEqual({});
  });

  it('refuses one event answering both an archived call and a call of the window', () => {
    const ledger = ToolCallLedger.of([call('c2', 'x')], new Map([['k1', { compactionId: 'cmp-1' }]]));
    const mixed: SessionEvent = {
      id: 't',
      type: 'tool',
      responses: [
        { toolCallId: 'x', name: 'f', data: '1' },
        { toolCallId: 'k1', name: 'f', data: '2' },
      ],
    };
    expect(() => ledger.accept(mixed, 0)).toThrow(/tool event of their own/);
  });

  it('knows archived answered calls from the ids the log holds: a second answer is a conflict, a newer call with the id takes it over', () => {
    const ledger = ToolCallLedger.of([user('u9')], new Map(), ['k2', 'k3']);
    expect(() => ledger.accept(answer('t1', 'k2'), 0)).toThrow(ToolCallConflictError);
    expect(() => ledger.accept(answer('t1', 'k2'), 0)).toThrow(/already answered \(the call and its answer were archived/);
    expect(() => ledger.accept(answer('t1', 'ghost'), 0)).toThrow(UnknownToolCallError);
    ledger.accept(call('c3', 'k3'), 0);
    expect(ledger.accept(answer('t3', 'k3'), 1)).toEqual({});
  });

  it('a newer call reusing the id of an archived open call takes the id over', () => {
    const ledger = ToolCallLedger.of([], new Map([['k1', { compactionId: 'cmp-1' }]]));
    ledger.accept(call('c3', 'k1'), 0);
    expect(ledger.accept(answer('t3', 'k1'), 1)).toEqual({});
  });
});
