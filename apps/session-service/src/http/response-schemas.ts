/**
 * Response shapes of the HTTP API as zod schemas, registered under their OpenAPI component names
 * in {@link apiSchemaRegistry}. The OpenAPI document's `components.schemas` is generated from this
 * registry ({@link apiComponentSchemas}), the controllers declare their answers with
 * {@link ApiAnswer}, and the contract tests parse real answers with these same schemas (objects
 * are strict: a field the code adds without declaring it fails them).
 *
 * Revisions and global positions are decimal strings (they may exceed 2^53); token figures are in
 * the estimator's unit (tokens, or UTF-16 code units for `chars`).
 */
import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';
import { z } from 'zod';
import { COMPACTION_FAILURE_KINDS, MAX_PARAMETER_VALUE, MAX_TRIGGER_DEPTH, MAX_TRIGGER_MEMBERS, type SessionEvent } from '@lib/compaction';
import { RECALL_SNIPPET_MAX_LENGTH, type OpenAiChatMessage, type SessionErrorDetails } from '@lib/session';
import { ALL_ERROR_CODES, API_ERROR_CODES, statusOfCode, type ApiErrorCode, type ErrorCodeInfo } from './error-codes';

/** The registry of named API schemas (component name in `id`). */
export const apiSchemaRegistry = z.registry<{ id: string; description?: string }>();

/**
 * Registers `schema` under the component name `id`, described by `description`; returns the
 * schema to use (a described copy: the JSON Schema conversion reads descriptions from zod's global
 * registry, where `.describe()` puts them).
 */
export function named<T extends z.ZodType>(id: string, schema: T, description?: string): T {
  const described = description ? schema.describe(description) : schema;
  apiSchemaRegistry.add(described, { id, ...(description ? { description } : {}) });
  return described;
}

const decimal = z.string().regex(/^\d+$/);
const isoTime = z.string().describe('ISO-8601 UTC date-time with milliseconds, as Date.toISOString writes it (2026-01-31T12:00:00.000Z)');
/** An event's `createdAt` as the window (time travel included) and recall answer it. */
const eventCreatedAt = z
  .string()
  .describe(
    "when the event was created: ISO-8601 UTC date-time with milliseconds, as Date.toISOString writes it (2026-01-31T12:00:00.123Z): the client's createdAt in UTC with digits past the millisecond cut (the log's data.createdAt keeps the text as sent; recall's from/to compare those digits), else when the store recorded the event",
  );
const count = z.number().int().min(0);
/** A failed pass's machine-readable kind (`COMPACTION_FAILURE_KINDS`; docs/configuration.md "Failure kinds"). */
const failureKind = z
  .enum(COMPACTION_FAILURE_KINDS)
  .describe(
    "the failure as a stable kind, for alerts and dashboards (the reason is for people): credentials (HTTP 401/403), model_not_found (404 or code model_not_found), rate_limited (429, a Retry-After or the endpoint's pause longer than the service waits), timeout, unreachable (the last attempt could not connect), connection_lost (after the request was sent, or while the answer arrived), endpoint_error (5xx, 408, 409), request_rejected (any other HTTP status), invalid_reply (malformed, blank, cut off, too long, not valid Unicode), refused (the model's refusal or content filter), aborted (shutdown or the caller's abort), call_limit (the pass needs more model calls than SUMMARIZER_MAX_CALLS_PER_PASS allows), other",
  );

/** A summarizer's `calls`: every HTTP request that reached the model endpoint (see `SummarizerUsage.calls`). */
const summarizerCalls = count.describe(
  'model calls made for the decision, discarded ones included: every HTTP request that reached the endpoint, retries of a failed attempt included (a timed-out or reset attempt too: it may be billed); an attempt that never connected (connection refused, host not found) is not counted',
);
/** Of a summarizer's `calls`, the retries. */
const summarizerRetries = count.describe('of calls, those that were a retry of a failed attempt (SUMMARIZER_MAX_RETRIES)');
/** Of a summarizer's `calls`, those with unknown tokens. */
const unreportedUsageCalls = count.describe(
  'of calls, those whose token usage the endpoint did not report (a failed attempt, or a reply whose usage is absent or unreadable): their tokens are unknown, not 0, and are not in the token figures',
);
/** The models the endpoint's replies named (see `answeredModelName`, `mergeAnsweredModels`). */
const answeredModels = z
  .array(z.string())
  .max(8)
  .describe(
    "the models the endpoint's replies named (each reply's model field, e.g. gpt-4o-2024-08-06 when model is gpt-4o), beside model, the one configured and sent: distinct, first seen first, at most 8; each trimmed, cut to 200 characters followed by … when longer, control characters and lone surrogates replaced by U+FFFD; a reply without a usable model (absent, not a string, blank) and a failed attempt add none; empty for the extractive summarizer and for decisions recorded before 2026-12-03",
  );
/** A summarizer's figures, flat, as the answer to a compaction carries them. */
const answerSummarizerFigures = {
  calls: summarizerCalls,
  promptTokens: count.describe('prompt tokens the endpoint reported (for the calls that reported usage)'),
  completionTokens: count.describe('completion tokens the endpoint reported (for the calls that reported usage)'),
  retries: summarizerRetries,
  unreportedUsageCalls,
  answeredModels,
};
/** `discardedSummarizerCalls` of a compaction's answer (and of its 404): the summarizer and the calls whose replies went into no decision. */
const discardedCallsSchema = z.strictObject({ kind: z.string(), model: z.string(), ...answerSummarizerFigures });
/** Summarizer figures as the reads show them: token figures under `usage` (see `summarizerFigures`). */
const readSummarizerFigures = {
  calls: summarizerCalls,
  retries: summarizerRetries,
  unreportedUsageCalls,
  usage: z
    .strictObject({ promptTokens: count, completionTokens: count })
    .describe('tokens the endpoint reported for the calls counted, discarded ones included (unreportedUsageCalls are not in them)'),
};

/** A new summary against its budget (see `SummaryBudgetUse` of `@lib/compaction`). */
const SummaryBudgetSchema = z
  .strictObject({
    tokens: count.describe("the summary's budget (maxSummaryTokens of its request), in the estimator's unit"),
    summaryTokens: count.describe("the summary's cost (its shadow prompt and text lines, as the window counts it), in the estimator's unit"),
    exceeded: z.boolean().describe('whether summaryTokens is over tokens'),
    overBudget: z
      .enum(['kept'])
      .nullable()
      .describe(
        'what the pass did with a summary over its budget: kept (stored whole as the summarizer wrote it, never cut nor refused; the pass saves that much less); null within the budget',
      ),
  })
  .describe("the new summary against its budget: the budget, the summary's cost, whether it exceeded it and what was done then");

export const EstimatorSchema = named(
  'Estimator',
  z.enum(['cl100k_base', 'o200k_base', 'chars']),
  'Token estimator: tokens of an OpenAI encoding, or UTF-16 code units (chars)',
);
export const EventTypeSchema = named('EventType', z.enum(['user', 'assistant', 'tool', 'system', 'summary']));

export const ErrorCodeSchema = named(
  'ErrorCode',
  z.enum(ALL_ERROR_CODES as [ApiErrorCode, ...ApiErrorCode[]]),
  [
    'Every error code the service answers (each route declares, per status, the ones it may answer); NATS answers carry the same codes and statuses:',
    ...ALL_ERROR_CODES.map((code) => {
      const info: ErrorCodeInfo = API_ERROR_CODES[code];
      return `- ${code} (${info.status}${info.transport === 'nats' ? ', NATS only' : ''}): ${info.description}`;
    }),
  ].join('\n'),
);

