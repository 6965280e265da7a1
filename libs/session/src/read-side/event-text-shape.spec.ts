/**
 * An assistant event stored without `text` (a native append of tool calls or a refusal only, as
 * the service stored it before `withTextField` was the stored shape) reads with `text: null` from
 * every read that returns events: the projected window (as bytes and as entries), the log (as
 * bytes and as objects) and the fold time travel and the write side use. The OpenAPI `WindowEvent`
 * requires `text` for user, assistant and system events (newcomer ncpolyglot F1).
 */
import type { SessionEvent } from '@lib/compaction';
import { foldSessionWindow, orderedWindow } from '../domain/session-window';
import { getWindow } from './queries/window-query';
import { getWindowJson } from './queries/window-json-query';
import { listLog, listLogJson } from './queries/session-log-query';
import { projectedReadModels } from './testing/projected-read-models';
import { RecordedSessionLog } from './testing/recorded-session-log';

describe('an assistant event stored without text reads with text null everywhere', () => {
  const log = new RecordedSessionLog('t');
  log.append('s', { id: 'u1', type: 'user', text: 'book a flight' });
  // Stored as the native route wrote it before: no `text` key at all.
  log.append('s', { id: 'c1', type: 'assistant', toolCalls: [{ id: 'k', name: 'book', arguments: '{}' }] } as unknown as SessionEvent);
  log.append('s', { id: 't1', type: 'tool', responses: [{ toolCallId: 'k', name: 'book', data: 'ok' }] });
  log.append('s', { id: 'r1', type: 'assistant', refusal: 'no' } as unknown as SessionEvent);
  const store = projectedReadModels(log);
  afterAll(() => store.close());

  const textOf = (events: Array<Record<string, unknown>>) => Object.fromEntries(events.map((e) => [e.id, Object.hasOwn(e, 'text') ? e.text : 'absent']));
  const expected = { u1: 'book a flight', c1: null, t1: 'absent', r1: null };

  it('in the projected window, as bytes (format=events) and as entries', async () => {
    const json = JSON.parse((await getWindowJson(store, 't', 's', 'cl100k_base'))!.toString('utf8')) as { events: Array<Record<string, unknown>> };
    expect(textOf(json.events)).toEqual(expected);
    const window = getWindow(store, 't', 's')!;
    expect(textOf(window.entries.map((e) => e.event as unknown as Record<string, unknown>))).toEqual(expected);
  });

  it('in the log, as bytes and as objects', () => {
    const events = (page: { events: Array<{ data: unknown }> }) => page.events.map((e) => (e.data as { event: Record<string, unknown> }).event);
    expect(textOf(events(JSON.parse(listLogJson(store, 't', 's')!.toString('utf8'))))).toEqual(expected);
    expect(textOf(events(listLog(store, 't', 's')! as unknown as { events: Array<{ data: unknown }> }))).toEqual(expected);
  });

  it('in the fold of the log (time travel, the write side)', () => {
    const state = foldSessionWindow(log.events);
    expect(textOf(orderedWindow(state).map((e) => e.event as unknown as Record<string, unknown>))).toEqual(expected);
  });
});
