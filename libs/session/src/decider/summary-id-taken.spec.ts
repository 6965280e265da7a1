/**
 * The summary id of a pass never takes an id an event of the session has (newcomer ncapi66 F2):
 * derived on the state decided on (`summaryIdOn`), so also on a state a pass is rebased onto, where
 * a client appended that id while the summarizer ran; the dry run's would-be summary too.
 */
import { SUMMARY_INSERTED, type SummaryInsertedData } from '../events/session-stream-events';
import { decideCompaction, planSessionCompaction } from './compaction-decider';
import { rebaseCompaction } from './compaction-rebase';
import { stateOf } from './testing/decider-spec';
import { compactCommand, SPEC_CONTEXT, summaryText, windowAfter } from './testing/compaction-spec';
import { reply, user } from './testing/session-events';

const threeTurns = [user('u1'), reply('a1'), user('u2'), reply('a2'), user('u3'), reply('a3')];
const command = compactCommand({ type: 'recursive-summarization', maxEventsToKeep: 2, overlapSize: 0 });

function plannedOn(state: ReturnType<typeof stateOf>) {
  const step = planSessionCompaction(command, state);
  if (step.kind !== 'pass') throw new Error('expected a pass that appends');
  return step.pass;
}

describe('the summary id of a pass (DESIGN §3.6)', () => {
  it('given a client event with the summary id appended while the summarizer ran, then the rebased decision takes summary-<id>-2 and keeps that event', () => {
    const before = stateOf(threeTurns)!;
    const pass = plannedOn(before);
    const squatted = `summary-${pass.compactionId}`;
    expect(decideCompaction(command, before, pass, summaryText('the recap'), SPEC_CONTEXT).result.summary!.id).toBe(squatted);
    const latest = stateOf([...threeTurns, user(squatted)])!;
    const rebased = rebaseCompaction(pass, before, latest, command.estimator);
    expect(rebased).not.toBeNull();
    const decision = decideCompaction(command, latest, rebased!, summaryText('the recap'), SPEC_CONTEXT);
    expect(decision.result.summary!.id).toBe(`${squatted}-2`);
    expect((decision.events.find((e) => e.type === SUMMARY_INSERTED)!.data as SummaryInsertedData).summaryId).toBe(`${squatted}-2`);
    expect(windowAfter(latest, decision.events)).toEqual([`${squatted}-2`, 'u3', 'a3', squatted]);
    // deterministic: the same pass on the same state names the same summary
    expect(decideCompaction(command, latest, rebased!, summaryText('the recap'), SPEC_CONTEXT).events).toEqual(decision.events);
  });

  it('given a client event holding the id in the window, then the dry run names the next free one, as the pass does', () => {
    const { compactionId } = plannedOn(stateOf(threeTurns));
    const state = stateOf([...threeTurns.slice(0, 4), user(`summary-${compactionId}`), reply('a3')])!;
    const pass = plannedOn(state);
    const taken = `summary-${pass.compactionId}`;
    const squatting = stateOf([...threeTurns.slice(0, 4), user(taken), reply('a3')])!;
    const dry = planSessionCompaction({ ...command, dryRun: true }, squatting);
    expect(dry.kind === 'conclude' && dry.conclusion.kind === 'dry-run' && dry.conclusion.result.keptIds).toEqual([`${taken}-2`, taken, 'a3']);
    expect(decideCompaction(command, squatting, plannedOn(squatting), summaryText('the recap'), SPEC_CONTEXT).result.summary!.id).toBe(`${taken}-2`);
  });
});