/** The details an error may add to `{ code, message }`: exactly {@link SessionErrorDetails}'s fields (this does not compile otherwise). */
const errorDetails = {
  parameter: z
    .string()
    .optional()
    .describe('the offending field, query parameter or header (a JSON path such as events[2].text, or a name such as X-Request-Id), for 400s'),
  expected: z
    .string()
    .optional()
    .describe('wrong_expected_revision: the expectedRevision the request sent (a revision as a decimal string, no_stream, stream_exists or any)'),
  actual: z.string().optional().describe("wrong_expected_revision: the session's last revision (decimal string), or no_stream when it has no events"),
  userId: z.string().optional().describe("user_id_conflict: the session's owner"),
  eventId: z.string().optional().describe('duplicate_event_id: the event id already used'),
  toolCallId: z.string().optional().describe('unknown_tool_call: the call id answered; tool_call_conflict: the call id repeated, reused or answered again'),
  deadlineMs: z
    .number()
    .optional()
    .describe(
      'counting_timeout with refusal deadline_passed: the deadline that passed, in ms (absent on a queue_full refusal: no deadline passed); counting_too_costly: the deadline the request ran past alone; request_expired: the write deadline (WRITE_DEADLINE_MS) its write did not start within',
    ),
  refusal: z
    .enum(['deadline_passed', 'queue_full'])
    .optional()
    .describe(
      'counting_timeout (always present): deadline_passed (the counting waited or ran past deadlineMs) or queue_full (refused at once: too many large texts were already waiting)',
    ),
  erasedAt: z
    .string()
    .optional()
    .describe(
      'session_not_found of every route that addresses one session (GET /v1/sessions/{sessionId}, its window, log, policy and compactions, POST …/compactions, PUT …/policy clearing it) for a session id that was erased (and not written since), and wrong_expected_revision with actual no_stream of such a session (an expectedRevision of its erased life): when its latest erasure was (ISO-8601 UTC, as DELETE answered it; GET /v1/erasures lists them); absent for an id never written',
    ),
  discardedSummarizerCalls: discardedCallsSchema
    .optional()
    .describe(
      'POST …/compactions refused after its pass called the summarizer: session_not_found (the session erased while the model ran; erasedAt then says when) or invalid_parameter naming strategy (without a strategy, the policy cleared while the model ran): those calls, served by the endpoint and billed, their replies in no decision; absent when it called none',
    ),
  minPosition: decimal.optional().describe('projection_behind: the position waited for'),
  checkpoint: decimal.optional().describe('projection_behind: the position the read models are at'),
  catchingUpTo: decimal.optional().describe("projection_behind while a process catches up at start: the log's head it waits for"),
  mayHaveBeenWritten: z
    .boolean()
    .optional()
    .describe(
      'store_unavailable (always present): true when the write was sent to the store and its outcome is unknown, so it may have been written: send the same request again unchanged (events with your own ids are then answered as the original, or written now); false when nothing was written: retry',
    ),
} satisfies { [K in keyof Required<SessionErrorDetails>]: z.ZodType<SessionErrorDetails[K]> };

export const ErrorBodySchema = named(
  'Error',
  z.strictObject({
    code: ErrorCodeSchema,
    message: z.string().describe('what went wrong and what to fix'),
    ...errorDetails,
  }),
  'Every error answer: { code, message } plus the details of some codes (parameter, expected, actual, userId, …)',
);

/**
 * The unit of every token figure (a window's cost, a strategy's or trigger's token parameter, a
 * compaction's tokens): the estimator's, as "Token costs" in docs/strategies-and-triggers.md says. `chars` counts UTF-16
 * code units, not the characters (Unicode code points) lengths are counted in.
 */
const ESTIMATOR_UNIT = "in the estimator's unit (tokens of cl100k_base or o200k_base; UTF-16 code units, not characters, with chars)";
/** {@link ESTIMATOR_UNIT} for a strategy's or trigger's parameter: the estimator is the compaction request's or the policy's. */
const PARAMETER_UNIT =
  "in the unit of the compaction's or the policy's estimator (tokens of cl100k_base or o200k_base; UTF-16 code units, not characters, with chars)";

/**
 * What each strategy parameter means and counts, for its description in the document (the request's
 * StrategyInput adds its default; the resolved Strategy says it alone). Real events are user,
 * assistant and tool events and notices (not the system message nor summaries); a turn starts at a
 * user event.
 */
export const STRATEGY_PARAMETER_MEANINGS = {
  maxEvents: 'real events (user, assistant, tool events and notices) kept: the newest, the cut moved to a turn start',
  maxTurns: 'turns kept (a turn starts at a user event): the newest, plus the preamble',
  maxTokens: `the kept window's budget, ${PARAMETER_UNIT}: the newest real events that fit in it once the pinned system message and summaries are counted`,
  maxEventsToKeep: 'real events kept verbatim: the newest, as sliding-window; the archived ones and old summaries become one new summary',
  overlapSize: 'kept real events (the oldest of them) sent to the summarizer as context, not summarized',
  keepTurns: 'turns kept verbatim (a turn starts at a user event): the newest',
  summarizeAtTokens: `the older part (current summaries plus the real events before the kept turns) is folded into one new summary once it costs more than this, ${PARAMETER_UNIT}; the new summary's budget is half of it`,
} as const;
const parameter = (name: keyof typeof STRATEGY_PARAMETER_MEANINGS, min = 1) =>
  z.number().int().min(min).max(MAX_PARAMETER_VALUE).describe(STRATEGY_PARAMETER_MEANINGS[name]);

export const StrategySchema = named(
  'Strategy',
  z.discriminatedUnion('type', [
    z.strictObject({ type: z.literal('sliding-window'), maxEvents: parameter('maxEvents') }),
    z.strictObject({ type: z.literal('turn-window'), maxTurns: parameter('maxTurns') }),
    z.strictObject({ type: z.literal('token-count'), maxTokens: parameter('maxTokens') }),
    z.strictObject({
      type: z.literal('recursive-summarization'),
      maxEventsToKeep: parameter('maxEventsToKeep'),
      overlapSize: parameter('overlapSize', 0),
      shadowPrompt: z.string(),
      systemPrompt: z.string(),
    }),
    z.strictObject({
      type: z.literal('rolling-summary'),
      keepTurns: parameter('keepTurns'),
      summarizeAtTokens: parameter('summarizeAtTokens'),
      shadowPrompt: z.string(),
      systemPrompt: z.string(),
    }),
  ]),
  'A compaction strategy with every parameter resolved (DESIGN §3.4)',
);

/** The members of an `any-of` / `all-of` trigger: 1 to {@link MAX_TRIGGER_MEMBERS} triggers (`parseTrigger`'s bounds; the depth is in {@link TriggerSchema}'s description). */
const triggerMembers = (meaning: string) =>
  z
    .array(TriggerSchema)
    .min(1)
    .max(MAX_TRIGGER_MEMBERS)
    .describe(`1 to ${MAX_TRIGGER_MEMBERS} triggers, nested at most ${MAX_TRIGGER_DEPTH} levels deep in all: ${meaning}`);

/**
 * A trigger as sent and as recorded (DESIGN §3.5); `any-of`/`all-of` nest, at most
 * {@link MAX_TRIGGER_DEPTH} levels (stated in the description: a JSON Schema of a recursive type
 * does not count its depth).
 */
export const TriggerSchema: z.ZodType<Trigger> = named(
  'Trigger',
  z.lazy(() =>
    z.discriminatedUnion('type', [
      z.strictObject({
        type: z.literal('turn-count'),
        maxTurns: z
          .number()
          .int()
          .min(1)
          .max(MAX_PARAMETER_VALUE)
          .describe('user turns: fires when the active window holds more than maxTurns user events (the turn in progress included)'),
      }),
      z.strictObject({
        type: z.literal('token-count'),
        threshold: z
          .number()
          .int()
          .min(1)
          .max(MAX_PARAMETER_VALUE)
          .describe(`fires when the active window (pinned system message, summaries and real events) costs at least threshold, ${PARAMETER_UNIT}`),
      }),
      z.strictObject({ type: z.literal('any-of'), triggers: triggerMembers('fires when at least one of them fires') }),
      z.strictObject({ type: z.literal('all-of'), triggers: triggerMembers('fires when every one of them fires') }),
    ]),
  ),
  `When a compaction may run (DESIGN §3.5); absent or null means always. any-of and all-of nest at most ${MAX_TRIGGER_DEPTH} levels deep (the trigger itself is level 1; an any-of or all-of on level ${MAX_TRIGGER_DEPTH} is 400 invalid_parameter)`,
);
type Trigger =
  | { type: 'turn-count'; maxTurns: number }
  | { type: 'token-count'; threshold: number }
  | { type: 'any-of'; triggers: Trigger[] }
  | { type: 'all-of'; triggers: Trigger[] };

