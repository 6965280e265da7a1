/**
 * Triggers (DESIGN §3.5): validation and evaluation.
 */
import type { Trigger } from './compaction-types';
import { classifyEvents } from './classify';
import { describeValue, InvalidParameterError } from './invalid-parameter-error';
import { MAX_PARAMETER_VALUE, missingTypeHint, readInteger, rejectUnknownKeys } from './parameters';
import type { CostedEvent } from './session-event';
import { keysOf, TRIGGER_ALLOWED_KEYS } from './parameter-keys';

/** The trigger types of DESIGN §3.5. */
export const TRIGGER_TYPES: readonly Trigger['type'][] = ['turn-count', 'token-count', 'any-of', 'all-of'];

/** Deepest accepted nesting of `any-of` / `all-of` (the top-level trigger is depth 1). */
export const MAX_TRIGGER_DEPTH = 8;

/** Most members accepted in one `any-of` / `all-of` list. */
export const MAX_TRIGGER_MEMBERS = 32;

/** Every key some trigger type takes, `type` first: what a trigger without a type may have meant. */
const TRIGGER_KEYS: readonly string[] = keysOf('trigger');

function parseAt(input: unknown, path: string, depth: number): Trigger {
  if (input === undefined) throw InvalidParameterError.missing(path, 'an object with a "type"');
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new InvalidParameterError(path, 'an object with a "type"', describeValue(input));
  }
  const obj = input as Record<string, unknown>;
  const type = obj.type;
  if (type === undefined) throw InvalidParameterError.missing(`${path}.type`, `one of ${TRIGGER_TYPES.join(', ')}`, missingTypeHint(obj, path, TRIGGER_KEYS));
  if (typeof type !== 'string' || !(TRIGGER_TYPES as readonly string[]).includes(type)) {
    throw new InvalidParameterError(`${path}.type`, `one of ${TRIGGER_TYPES.join(', ')}`, describeValue(type));
  }
  rejectUnknownKeys(obj, TRIGGER_ALLOWED_KEYS[type as Trigger['type']], path);
  switch (type) {
    case 'turn-count':
      return { type, maxTurns: readInteger(obj.maxTurns, `${path}.maxTurns`, 1, MAX_PARAMETER_VALUE) };
    case 'token-count':
      return { type, threshold: readInteger(obj.threshold, `${path}.threshold`, 1, MAX_PARAMETER_VALUE) };
    default: {
      const list = obj.triggers;
      if (list === undefined) {
        throw InvalidParameterError.missing(`${path}.triggers`, `a non-empty array of at most ${MAX_TRIGGER_MEMBERS} triggers`);
      }
      if (Array.isArray(list) && list.length === 0) {
        throw new InvalidParameterError(`${path}.triggers`, 'a non-empty array: list at least one trigger', 'an empty array');
      }
      if (!Array.isArray(list) || list.length > MAX_TRIGGER_MEMBERS) {
        const got = Array.isArray(list) ? `an array of ${list.length}` : describeValue(list);
        throw new InvalidParameterError(`${path}.triggers`, `a non-empty array of at most ${MAX_TRIGGER_MEMBERS} triggers`, got);
      }
      if (depth >= MAX_TRIGGER_DEPTH) {
        throw new InvalidParameterError(`${path}.triggers`, `nested at most ${MAX_TRIGGER_DEPTH} levels deep`);
      }
      const triggers = list.map((member, i) => parseAt(member, `${path}.triggers[${i}]`, depth + 1));
      return { type: type as 'any-of' | 'all-of', triggers };
    }
  }
}

/**
 * Validates a trigger object (DESIGN §3.5) and returns a new, normalized {@link Trigger}.
 *
 * Rules: `turn-count {maxTurns}` and `token-count {threshold}` take integers from 1 to
 * {@link MAX_PARAMETER_VALUE} (`threshold` in the session estimator's unit), positive as the
 * strategies' parameters are (DESIGN §3.4; §3.5 sets no other bound): 0 would make a trigger that
 * always fires (`token-count 0`) or fires on any turn, which is no trigger at all (leave it out);
 * `any-of` / `all-of {triggers}` take a non-empty array of at most {@link MAX_TRIGGER_MEMBERS} triggers, nested at
 * most {@link MAX_TRIGGER_DEPTH} levels; unknown keys are rejected.
 *
 * @throws InvalidParameterError whose `parameter` is a path such as `trigger.maxTurns`,
 *   `trigger.triggers[1].threshold` or `trigger.type`; a left-out required field reads
 *   `<path>: is required: <what to send>` (e.g. `trigger.maxTurns: is required: an integer from 1 to 1000000000`);
 *   a left-out `type` also names the keys no trigger takes, when there are some (`unknownFieldHint`).
 */
