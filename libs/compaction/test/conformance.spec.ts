/**
 * Conformance: every vector in `<shared>/conformance/vectors` (DESIGN §3) against the library.
 * The runner implements the rules of the vector format (see the vectors' README), not the files:
 * another set of vectors is run with it too. Vectors are read by the runners' one reader
 * (`test/conformance/conformance-vectors.ts`): unknown `expect` keys fail the vector.
 */
import * as fs from 'node:fs';
import { describeWithShared, VECTORS_DIR } from '../../../test/support/shared-dir';
import { loadVectors, type ConformanceVector } from '../../../test/conformance/conformance-vectors';

/** A vector's text field as a string ('' when absent or not text). */
function textOf(value: unknown): string {
  return typeof value === 'string' ? value : '';
}
import {
  buildSummarizerMessages,
  completePlan,
  costEvents,
  evaluateTrigger,
  extractiveSummary,
  getEstimator,
  InvalidParameterError,
  isEstimatorName,
  parseStrategy,
  parseTrigger,
  planCompaction,
  type SessionEvent,
  type SummaryReply,
} from '../src';

const SUMMARY_ID = '\u0000new-summary';

function toEvent(raw: Record<string, unknown>): SessionEvent {
  const id = String(raw.id);
  switch (raw.type) {
    case 'user':
      return { id, type: 'user', text: (raw.text as string | null | undefined) ?? null };
    case 'system':
      return { id, type: 'system', text: (raw.text as string | null | undefined) ?? null, ...(raw.notice === true ? { notice: true } : {}) };
    case 'assistant':
      return {
        id,
        type: 'assistant',
        text: (raw.text as string | null | undefined) ?? null,
        ...(Array.isArray(raw.toolCalls) ? { toolCalls: raw.toolCalls as never } : {}),
      };
    case 'tool':
      return { id, type: 'tool', responses: (raw.responses as never) ?? [] };
    case 'summary':
      return { id, type: 'summary', shadowPrompt: textOf(raw.shadowPrompt), text: textOf(raw.text) };
    default:
      throw new Error(`vector event ${id}: unknown type ${JSON.stringify(raw.type)}`);
  }
}

function runVector(v: ConformanceVector): void {
  const estimatorName: string = v.estimator ?? 'cl100k_base';
  if (!isEstimatorName(estimatorName)) throw new Error(`unknown estimator ${estimatorName}`);
  const estimator = getEstimator(estimatorName);
  const costed = costEvents(v.events.map(toEvent), estimator);
  const exp: Record<string, unknown> = v.expect;

  if (exp.error !== undefined) {
    let thrown: unknown;
    try {
      if (v.strategy !== undefined) parseStrategy(v.strategy);
      if (v.trigger !== undefined) parseTrigger(v.trigger);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(InvalidParameterError);
    expect((thrown as InvalidParameterError).parameter).toContain(textOf(exp.error));
    return;
  }

  const trigger = v.trigger === undefined ? null : parseTrigger(v.trigger);
  if (exp.triggerFired !== undefined) {
    expect(evaluateTrigger(trigger, costed)).toBe(exp.triggerFired);
  }
  if (v.strategy === undefined) {
    const planKeys = ['kept', 'archived', 'tokensEstimatedSaved', 'summarizerCalls', 'summarizerInputIncludes', 'summarizerInputExcludes'];
    expect(planKeys.filter((k) => exp[k] !== undefined)).toEqual([]);
    expect(exp.triggerFired).toBeDefined();
    return;
  }

  const strategy = parseStrategy(v.strategy);
  const plan = planCompaction(costed, strategy, trigger);
  if (exp.triggerFired !== undefined) expect(plan.triggerFired).toBe(exp.triggerFired);
  const request = plan.summaryRequest;
  if (exp.summarizerCalls !== undefined) expect(request ? 1 : 0).toBe(exp.summarizerCalls);

  const includes = (exp.summarizerInputIncludes as string[] | undefined) ?? [];
  const excludes = (exp.summarizerInputExcludes as string[] | undefined) ?? [];
  if (includes.length > 0 || excludes.length > 0) {
    expect(request).toBeDefined();
    const messages = buildSummarizerMessages(request!);
    const sent = `${messages.system}\n${messages.user}`;
    for (const s of includes) expect(sent).toContain(s);
    for (const s of excludes) expect(sent).not.toContain(s);
  }

  let reply: SummaryReply | undefined;
  if (request) {
    if (v.summarizer?.failure !== undefined || v.summarizer?.error !== undefined) {
      reply = { failure: String(v.summarizer.failure ?? v.summarizer.error) };
    } else if (v.summarizer?.reply !== undefined) {
      reply = { text: v.summarizer.reply };
    } else {
      reply = { text: extractiveSummary(request) };
    }
  }
  const result = completePlan(plan, { reply, summaryId: SUMMARY_ID, estimator });
  const kept = result.keptIds.map((id) => (id === SUMMARY_ID ? '$summary' : id));
  if (exp.kept !== undefined) expect(kept).toEqual(exp.kept);
  if (exp.archived !== undefined) expect(result.archivedIds).toEqual(exp.archived);
  if (exp.tokensEstimatedSaved !== undefined) expect(result.tokensEstimatedSaved).toBe(exp.tokensEstimatedSaved);
}

describeWithShared('conformance vectors (DESIGN §3)', VECTORS_DIR, () => {
  const loaded = fs.existsSync(VECTORS_DIR) ? loadVectors(VECTORS_DIR) : [];

  it('finds well-formed vectors with unique ids', () => {
    expect(loaded.length).toBeGreaterThan(0);
    expect(loaded.filter((l) => l.invalid).map((l) => `${l.file}: ${l.invalid}`)).toEqual([]);
    const ids = loaded.map((l) => l.vector?.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  for (const { file, vector } of loaded) {
    if (vector) it(`${vector.id}: ${vector.about ?? ''}`, () => runVector(vector));
    else it(`${file} is a well-formed vector`, () => expect(vector).toBeDefined());
  }
});