export const PolicySchema = named(
  'Policy',
  z.strictObject({ strategy: StrategySchema, trigger: TriggerSchema.nullable(), estimator: EstimatorSchema, setAt: isoTime }),
  "A session's auto-compaction policy",
);

const toolCall = z.strictObject({ id: z.string(), name: z.string(), arguments: z.string().describe('raw JSON argument text') });
const textParts = z.array(z.string());
const toolResponse = z.strictObject({
  toolCallId: z.string(),
  name: z.string(),
  data: z.string(),
  dataParts: textParts.optional().describe('the result as it was sent in text parts (data is their concatenation), when it was'),
});
/** The fields an event keeps to render it as it came in (OpenAI `name` and text parts; `AsSent` in the domain). */
const asSent = {
  name: z.string().optional().describe('the participant name (OpenAI `name`), when it was sent with one'),
  textParts: textParts.optional().describe('the text as it was sent in text parts (text is their concatenation), when it was'),
};
const windowFields = {
  tokens: count.describe("the event's cost under the estimator"),
  revision: decimal.describe('stream revision of the event'),
  createdAt: eventCreatedAt,
  compactionId: z.string().optional().describe('for summaries: the compaction that wrote it'),
};
/**
 * An event of the window as stored (the domain's `SessionEvent`: every field an append keeps,
 * nothing else; metadata is in the log, not the window), plus its cost, revision and time.
 */
export const WindowEventSchema = named(
  'WindowEvent',
  z.discriminatedUnion('type', [
    z.strictObject({
      id: z.string(),
      type: z.literal('user'),
      text: z.string().nullable().describe('null only for events stored before the API refused it'),
      ...asSent,
      ...windowFields,
    }),
    z.strictObject({
      id: z.string(),
      type: z.literal('assistant'),
      text: z.string().nullable(),
      toolCalls: z.array(toolCall).optional(),
      refusal: z.string().optional().describe('a refusal the model gave instead of text (OpenAI `refusal`)'),
      ...asSent,
      ...windowFields,
    }),
    z.strictObject({
      id: z.string(),
      type: z.literal('tool'),
      responses: z.array(toolResponse),
      name: z.string().optional().describe('the `name` of the tool message as sent (OpenAI), when it was'),
      ...windowFields,
    }),
    z.strictObject({
      id: z.string(),
      type: z.literal('system'),
      text: z.string().nullable().describe('null only for events stored before the API refused it'),
      notice: z.boolean().optional().describe('true for a notice (DESIGN §3.1): a message injected into the conversation, never pinned'),
      ...asSent,
      ...windowFields,
    }),
    z.strictObject({ id: z.string(), type: z.literal('summary'), shadowPrompt: z.string(), text: z.string(), ...windowFields }),
  ]),
  'An event of the active window in the native shape (as appended: name, textParts, refusal, notice, dataParts when it was sent with them), with its cost and revision',
);

/** Message content as rendered: a string, or text parts when it was sent in parts. */
const content = z.union([z.string(), z.array(z.strictObject({ type: z.literal('text'), text: z.string() }))]);
const messageName = z.string().optional().describe('the participant name as sent; "notice" on a system message marks a notice (DESIGN §3.1)');
export const OpenAiMessageSchema = named(
  'OpenAiMessage',
  z.discriminatedUnion('role', [
    z.strictObject({ role: z.literal('system'), content, name: messageName }),
    z.strictObject({ role: z.literal('user'), content, name: messageName }),
    z.strictObject({
      role: z.literal('assistant'),
      content: content.nullable().describe('null only when tool_calls or refusal is present'),
      tool_calls: z
        .array(z.strictObject({ id: z.string(), type: z.literal('function'), function: z.strictObject({ name: z.string(), arguments: z.string() }) }))
        .optional(),
      refusal: z.string().optional(),
      name: messageName,
    }),
    z.strictObject({ role: z.literal('tool'), tool_call_id: z.string(), content, name: messageName }),
  ]),
  'A chat message in the OpenAI shape (as rendered by format=openai): content as it was sent (a string, or text parts), name and refusal when sent',
);

/** True when `A` and `B` are the same type. */
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type WithoutWindowFields<E> = E extends unknown ? Omit<E, keyof typeof windowFields> : never;
// The window's events are the stored events and the openai window's messages the rendered ones, field for field: a field the
// domain adds to either does not compile until the schema declares it (the window once answered undeclared fields).
const _windowEventsAreSessionEvents: Same<WithoutWindowFields<z.output<typeof WindowEventSchema>>, SessionEvent> = true;
const _openAiMessagesAreRendered: Same<z.output<typeof OpenAiMessageSchema>, OpenAiChatMessage> = true;
void _windowEventsAreSessionEvents;
void _openAiMessagesAreRendered;

const windowHead = {
  sessionId: z.string(),
  revision: decimal.describe(
    'the revision whose window this is: the last one, or with atRevision that revision (with atTime resolved.revision), or the last revision of the atomic decision it falls inside (a compaction, a late answer archived on arrival)',
  ),
  resolved: z
    .strictObject({
      revision: decimal.describe('the revision of the last event the store recorded at or before atTime'),
      recordedAt: isoTime.describe(
        "that event's recordedAt (when the store recorded it), at or before atTime: ISO-8601 UTC with milliseconds, as Date.toISOString writes it",
      ),
    })
    .optional()
    .describe('with atTime only: the event atTime resolved to; the window is the one right after it (revision is past it when it falls inside a decision)'),
  tokens: count.describe(
    'cost of the window under the estimator: with format=events the sum of the events’ tokens; with format=openai the cost of the messages (placeholder answers counted as the tool event they stand for, superseded system messages and responses left out not counted)',
  ),
  estimator: EstimatorSchema,
};
export const WindowSchema = named(
  'Window',
  z.union([z.strictObject({ ...windowHead, events: z.array(WindowEventSchema) }), z.strictObject({ ...windowHead, messages: z.array(OpenAiMessageSchema) })]),
  'The active window: events (format=events, the default) or messages (format=openai)',
);

export const AppendResultSchema = named(
  'AppendResult',
  z.strictObject({
    revision: decimal.describe("the session's revision after the append"),
    position: decimal.describe('global position of the last event written: pass it as minPosition'),
  }),
);