export function parseTrigger(input: unknown): Trigger {
  return parseAt(input, 'trigger', 1);
}

/**
 * What a trigger looks at in a window (DESIGN §3.5): `turns` = user events among the active real
 * events; `tokens` = cost(pinned system) + cost(summaries) + cost(real events), estimator units.
 */
export interface TriggerFigures {
  turns: number;
  tokens: number;
}

function fires(trigger: Trigger, f: TriggerFigures): boolean {
  switch (trigger.type) {
    case 'turn-count':
      return f.turns > trigger.maxTurns;
    case 'token-count':
      return f.tokens >= trigger.threshold;
    case 'any-of':
      return trigger.triggers.some((t) => fires(t, f));
    case 'all-of':
      return trigger.triggers.every((t) => fires(t, f));
  }
}

/**
 * The {@link TriggerFigures} of `events` (active events, log order, carried costs). Superseded
 * system messages are not counted: every pass archives them.
 */
export function triggerFigures(events: readonly CostedEvent[]): TriggerFigures {
  const classes = classifyEvents(events);
  let turns = 0;
  let tokens = 0;
  for (const i of classes.real) {
    if (events[i].event.type === 'user') turns++;
    tokens += events[i].tokens;
  }
  for (const i of classes.summaries) tokens += events[i].tokens;
  if (classes.pinnedSystem >= 0) tokens += events[classes.pinnedSystem].tokens;
  return { turns, tokens };
}

/**
 * Whether `trigger` fires on `events` (DESIGN §3.5). `events` are the session's active events in
 * log order, each with its carried cost (no re-tokenizing).
 *
 * - `turn-count {maxTurns}`: number of user events among the active real events > maxTurns;
 * - `token-count {threshold}`: cost(pinned system) + cost(summaries) + cost(real events) ≥
 *   threshold (superseded system messages are not counted: every pass archives them);
 * - `any-of` / `all-of`: any / all members fire;
 * - `null` / `undefined` (no trigger): always fires.
 *
 * Expects an already validated trigger (see {@link parseTrigger}); never throws on one.
 */
export function evaluateTrigger(trigger: Trigger | null | undefined, events: readonly CostedEvent[]): boolean {
  if (trigger == null) return true;
  return triggerFiguresFire(trigger, triggerFigures(events));
}

/** Whether `trigger` fires on a window with these figures (see {@link evaluateTrigger}); no trigger always fires. */
export function triggerFiguresFire(trigger: Trigger | null | undefined, figures: TriggerFigures): boolean {
  return trigger == null ? true : fires(trigger, figures);
}

function grownEnough(trigger: Trigger, since: TriggerFigures, now: TriggerFigures): boolean {
  switch (trigger.type) {
    case 'turn-count':
      return now.turns - since.turns >= Math.max(1, Math.ceil(trigger.maxTurns / 4));
    case 'token-count':
      return now.tokens - since.tokens >= Math.max(1, trigger.threshold / 4);
    case 'any-of':
    case 'all-of':
      return trigger.triggers.some((t) => grownEnough(t, since, now));
  }
}

/**
 * Automatic compaction makes progress or waits (DESIGN §3.5). `since` is the window's figures
 * right after the last automatic pass when that pass left the trigger firing (null otherwise);
 * `now` the current window's. The next automatic pass may run when there is no such pass, when
 * there is no trigger, or once the window has grown by a quarter of the token threshold
 * (`token-count`, at least 1 unit) or of the turn limit (`turn-count`, at least one turn) since;
 * for `any-of` / `all-of`, once any member's growth is reached. Pure.
 */
export function autoPassMayRun(trigger: Trigger | null | undefined, since: TriggerFigures | null, now: TriggerFigures): boolean {
  if (trigger == null || since === null) return true;
  return grownEnough(trigger, since, now);
}
