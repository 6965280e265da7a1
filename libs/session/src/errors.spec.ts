import {
  CompactionNotFoundError,
  DuplicateEventIdConflictError,
  duplicateIdInRequest,
  InvalidRequestError,
  RevisionConflictError,
  SessionError,
  SessionNotFoundError,
  ToolCallConflictError,
  UnknownToolCallError,
  UserIdConflictError,
} from './errors';

describe('errors about one event of a command', () => {
  it('carry the event index and native field, and no request path until a transport restates them', () => {
    const err = new UnknownToolCallError({ index: 2, field: 'responses[0].toolCallId' }, 'k1');
    expect(err.location).toEqual({ index: 2, field: 'responses[0].toolCallId' });
    expect(err.details).toEqual({ toolCallId: 'k1' });
    expect(err.message).not.toMatch(/events\[|messages\[/);
  });

  it('restated at a request path: same class and code, the path as parameter and message prefix, the reason kept', () => {
    const err = new ToolCallConflictError({ index: 1, field: 'toolCalls[0].id' }, 'k', 'call id "k" is still waiting for its tool response');
    const restated = err.restatedAt('messages[1].tool_calls[0].id');
    expect(restated).toBeInstanceOf(ToolCallConflictError);
    expect(restated).toBeInstanceOf(SessionError);
    expect(restated.code).toBe('tool_call_conflict');
    expect(restated.message).toBe('messages[1].tool_calls[0].id: call id "k" is still waiting for its tool response');
    expect(restated.details).toEqual({ parameter: 'messages[1].tool_calls[0].id', toolCallId: 'k' });
    expect(restated.location).toBeUndefined();
    expect(err.location).toBeDefined();
  });

  it('an invalid request restated names its parameter; an error with a parameter already is left as it is', () => {
    const located = new InvalidRequestError({ index: 3, field: 'id' }, 'id "u1" appears twice in this request');
    expect(located.parameter).toBe('');
    expect(located.restatedAt('events[3].id').parameter).toBe('events[3].id');
    const named = new InvalidRequestError('sessionId', 'sessionId: use 1 to 128 letters');
    expect(named.restatedAt('elsewhere')).toBe(named);
    expect(named.details).toEqual({ parameter: 'sessionId' });
  });
});

describe('errors repeating a client value', () => {
  const long = 'x'.repeat(256);
  const bounded = `"${'x'.repeat(64)}…" (256 characters)`;

  it.each([
    ['session_not_found', new SessionNotFoundError(long)],
    ['compaction_not_found', new CompactionNotFoundError('s1', long)],
    ['duplicate_event_id', new DuplicateEventIdConflictError(long)],
    ['unknown_tool_call', new UnknownToolCallError('responses[0].toolCallId', long)],
    ['user_id_conflict', new UserIdConflictError(long, 'alice')],
    ['invalid_request', new InvalidRequestError('events[1].id', duplicateIdInRequest(long))],
  ])('%s: repeats at most 64 characters of it and its length', (_code, err) => {
    expect(err.message).toContain(bounded);
    expect(err.message).not.toContain('x'.repeat(65));
  });

  it('repeats a short value whole', () => {
    const uuid = '5dd76afd-8c70-5120-973c-2e236778c02c';
    expect(new CompactionNotFoundError('s1', uuid).message).toBe(`session "s1" has no compaction "${uuid}"`);
    expect(new CompactionNotFoundError('s1', uuid.toUpperCase()).message).toBe(`session "s1" has no compaction "${uuid.toUpperCase()}"`);
  });

  it('says so of an id that is not even a UUID (newcomer F4)', () => {
    expect(new CompactionNotFoundError('s1', 'c1').message).toBe(
      'session "s1" has no compaction "c1": it is not a compaction id: compaction ids are UUIDs such as "0f8e5e7a-3b1c-5d2e-9f4a-6b7c8d9e0f1a": take it from a compaction answer, the compaction history or a recall hit',
    );
  });
});

describe('409 wrong_expected_revision says what the session is, in words a client understands', () => {
  it.each([
    ['stream_exists', 'no_stream', /^expected the session to exist \(expectedRevision "stream_exists"\), but it has no events: .*"no_stream"/],
    ['3', 'no_stream', /^expected the session's last event at revision 3, but the session has no events: .*"no_stream"/],
    [
      'no_stream',
      '5',
      /^expected the session not to exist yet \(expectedRevision "no_stream"\), but its last event is at revision 5: read the session and retry with expectedRevision 5/,
    ],
    ['0', '3', /^expected revision 0 but the session's last event is at revision 3: read the session and retry with expectedRevision 3$/],
  ])('expected %s, actual %s', (expected, actual, message) => {
    const err = new RevisionConflictError(expected, actual);
    expect(err.code).toBe('wrong_expected_revision');
    expect(err.details).toEqual({ expected, actual });
    expect(err.message).toMatch(message);
    expect(err.message).not.toMatch(/is at no_stream/);
  });

  it.each([
    [
      'stream_exists',
      /^expected the session to exist \(expectedRevision "stream_exists"\), but it was erased at 2026-12-07T09:00:00\.000Z \(its content is gone; GET \/v1\/erasures lists the erasures\) and has no events since: .*"no_stream", to start it again$/,
    ],
    [
      '3',
      /^expected the session's last event at revision 3, but the session was erased at 2026-12-07T09:00:00\.000Z .* and has no events since: .*"no_stream", to start it again$/,
    ],
  ])('expected %s of a session erased and not written since: says when it was erased (newcomer ncfinal73 F1)', (expected, message) => {
    const erasedAt = '2026-12-07T09:00:00.000Z';
    const err = new RevisionConflictError(expected, 'no_stream', undefined, erasedAt);
    expect(err.details).toEqual({ expected, actual: 'no_stream', erasedAt });
    expect(err.message).toMatch(message);
  });
});

describe('404 session_not_found claims no more than the read models that found nothing know (newcomer confighints F4)', () => {
  it('says "no event was appended to it" only of read models at the log head; behind it, up to which position, and what to do', () => {
    expect(new SessionNotFoundError('s').message).toBe('session "s" does not exist: no event was appended to it (or it was erased)');
    expect(new SessionNotFoundError('s', undefined, undefined, false, { checkpoint: 41n, head: 57n }).message).toBe(
      'session "s" does not exist as of position 41 of the log, the last the read models applied (its head is 57): no event was appended to it up to there (or it was erased); ' +
        'events appended since, if any, are not applied yet: retry, or pass the position the append answered as minPosition to wait for them',
    );
    expect(new SessionNotFoundError('s', undefined, undefined, false, { checkpoint: 41n, head: null }).message).toMatch(
      /^session "s" does not exist as of position 41 of the log, the last the read models applied \(its head is unknown: the event store does not answer\): /,
    );
    const erased = new SessionNotFoundError('s', '2026-12-01T00:00:00.000Z', undefined, false, { checkpoint: 41n, head: 57n });
    expect(erased.message).toBe(
      'session "s" was erased at 2026-12-01T00:00:00.000Z (its content is gone; GET /v1/erasures lists the erasures) and has not been written since as of position 41 of the log, ' +
        'the last the read models applied (its head is 57); events appended since, if any, are not applied yet: retry, or pass the position the append answered as minPosition to wait for them',
    );
    expect(erased.details).toEqual({ erasedAt: '2026-12-01T00:00:00.000Z' });
  });
});