export const CompactionAnswerSchema = named(
  'CompactionAnswer',
  z.strictObject({
    compactionId: z
      .string()
      .optional()
      .describe(
        'present when the decision is recorded (compacted, failed, an automatic noop whose trigger still fires, and a noop of a pass that discarded model calls): the id in the compaction history',
      ),
    outcome: z.enum(['compacted', 'noop', 'not-triggered', 'conflict', 'failed']),
    archived: z.array(z.string()),
    kept: z.array(z.string()),
    summary: z
      .strictObject({
        id: z.string(),
        text: z.string(),
        shadowPrompt: z.string(),
        insertBeforeId: z.string(),
        coveredIds: z.array(z.string()),
        tokens: count.describe(`the new summary's cost (its shadow prompt and text lines, as the window counts it), ${ESTIMATOR_UNIT}`),
      })
      .optional(),
    tokensBefore: count.describe(`cost of the window before the pass, ${ESTIMATOR_UNIT}`),
    tokensAfter: count.describe(
      `cost of the window after the pass, ${ESTIMATOR_UNIT}; in a dry run with pendingSummary, without the summary not yet written (a real pass adds its cost)`,
    ),
    tokensEstimatedSaved: z
      .number()
      .int()
      .describe(
        `cost of the archived events minus cost of the new summary, floored at 0 (DESIGN §3.6), ${ESTIMATOR_UNIT}: a summary that costs more than what it replaces gives 0 and a tokensAfter above tokensBefore; a dry run with pendingSummary counts no summary, so it is an upper bound`,
      ),
    revision: decimal,
    position: decimal.describe(
      "global position of the log state the answer stands on, in every answer: the decision's last event (written, or recorded earlier when replayed); for an answer that writes nothing (noop, not-triggered, conflict, dry run), the session's last event it was decided on (with a store that does not tell that event's position, the log's head after the pass, at or past it). Pass it as minPosition to read a window that includes what the answer saw, through any replica",
    ),
    estimator: EstimatorSchema,
    dryRun: z.boolean(),
    from: z
      .literal('policy')
      .optional()
      .describe(
        "present when the request named no strategy: the pass used the strategy, trigger and estimator of the session's stored policy as in force on the state it was decided on (the compaction history's item shows them); absent when the request named its own",
      ),
    policyRevision: decimal
      .optional()
      .describe(
        "with from: the revision of that policy's event (GET …/policy's revision); absent when not known (a policy set before the session's last compaction, which predates 2026-11-30)",
      ),
    recorded: z
      .boolean()
      .describe(
        'whether the decision is in the log and the compaction history (compacted and failed passes; a noop when automatic with its trigger still firing, once per wait period, or when its pass discarded model calls, recorded with them, except while an automatic pass waits for growth)',
      ),
    replayed: z
      .boolean()
      .optional()
      .describe(
        'true when the decision was already in the log for the same input (e.g. the same compaction sent twice at once): answered as recorded, nothing new written',
      ),
    failure: z
      .strictObject({
        stage: z.literal('summarize'),
        reason: z.string(),
        failureKind: failureKind
          .nullable()
          .describe(
            'the failure as a stable kind (see CompactionHistoryItem); null only for a replayed failure recorded before failures carried one (2026-12-04)',
          ),
      })
      .optional(),
    reason: z.enum(['within-limit', 'newest-turn-only', 'open-tool-call']).optional().describe('with outcome noop: why nothing was archived (DESIGN §3.6)'),
    toolCallId: z.string().optional().describe('with reason open-tool-call: the call that held the cut back'),
    eventId: z.string().optional().describe('with reason open-tool-call: the assistant event holding that call'),
    triggerStillFires: z.boolean().optional().describe('with a trigger: whether it still fires on the window after the pass (DESIGN §3.5)'),
    turnsAfter: count
      .optional()
      .describe(
        'user events in the window after the pass, with triggerStillFires; absent when the decision was written on top of events appended while the pass ran (no growth wait follows it)',
      ),
    summaryBudget: SummaryBudgetSchema.optional().describe(
      'with a new summary (written, or replayed from a decision recorded since 2026-12-03): its budget, its cost, whether it exceeded the budget and what was done then',
    ),
    pendingSummary: z
      .strictObject({
        insertBeforeId: z.string(),
        coveredIds: z.array(z.string()),
        modelCalls: z
          .strictObject({
            planned: count.describe(
              'model calls the pass would make as planned now, one per chunk of SUMMARIZER_MAX_INPUT_TOKENS (replies longer than planned may add some; retries aside)',
            ),
            max: count.describe('SUMMARIZER_MAX_CALLS_PER_PASS: a pass planned over it fails call_limit before its first call'),
          })
          .optional()
          .describe("with a model summarizer: the preview of the pass's cost in calls (absent with the extractive summarizer)"),
      })
      .optional()
      .describe('dry run of a summarizing pass: where the summary would go and what it would cover (no summarizer is called)'),
    summarizer: z
      .strictObject({
        kind: z.string(),
        model: z.string(),
        ...answerSummarizerFigures,
        discarded: z
          .strictObject(answerSummarizerFigures)
          .optional()
          .describe(
            'the part of the figures above spent on calls whose replies the pass did not use (it was planned again after the session moved on); absent when none',
          ),
      })
      .optional()
      .describe('the summarizer recorded with the decision answered: every model call made for it, summed (discarded ones included)'),
    discardedSummarizerCalls: discardedCallsSchema
      .optional()
      .describe(
        "model calls this request's pass made whose replies went into no decision it wrote (the session moved on while the summarizer ran and the pass was planned again: then it may call again, or answer not-triggered, noop or conflict; or another pass recorded the same compaction first: replayed); present whenever there were any, also when nothing is written; a noop that follows them is recorded with them as its summarizer (and in the 404 session_not_found of a pass whose session was erased while the summarizer ran)",
      ),
  }),
  'The answer to POST …/compactions',
);

/** Who ordered a command (`RequestedBy`): recorded in commanded compaction decisions, erasure records and policy events. */
export const RequestedBySchema = named(
  'RequestedBy',
  z.strictObject({
    keyLabel: z
      .string()
      .optional()
      .describe('the API key that sent it, by its position in API_KEYS (API_KEYS#2: the second entry), never the key; absent in open mode (no keys)'),
    requestId: z
      .string()
      .optional()
      .describe("HTTP: the request's id (the client's X-Request-Id when usable, else one the service made); NATS: the command's id"),
    requestIdFrom: z
      .enum(['client', 'service'])
      .optional()
      .describe(
        "HTTP: who chose requestId: client (the request's X-Request-Id, whatever the client sent) or service (a UUID the service made for a request without one; before 2026-12-05 also for one it could not use); absent over NATS and in records written before it was",
      ),
    via: z.enum(['http', 'nats']).describe('the transport that carried the command'),
  }),
);

/**
 * The one shape of a session's policy: `GET …/policy` answers it, so does `PUT …/policy` (HTTP and
 * NATS), and a `PUT` accepts it back as it is (its read-only fields ignored), which sets the same
 * policy (nothing written: the same answer).
 */
const policyFields = {
  sessionId: z.string(),
  strategy: StrategySchema.nullable().describe('the strategy in force; null: no policy (never set, or cleared)'),
  trigger: TriggerSchema.nullable().describe('null: the policy fires always, or there is no policy'),
  estimator: EstimatorSchema.nullable().describe('the estimator of the policy in force; null when there is no policy'),
  setAt: isoTime.optional().describe('read-only: when the policy event in force (a clear included) was written; absent when no policy was ever set'),
  revision: decimal.describe("read-only: stream revision of the policy event in force; the session's revision when no policy was ever set"),
  requestedBy: RequestedBySchema.nullable().describe(
    'read-only: who wrote the policy event in force, set or clear (API key label, request id, transport; never the key); a PUT of the policy already in force writes nothing and answers the one who set it; null when no policy was ever set, and for a policy event written before 2026-12-07',
  ),
};

export const SessionPolicySchema = named(
  'SessionPolicy',
  z.strictObject({
    ...policyFields,
    position: decimal
      .optional()
      .describe(
        'read-only: global position of the policy event in force: pass it as minPosition to read the session once it is projected; absent when no policy was ever set',
      ),
  }),
  'The auto-compaction policy of a session (strategy, trigger and estimator null: none), as GET …/policy and PUT …/policy answer it and PUT …/policy accepts it',
);

/** The answer to `PUT …/policy`: the {@link SessionPolicySchema} shape, whose `position` it always carries. */
export const SessionPolicyAnswerSchema = named(
  'SessionPolicyAnswer',
  z.strictObject({
    ...policyFields,
    position: decimal.describe(
      "read-only: global position of the policy event in force (when no policy was ever set, of the session's last event): pass it as minPosition to read the session once it is projected",
    ),
  }),
  'The answer to PUT …/policy: the auto-compaction policy of the session as GET …/policy answers it (PUT …/policy accepts it back), its position always given',
);

export const SessionSummarySchema = named(
  'SessionSummary',
  z.strictObject({
    sessionId: z.string(),
    userId: z.string().nullable(),
    revision: decimal.describe("revision of the session's last event"),
    lastPosition: decimal.describe("global position of the session's last event (the list's activity order)"),
    eventCount: count.describe('conversation events ever appended, archived included'),
    windowEvents: count.describe('events in the active window'),
    windowTokens: count.describe(
      "size of the active window under estimator: the estimator query parameter, cl100k_base when absent (not the session policy's estimator, policy.estimator)",
    ),
    estimator: EstimatorSchema,
    compactionCount: count.describe(
      'recorded compactions with outcome compacted; a failed pass counts in failedCompactionCount only, also one that archived superseded system messages (and so changed the window)',
    ),
    failedCompactionCount: count,
    noopCompactionCount: count.describe(
      'recorded passes that could archive nothing (outcome noop): automatic passes while the policy trigger still fired (at most one per wait period, DESIGN §3.5), and passes that discarded model calls before finding nothing to archive (recorded with those calls)',
    ),
    triggerStillFires: z
      .boolean()
      .nullable()
      .describe(
        'whether the last recorded pass that completed (compacted or noop) left its trigger firing: true for a policy that cannot be met (automatic passes then wait until the window grows by a quarter of the threshold or turn limit); null when none was recorded or it had no trigger',
      ),
    summarizerSpend: z
      .strictObject({
        ...readSummarizerFigures,
        discarded: z
          .strictObject(readSummarizerFigures)
          .describe('the part of the figures above spent on replies the passes did not use (they were planned again after the session moved on)'),
      })
      .describe(
        "what the session's recorded compaction decisions spent on the summarizer: the summarizer figures of every decision in its compaction history, summed (zeros when none called one); a pass that recorded no decision is not in it (a commanded pass's calls are in its answer's discardedSummarizerCalls; an automatic pass has no answer: /metrics alone counts its calls, origin auto, without a session); an erasure removes these totals with the history, /metrics keeps its aggregate counters (no session ids in them)",
      ),
    policy: PolicySchema.nullable(),
    createdAt: isoTime,
    lastActivityAt: isoTime,
  }),
  'One session as the audit list shows it',
);

export const SessionListSchema = named(
  'SessionList',
  z.strictObject({ sessions: z.array(SessionSummarySchema), nextCursor: z.string().optional().describe('present when more follow: pass it as cursor') }),
  "A page of the tenant's sessions, newest activity first",
);

/** What `erasedEvents` counts (the erasure answer and the erasure list). */
const ERASED_EVENTS =
  "events of the session's stream the deletion removed (its revisions, lastRevision − firstRevision + 1): conversation events and also the compaction decisions' events (archives, summaries, completion and failure records) and policy events, so more than the session summary's eventCount once it was compacted or had a policy";

export const ErasureSchema = named(
  'Erasure',
  z.strictObject({
    sessionId: z.string().describe('the erased session id'),
    erasedAt: isoTime.describe('ISO-8601 UTC time of the erasure (as DELETE answered it)'),
    erasedEvents: z.number().int().min(0).describe(ERASED_EVENTS),
    firstRevision: decimal
      .nullable()
      .describe(
        "first revision of the erased life: 0, or the revision after the session id's previous erased life; null for a record written before records named their last revision",
      ),
    lastRevision: decimal
      .nullable()
      .describe('last revision of the erased life (the session id written again continues after it); null for a record written before records named it'),
    position: decimal.describe('global position of the erasure record in the log'),
    requestedBy: RequestedBySchema.nullable().describe('who ordered the erasure (never the API key itself); null for a record written before records kept it'),
  }),
  'What is left of an erased session life: no content, only who, when, how many events and which revisions',
);

export const ErasureListSchema = named(
  'ErasureList',
  z.strictObject({ erasures: z.array(ErasureSchema), nextCursor: z.string().optional().describe('present when more follow: pass it as cursor') }),
  "A page of the tenant's erasures, newest first",
);

export const ArchivedOnArrivalSchema = named(
  'ArchivedOnArrival',
  z.strictObject({
    eventId: z.string().describe('client id of the event archived on arrival (a late answer to a call the compaction archived)'),
    revision: decimal.describe('revision of the EventsArchived (onArrival: true) that archived it, in the log after the decision'),
    position: decimal.describe('global position of that EventsArchived'),
    at: isoTime.describe('ISO-8601 UTC time that EventsArchived was recorded'),
  }),
  'An event archived on arrival, attributed to a compaction (DESIGN §3.3 rule 3): recorded by the append that brought it, after the decision',
);

export const CompactionHistoryItemSchema = named(
  'CompactionHistoryItem',
  z.strictObject({
    compactionId: z.string(),
    outcome: z
      .enum(['compacted', 'noop', 'failed'])
      .describe(
        'compacted: the window changed; noop: a pass that could archive nothing, recorded when automatic with its trigger still firing (once per wait period, DESIGN §3.5) or when it discarded model calls first (its summarizer holds them; commanded noops are recorded only then); failed',
      ),
    reason: z
      .enum(['within-limit', 'newest-turn-only', 'open-tool-call'])
      .nullable()
      .describe('with outcome noop: why nothing was archived (DESIGN §3.6); null otherwise'),
    toolCallId: z
      .string()
      .nullable()
      .describe("with reason open-tool-call: the tool call whose turn held the cut back (as the pass's answer named it); null otherwise"),
    eventId: z.string().nullable().describe('with reason open-tool-call: the assistant event holding that call; null otherwise'),
    origin: z.enum(['command', 'auto']),
    requestedBy: RequestedBySchema.nullable().describe(
      'with origin command: who ordered it; null for automatic passes (their trigger says why) and for decisions recorded before it was',
    ),
    from: z
      .enum(['request', 'policy'])
      .describe(
        "where strategy, trigger and estimator came from: policy for the session's stored policy (every automatic pass, and a compaction commanded without a strategy), request when the command named them",
      ),
    policyRevision: decimal
      .nullable()
      .describe(
        "with from policy (every automatic pass, and a compaction commanded without a strategy): the revision of the policy event the pass was decided on (GET …/policy's revision); null for a compaction that named its strategy, when not known, and for automatic passes recorded before 2026-12-05 (they recorded none)",
      ),
    strategy: StrategySchema,
    trigger: TriggerSchema.nullable(),
    estimator: EstimatorSchema,
    basedOnRevision: decimal.describe("revision of the session's last event when the pass was planned (the window its strategy and summarizer saw)"),
    revision: decimal.describe("revision of the decision's last event"),
    position: decimal.describe("global position of the decision's last event"),
    tokensBefore: count.describe(
      `window tokens just before the decision was written (the revision before its first event), ${ESTIMATOR_UNIT} (the item's estimator): the window it replaced, the compaction diff's before; later than basedOnRevision's when appends landed while the summarizer ran and the pass was re-based onto them (DESIGN §4)`,
    ),
    tokensAfter: count.describe(
      `window tokens after the decision, ${ESTIMATOR_UNIT}, as the POST answer and the diff say; for a failure, the window it left (smaller than tokensBefore when it archived superseded system messages; tokensBefore for a failure recorded before 2026-12-03)`,
    ),
    tokensSaved: z
      .number()
      .int()
      .describe(`tokensBefore minus tokensAfter as the pass estimated it (the POST answer's tokensEstimatedSaved), ${ESTIMATOR_UNIT}`),
    archivedIds: z
      .array(z.string())
      .describe(
        'ids the decision archived at its revision, in order (old summaries and superseded system messages included): what its counts and tokens describe',
      ),
    archivedOnArrival: z
      .array(ArchivedOnArrivalSchema)
      .describe(
        "events archived on arrival attributed to this compaction, in log order: late answers to calls it archived, each archived afterwards by the append that brought it. archivedIds and these eventIds are together the log's events archived by this compaction (archivedBy)",
      ),
    archivedBecause: z
      .strictObject({
        strategyCut: z.array(z.string()).describe("real events before the strategy's own cut (DESIGN §3.4)"),
        turnStart: z
          .array(z.string())
          .describe(
            "real events the strategy's cut kept, archived because the cut moved forward to the next user event (DESIGN §3.3.1; token-count's leading preamble too)",
          ),
        supersededSystem: z.array(z.string()).describe('stored system messages a newer one replaced (DESIGN §3.2): never sent to the model after it'),
        replacedSummaries: z.array(z.string()).describe('summaries folded into the new one'),
      })
      .nullable()
      .describe(
        'why each of archivedIds left the window: a partition of them, log order in each; a failure archives superseded system messages only. null when the pass archived nothing, and for a completed decision recorded before 2026-12-06',
      ),
    plannedArchivedIds: z
      .array(z.string())
      .nullable()
      .describe(
        'for a failure: what the pass planned to archive, the superseded system messages and the events it sent the summarizer, log order; null otherwise, when it planned nothing more than archivedIds, and for a failure recorded before 2026-12-06',
      ),
    keptCount: count
      .nullable()
      .describe('events in the window after the pass (for a failure: the window it left); null only for a failure recorded before 2026-12-03'),
    summary: z.strictObject({ id: z.string(), text: z.string(), coveredIds: z.array(z.string()) }).nullable(),
    summarizer: z
      .strictObject({
        kind: z.string(),
        model: z.string(),
        ...readSummarizerFigures,
        answeredModels,
        discarded: z
          .strictObject({
            calls: count,
            retries: count,
            unreportedUsageCalls: count,
            usage: z.strictObject({ promptTokens: count, completionTokens: count }),
            answeredModels,
          })
          .nullable()
          .describe(
            'the part of calls and usage whose replies the pass did not use (it was planned again after the session moved on while the summarizer ran); null when none, and for decisions recorded before it was',
          ),
      })
      .nullable(),
    summaryBudget: SummaryBudgetSchema.nullable().describe(
      'with a new summary: its budget, its cost, whether it exceeded the budget and what was done then (overBudget kept); null without a summary, and for decisions recorded before 2026-12-03',
    ),
    durationMs: z
      .number()
      .min(0)
      .nullable()
      .describe(
        'wall time of the pass in milliseconds, from its start to its decision (for a failure: to the failure, the summarizer attempts, retries and timeouts included); null for a failure recorded before failures carried it',
      ),
    at: isoTime.describe(
      "ISO-8601 UTC, milliseconds: when the pass completed or failed, by the deciding replica's process clock, read just before its append: not ordered with the log, usually a few milliseconds before recordedAt; time travel (atTime) does not go by it, use recordedAt",
    ),
    recordedAt: isoTime.describe(
      "ISO-8601 UTC, milliseconds: when the store recorded the decision's last event (its recordedAt in GET …/events, the time its timeline row shows): the clock time travel goes by, so …/window?atTime=<recordedAt> answers the window right after this decision, as atRevision=<revision> does (unless an event after it was recorded in the same millisecond: then the window after that one, which the answer's resolved names)",
    ),
    triggerStillFires: z
      .boolean()
      .nullable()
      .describe('with a trigger: whether it still fires after the pass (DESIGN §3.5); null without a trigger or for failures'),
    failure: z
      .strictObject({
        stage: z.enum(['summarize', 'append']),
        reason: z.string().describe('why it failed, for people: the fault and what to check, never message text nor a key'),
        failureKind: failureKind.nullable(),
      })
      .nullable()
      .describe('for a failed pass: its stage, reason and failureKind (null for a failure recorded before failures carried one, 2026-12-04); null otherwise'),
  }),
  'One recorded compaction decision',
);

export const CompactionHistoryPageSchema = named(
  'CompactionHistoryPage',
  z.strictObject({ sessionId: z.string(), compactions: z.array(CompactionHistoryItemSchema), nextCursor: z.string().optional() }),
  'A page of the compaction history, oldest first',
);

const diffEntry = z.strictObject({
  id: z.string(),
  type: EventTypeSchema,
  revision: decimal,
  tokens: count,
  change: z.enum(['archived', 'kept', 'added']),
  preview: z.string(),
});
const diffWindow = z.strictObject({ revision: decimal, tokens: count, events: z.array(diffEntry) });
export const CompactionDiffSchema = named(
  'CompactionDiff',
  z.strictObject({
    sessionId: z.string(),
    compactionId: z.string(),
    estimator: EstimatorSchema,
    recordedAt: isoTime.describe(
      "ISO-8601 UTC, milliseconds: when the store recorded the decision's last event (the history item's recordedAt): …/window?atTime=<recordedAt> answers the after window (unless an event after it was recorded in the same millisecond)",
    ),
    before: diffWindow.describe("the window just before the decision's first event"),
    after: diffWindow.describe("the window just after the decision's last event"),
    archivedIds: z.array(z.string()).describe('ids in before and not in after, window order'),
    addedIds: z.array(z.string()).describe('ids in after and not in before (the summary), window order'),
    archivedOnArrival: z
      .array(ArchivedOnArrivalSchema)
      .describe("the compaction's late answers archived on arrival after it (as in its history item): in neither window"),
  }),
  'The window before and after one compaction, computed from the log',
);

export const LogPageSchema = named(
  'LogPage',
  z.strictObject({
    sessionId: z.string(),
    revision: decimal,
    events: z.array(
      z.strictObject({
        revision: decimal,
        position: decimal,
        type: z
          .string()
          .describe('ConversationEventAppended, EventsArchived, SummaryInserted, CompactionCompleted, CompactionFailed, AutoCompactionPolicySet, …'),
        eventId: z.string().optional(),
        kind: EventTypeSchema.optional(),
        compactionId: z.string().optional(),
        archived: z.boolean().optional(),
        archivedBy: z.string().optional(),
        data: z.record(z.string(), z.unknown()).describe("the event's payload, verbatim"),
        recordedAt: isoTime,
      }),
    ),
    nextRevision: decimal.optional().describe('present when more events follow: pass it as fromRevision'),
  }),
  "A page of a session's full log",
);

export const RecallPageSchema = named(
  'RecallPage',
  z.strictObject({
    items: z.array(
      z.strictObject({
        sessionId: z.string(),
        eventId: z.string(),
        type: EventTypeSchema,
        revision: z
          .string()
          .regex(/^\d+$/)
          .describe("the event's revision in its session (decimal digits): its place in GET …/events, and the window it is in with …/window?atRevision="),
        snippet: z
          .string()
          .describe(
            `HTML-escaped excerpt around the first match, matched words wrapped in <mark>…</mark> as whole grapheme clusters: at most ${RECALL_SNIPPET_MAX_LENGTH} characters (code points, … included, tags and escapes not), cut between grapheme clusters, … where cut`,
          ),
        score: z
          .number()
          .describe(
            "relevance, higher is better: with order relevance the hit's BM25 (SQLite FTS5's, k1 1.2, b 0.75, minus its rank) over the query's ranked words, a positive number with no fixed scale or upper bound (not 0 to 1), comparable within one query and its cursor's pages only; 0 with order newest or oldest",
          ),
        archived: z.boolean(),
        compactionId: z.string().optional(),
        createdAt: eventCreatedAt,
        firstMention: z
          .literal(true)
          .optional()
          .describe(
            "with sessionId: the session's earliest matching real event (a user, assistant or tool event or a notice; not a stored system message nor a summary), answered first; the same event whatever the other filters (type, archived, compactionId, from/to): absent when they leave it out",
          ),
      }),
    ),
    nextCursor: z
      .string()
      .optional()
      .describe(
        'present when more hits may follow: pass it as cursor (the next pages keep this paging: the hits as of its first page, each once, in its order)',
      ),
    order: z
      .enum(['relevance', 'newest', 'oldest'])
      .describe(
        "relevance: BM25, best first (words found in more than 2,000 events must occur but do not score); newest: every word is found in more than 2,000 events, newest first, score 0; oldest: only 1–2 character words of an unspaced script or emoji (substring matches), oldest first, score 0. A cursor's pages keep the first page's order",
      ),
  }),
  'A page of recall hits in `order` (with sessionId, the first mention first)',
);

export const EraseAnswerSchema = named(
  'EraseAnswer',
  z.strictObject({
    sessionId: z.string(),
    erasedEvents: count.describe(ERASED_EVENTS),
    erasedAt: isoTime,
    position: decimal.describe(
      'global position of the erasure record: pass it as minPosition to a read on another replica, which answers once its read models no longer hold the session (this replica already does)',
    ),
  }),
);

export const HealthSchema = named(
  'Health',
  z.strictObject({
    status: z
      .enum(['ok', 'degraded', 'unavailable'])
      .describe(
        "unavailable: the store does not answer (store.error) or holds another log than the read models, or the read models were found damaged (readModels.damaged) or cannot be written because their disk is full or their file cannot be read or written (readModels.full); degraded: it answers reads but the last write failed (store.lastWriteError), the projector's last batch failed (projector.lastError: it retries), or the NATS command consumer is stuck (nats.commandConsumer.stuck); ok otherwise",
      ),
    version: z
      .string()
      .describe("the service's release running (version of its package.json, e.g. 0.1.0; also this document's info.version); unknown when it cannot be read"),
    commit: z
      .string()
      .describe(
        'the commit the running build was made from: BUILD_COMMIT, else the commit checked out where the service runs from (its .git, read at start), else unknown (e.g. an image built without --build-arg BUILD_COMMIT=…)',
      ),
    store: z.strictObject({
      kind: z.enum(['sqlite', 'postgres', 'kurrentdb']),
      headPosition: decimal.nullable(),
      error: z.string().nullable().describe("why the store's head could not be read now (null: it answered)"),
      lastWriteError: z
        .strictObject({
          message: z.string().describe("the store's error (writes answer 503 store_unavailable meanwhile)"),
          code: z
            .string()
            .describe("the cause's code, e.g. SQLITE_BUSY (another process holds the file locked), ECONNREFUSED, a PostgreSQL SQLSTATE; unavailable when none"),
          at: isoTime,
        })
        .nullable()
        .describe(
          'the last write (append, erasure) that failed, until a write succeeds or, on SQLite and PostgreSQL, a write probe (every 5 s while this is set, writing nothing) finds the store writable again (null: the last write succeeded, or none failed)',
        ),
    }),
    projector: z.strictObject({ running: z.boolean(), checkpoint: decimal, lag: z.enum(['behind', 'caught-up', 'unknown']), lastError: z.string().nullable() }),
    readModels: z.strictObject({
      damaged: z
        .strictObject({
          problem: z
            .string()
            .describe("the file, SQLite's message, what met it and the remedy: restart the service, which moves the file aside and rebuilds it from the log"),
          at: isoTime,
        })
        .nullable()
        .describe(
          'set once a read or a command, over HTTP or NATS (answered 503 read_models_damaged), the projector (on the event loop or in its worker thread) or the decisions feed met a damaged page of the read models (read-models.sqlite), until the restart that rebuilds them; null otherwise',
        ),
      full: z
        .string()
        .nullable()
        .describe(
          'while the projector cannot write the read models because the disk holding read-models.sqlite is full, or the file cannot be read or written (disk I/O error: a file-size limit, a disk quota, a failing disk): the file, the error, the position they stay at and the remedy (free space on its file system, or fix what fails its I/O); meanwhile writes answer 503 store_unavailable (nothing written) and reads needing a later position answer 503 projection_behind at once; null otherwise, again at the first batch that commits once space is freed (within 5 s, without a restart)',
        ),
    }),
    erasure: z
      .strictObject({
        pendingWalScrub: z
          .array(z.strictObject({ file: z.string().describe('the -wal file (its name in DATA_DIR)'), since: isoTime }))
          .describe(
            "WAL files that still hold pages of rows erased since `since`: another connection's open read (e.g. a sqlite3 .backup of the running service) refused the checkpoint that truncates them; it is retried (at most 2 s apart) until it succeeds, and one line is logged then. Empty: none",
          ),
        damagedReadModelsAside: z
          .array(z.string())
          .describe(
            'read-model files moved aside as damaged in DATA_DIR (read-models.sqlite.damaged-<time>): they hold the conversation text of the sessions they held, which no erasure reaches; delete them (with their -wal and -shm files) once inspected. Empty: none',
          ),
      })
      .describe('copies of erased text that may still be on disk in DATA_DIR'),
    autoCompactionsInProgress: count,
    autoCompactionsBackingOff: count.describe(
      'sessions whose automatic compaction backs off after AUTO_COMPACTION_MAX_FAILURES or more failed compactions in a row, as this replica knows them',
    ),
    summarizer: z.strictObject({
      lastFailure: z
        .strictObject({
          reason: z
            .string()
            .describe(
              "the failed pass's reason: the fault's kind and HTTP status (e.g. the model endpoint rejected the credentials: HTTP 401), never message text",
            ),
          failureKind,
          at: isoTime,
        })
        .nullable()
        .describe('the last compaction pass this replica saw fail (null before any)'),
    }),
    mode: z
      .enum(['api-keys', 'open (no API keys configured)'])
      .describe(
        'api-keys: every /v1 request needs one of API_KEYS (a client without one asks for it first, as /ui does); open: open development mode, no key needed',
      ),
    nats: z
      .strictObject({
        connection: z
          .enum(['connecting', 'connected', 'reconnecting', 'closed'])
          .describe(
            'connecting: no server answered yet since the start (the client keeps trying); connected; reconnecting: the server went away (the client keeps trying); closed: shut down, or given up (see error)',
          ),
        since: z.string().describe('when the connection entered this state (ISO-8601)'),
        error: z
          .string()
          .nullable()
          .describe(
            "why the connection is not up: while connecting, why the start's attempt failed (e.g. connection refused; the client keeps trying); while closed, what made the transport give up (e.g. credentials refused once the server answered: fix it and restart); while connected, a stream or the consumer missing and not re-created, answers the results stream did not store (NATS results stream <name> did not store answers: …), or the decisions feed paused by a full decisions stream (NATS decisions stream <name> is full: …); null otherwise",
          ),
        decisionFeed: z
          .strictObject({
            checkpoint: decimal.describe('the last global position the decisions feed handled'),
            skippedTo: decimal.describe(
              'the global position the feed has read the log up to: its checkpoint, or past it the readable head when only deleted events lie between them (an erasure interrupted after its stream deletion): lag compares this with the head, so a checkpoint below the head with lag caught-up is such a tail',
            ),
            lag: z.enum(['behind', 'caught-up', 'unknown']),
            lastError: z
              .string()
              .nullable()
              .describe(
                'while the feed is paused (a publish failed; it retries): the error; for a full decisions stream it names the stream and what to do (raise its limits, or discard old)',
              ),
            lastErrorAt: z.string().nullable(),
            anotherLog: z
              .strictObject({
                foundPosition: decimal.describe(
                  "the position that is not an event of the store's log: the decisions stream's last message's, else the feed's checkpoint's",
                ),
                headPosition: decimal.describe("the store's head then"),
                resumedAfter: decimal.describe('where the feed resumed instead: the last message of this log in the stream, its own checkpoint, or the head'),
                problem: z.string().describe('the warn line: what was found and what the feed does'),
                at: isoTime,
              })
              .nullable()
              .describe(
                "set when the feed found (at start, or resuming after a pause) that the decisions stream's last message (or its checkpoint) is not an event of the store's log (a store restored from a backup, or another store on the same NATS_PREFIX) and resumed elsewhere, handling every later event; null otherwise",
              ),
          })
          .nullable(),
        commandsRetrying: count.describe(
          "NATS commands this replica holds and retries in place because the service cannot do them now (503 store_unavailable, counting_timeout): none is dropped; their sessions' later commands wait behind them",
        ),
        commandsUnstored: count.describe(
          'NATS commands this replica applied and answered live but left for redelivery because the results stream did not store the answer (full, or missing until re-created): redelivered 1 s, 2 s, … up to 60 s apart, each redelivery answering live again; nats.error says why. Alert when above 0: raise the results stream limits (max_msgs, max_bytes) or free room',
        ),
        commandsStalled: count.describe(
          'NATS commands this replica holds that have waited 3 ack waits or more behind an earlier command of their session still in the command stream, with no answer published (each logged once at warn); alert when above 0 for long',
        ),
        commandConsumer: z
          .strictObject({
            pending: count
              .nullable()
              .describe(
                "NATS commands in the command stream not yet delivered to any replica (the durable consumer's num_pending) at this replica's last check of the consumer; null before one",
              ),
            idleSeconds: count.describe('while commands are pending: seconds the durable consumer has delivered none (to any replica); 0 when none is pending'),
            stuck: z
              .string()
              .nullable()
              .describe(
                'while this replica finds the consumer stuck (commands pending, none delivered for NATS_CONSUMER_STUCK_MS while it asked for them: a known nats-server fault after a crash): what was found and done (the consumer is re-created); status is then degraded. Null otherwise, again once the consumer is seen delivering',
              ),
            recreated: count.describe('times this replica deleted and re-created the consumer because it was stuck'),
            lastRecreatedAt: isoTime.nullable().describe('when this replica last did (null: never)'),
          })
          .nullable()
          .describe('the durable command consumer as this replica checks it (null before the consumer starts)'),
      })
      .nullable()
      .describe(
        'the NATS transport (null without NATS_URL); it never changes the HTTP answer code, and changes status only to degraded while the command consumer is stuck (commandConsumer.stuck): HTTP keeps serving while NATS is away',
      ),
  }),
);

export const ReadinessSchema = named(
  'Readiness',
  z.strictObject({
    status: z.literal('ready'),
    projector: z.strictObject({ checkpoint: decimal.describe('the last global position the read models applied') }),
  }),
  'Ready: the read models have caught up with the log once since this process started, and the store answers',
);

/** The JSON Schema of every registered schema, keyed by component name, with `$ref`s between them. */
export function apiComponentSchemas(): Record<string, Record<string, unknown>> {
  const { schemas } = z.toJSONSchema(apiSchemaRegistry, { uri: (id) => `#/components/schemas/${id}`, unrepresentable: 'any', io: 'output' });
  const out: Record<string, Record<string, unknown>> = {};
  for (const [id, schema] of Object.entries(schemas)) {
    const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
    out[id] = rest;
  }
  return out;
}

/** The component name of a registered schema. @throws Error when it is not registered. */
export function schemaName(schema: z.ZodType): string {
  const meta = apiSchemaRegistry.get(schema);
  if (!meta) throw new Error('schema is not registered in apiSchemaRegistry');
  return meta.id;
}

/** A `$ref` to a registered schema, for swagger decorators. */
export function schemaRef(schema: z.ZodType): { $ref: string } {
  return { $ref: `#/components/schemas/${schemaName(schema)}` };
}

/**
 * The answer to one error status of a route: an {@link ErrorBodySchema} whose `code` is one of
 * `codes` (all of that status), described code by code; a code whose answers always carry some
 * details (`details` in `error-codes.ts`, e.g. `expected` and `actual` of `wrong_expected_revision`)
 * has them required, so a typed client reads them once it has checked the code.
 */
function errorResponse(status: number, codes: readonly ApiErrorCode[]) {
  const detailed = codes.filter((code) => errorDetailsOf(code).length > 0);
  const plain = codes.filter((code) => errorDetailsOf(code).length === 0);
  const variant = (of: readonly ApiErrorCode[], details: ReadonlyArray<keyof SessionErrorDetails>) => ({
    type: 'object',
    properties: {
      code: { type: 'string', enum: [...of] },
      ...Object.fromEntries(details.map((name) => [name, detailJsonSchema(name)])),
    },
    required: ['code', ...details],
  });
  const variants = [...(plain.length > 0 ? [variant(plain, [])] : []), ...detailed.map((code) => variant([code], errorDetailsOf(code)))];
  const retryAfter = retryAfterHeader(codes);
  return ApiResponse({
    status,
    description: codes.map((code) => `- ${code}: ${API_ERROR_CODES[code].description}`).join('\n'),
    ...(retryAfter ? { headers: { 'Retry-After': retryAfter } } : {}),
    content: {
      'application/json': { schema: { allOf: [schemaRef(ErrorBodySchema), variants.length === 1 ? variants[0] : { oneOf: variants }] } },
    },
  });
}

/**
 * The `Retry-After` header of an error status answering one of `codes`, or undefined when none of
 * them carries it (`retryAfter` in `error-codes.ts`): an integer of seconds, required when every
 * code of the status carries it, else optional, its description naming the codes that do.
 */
export function retryAfterHeader(
  codes: readonly ApiErrorCode[],
): { description: string; required: boolean; schema: { type: 'integer'; minimum: 1 } } | undefined {
  const carrying = codes.filter((code) => (API_ERROR_CODES[code] as ErrorCodeInfo).retryAfter !== undefined);
  if (carrying.length === 0) return undefined;
  const what = carrying.map((code) => `${code}: ${(API_ERROR_CODES[code] as ErrorCodeInfo).retryAfter}`).join('; ');
  const description =
    carrying.length === codes.length
      ? `when to retry, in whole seconds (${what})`
      : `when to retry, in whole seconds; sent with ${what}; absent with the other codes`;
  return { description, required: carrying.length === codes.length, schema: { type: 'integer', minimum: 1 } };
}

/** The details every answer with `code` carries. */
function errorDetailsOf(code: ApiErrorCode): ReadonlyArray<keyof SessionErrorDetails> {
  const info: ErrorCodeInfo = API_ERROR_CODES[code];
  return info.details ?? [];
}

/** The JSON Schema of one detail field of {@link ErrorBodySchema} (present, so not optional). */
function detailJsonSchema(name: keyof SessionErrorDetails): Record<string, unknown> {
  const { $schema: _s, ...json } = z.toJSONSchema((errorDetails[name] as z.ZodOptional).unwrap(), { io: 'output' }) as Record<string, unknown>;
  return json;
}

/**
 * Declares a route's answer (`status`, default 200, with the registered `schema`) and its error
 * answers: for each status of the codes `errors` (see `routeErrors`), an error body whose `code`
 * is one of that status's codes ({@link ErrorBodySchema}).
 */
export function ApiAnswer(schema: z.ZodType, options: { status?: number; errors: readonly ApiErrorCode[]; description?: string }): MethodDecorator {
  return applyDecorators(
    ApiResponse({
      status: options.status ?? 200,
      description: options.description ?? schemaName(schema),
      content: { 'application/json': { schema: schemaRef(schema) } },
    }),
    ApiErrorAnswers(options.errors),
  );
}

/** Declares a route's error answers alone (for a route whose answer is not JSON): see {@link ApiAnswer}. */
export function ApiErrorAnswers(errors: readonly ApiErrorCode[]): MethodDecorator {
  const byStatus = new Map<number, ApiErrorCode[]>();
  for (const code of errors) byStatus.set(statusOfCode(code), [...(byStatus.get(statusOfCode(code)) ?? []), code]);
  return applyDecorators(...[...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => errorResponse(status, codes)));
}
