/**
 * Removes an erased session's copies from the JetStream streams: the answers and decisions of its
 * erased life on `<prefix>.results.<tenant>.<session>` and `<prefix>.decisions.<tenant>.<session>`
 * (a compaction answer and a `CompactionCompleted` decision carry the summary text, so the
 * session's content), not those of the session written again after the erasure, and its commands
 * stored in the command stream before the erasure (their bodies hold its texts: leftovers a
 * nats-server crash kept after they were applied, and commands not applied yet). Called by the
 * decisions feed ({@link DecisionFeedPublisher}) when it reaches an erasure record, before it
 * publishes that record, on every replica that follows the log:
 * removing what is already gone removes nothing, so it is idempotent.
 *
 * Messages are deleted one by one with JetStream's erase flag (`STREAM.MSG.DELETE` without
 * `no_erase`): the server overwrites each message's bytes in its file storage at once, where a
 * purge would only mark them deleted until the block is compacted.
 */
import { JetStreamApiError, type JetStreamManager, type MsgRequest, type StoredMsg } from '@nats-io/jetstream';
import { SESSION_ERASED, erasesCopyOf, type CheckpointEvent, type ErasedRows } from '@lib/session';
import { answerBasisOf, erasesAnswer, type AnswerBasis } from './answer-basis';
import { LOG_EVENT_HEADER, LOG_POSITION_HEADER, commandSubject, decisionSubject, resultSubject, sessionTokens, type NatsNames } from './nats-names';

/** JetStream API error code of `STREAM.MSG.DELETE` for a sequence that is not there (another replica deleted it first). */
const SEQUENCE_NOT_FOUND = 10043;
/**
 * JetStream API error code of a `STREAM.MSG.DELETE` the stream's store failed (`JSStreamMsgDeleteFailedF`), with the store's
 * error as its description: nats-server 2.9 answers so for a message deleted (or acknowledged from a work queue) meanwhile
 * (`no message found`) or past the stream's last (`stream store EOF`). Any other description is a real failure.
 */
const MESSAGE_DELETE_FAILED = 10057;
const GONE_MESSAGE_DESCRIPTIONS = new Set(['no message found', 'stream store EOF']);

/**
 * Whether `err`, thrown by `STREAM.MSG.DELETE`, says the message is not there: the sequence is unknown, or already deleted by
 * someone else (another replica's erasure, a work queue's acknowledgement). Newcomer ncrecheck66 F5: nats-server 2.9 says
 * the latter as `no message found` (10057), which paused the decisions feed during concurrent erasures.
 */
function isGoneMessageError(err: unknown): boolean {
  if (!(err instanceof JetStreamApiError)) return false;
  return err.code === SEQUENCE_NOT_FOUND || (err.code === MESSAGE_DELETE_FAILED && GONE_MESSAGE_DESCRIPTIONS.has(err.message));
}

/**
 * Deletes message `seq` of `stream` with JetStream's erase flag: the server overwrites its bytes in
 * file storage. Returns false when it is not there (deleted or acknowledged meanwhile).
 * @throws the client's error when NATS is unreachable or the stream is missing.
 */
export async function eraseMessage(jsm: JetStreamManager, stream: string, seq: number): Promise<boolean> {
  try {
    return await jsm.streams.deleteMessage(stream, seq, true);
  } catch (err) {
    if (isGoneMessageError(err)) return false;
    throw err;
  }
}

/**
 * Deletes (erasing their bytes) the messages of `stream` on exactly `subject` for which `remove`
 * holds; returns how many it deleted. A message deleted meanwhile by someone else is skipped.
 * Reads the subject's messages in stream order with `STREAM.MSG.GET` `next_by_subj` (nats-server
 * 2.9 or later).
 * @throws the client's error when NATS is unreachable or the stream is missing.
 */
export async function eraseSubjectMessages(
  jsm: JetStreamManager,
  stream: string,
  subject: string,
  remove: (m: StoredMsg) => boolean | Promise<boolean> = () => true,
): Promise<number> {
  let deleted = 0;
  let seq = 1;
  for (;;) {
    // The client types only `seq` and `last_by_subj` here; the server also takes `next_by_subj` (next message on the subject from `seq`).
    const m = await jsm.streams.getMessage(stream, { seq, next_by_subj: subject } as unknown as MsgRequest);
    if (!m) return deleted;
    if ((await remove(m)) && (await eraseMessage(jsm, stream, m.seq))) deleted++;
    seq = m.seq + 1;
  }
}

/** What {@link eraseSessionCopies} deleted: answers from the results stream, decisions from the decisions stream, commands from the command stream. */
export interface ErasedCopies {
  results: number;
  decisions: number;
  commands: number;
}

/**
 * Deletes (erasing their bytes) the commands of session `sessionId` of `tenantId` that the command
 * stream stored at or before `erasedAt` (the erasure record's time; the stream's times are the NATS
 * server's clock): on `<prefix>.commands.<tenant>.<session>.*` (`*` is one token: not the commands
 * of a session `<session>.x`). Those are leftovers of commands applied and answered whose removal a
 * nats-server crash lost (newcomer ncnatsops F2: their bodies, the texts they appended, stayed in
 * the stream until the session's next command), and commands published before the erasure and not
 * applied yet (they are dropped unanswered: an HTTP append that arrived before an erasure is refused
 * 409 `session_erased` the same way). Commands stored after it stay: the session's new life. A
 * session id with an empty dot-separated part has no command subject: nothing to do. Returns how many it deleted.
 * @throws the client's error when NATS is unreachable or the stream is missing.
 */
export async function eraseSessionCommands(jsm: JetStreamManager, names: NatsNames, tenantId: string, sessionId: string, erasedAt: Date): Promise<number> {
  if (sessionTokens(sessionId) !== sessionId || Number.isNaN(erasedAt.getTime())) return 0;
  return eraseSubjectMessages(jsm, names.commandStream, commandSubject(names.prefix, tenantId, sessionId, '*'), (m) => m.time.getTime() <= erasedAt.getTime());
}

/**
 * Deletes the copies of session `sessionId` of `tenantId` from the results and decisions streams,
 * for the erasure record at global position `erasurePosition` naming the erased events `rows`
 * (the record's `erasedRowsOf`, the rule the read models apply), on the session's subjects (a
 * session id with an empty dot-separated part has no results subject):
 * - answers: those decided on the erased life or an earlier one, told by the {@link AnswerBasis}
 *   each answer carries ({@link erasesAnswer}: by revision up to the record's `lastRevision`; for a
 *   record without it, those decided before the record), those without a basis (published by a
 *   release before it was recorded, or whose basis could not be read: whenever they were
 *   published, as before), and those of another log (published before a restore of the store, or
 *   by another store on the same prefix), which `answerOfAnotherLog` tells (asked only for the
 *   other answers; the feed passes `answerOfAnotherLog` of answer-basis.ts; by default
 *   `ofAnotherLog` of their basis position and event). The answers of the session written again
 *   after the deletion stay, also when the feed reaches the record after they were published;
 * - decisions: every decision on its decisions subject but erasure records (which hold no content)
 *   and this log's decisions of the session written again after the deletion: those published for
 *   events `rows` names (for a record with `lastRevision`, the decisions of revisions up to it,
 *   wherever in the log they are; for a record with neither bound, those before the record: what
 *   the read models held of the session when they reached it; a decision without a revision is
 *   taken by position, before the record), and those of another log, which `ofAnotherLog` tells
 *   (asked only for the other decisions; a decision published by a release that did not record its
 *   event is taken as this log's there).
 * - commands: with `erasure.erasedAt` (the record's time), those of the session the command stream
 *   stored at or before it ({@link eraseSessionCommands}).
 * @throws the client's error when NATS is unreachable (the feed retries: nothing is skipped), or
 *   what `ofAnotherLog` or `answerOfAnotherLog` throws.
 */
export async function eraseSessionCopies(
  jsm: JetStreamManager,
  names: NatsNames,
  tenantId: string,
  sessionId: string,
  erasure: { position: bigint; rows: ErasedRows; erasedAt?: string },
  ofAnotherLog: (message: CheckpointEvent) => Promise<boolean>,
  answerOfAnotherLog: (basis: AnswerBasis) => Promise<boolean> = (basis) => ofAnotherLog({ position: basis.position, event: basis.event }),
): Promise<ErasedCopies> {
  const rows: ErasedRows = erasure.rows.kind === 'all' ? { kind: 'beforePosition', before: erasure.position } : erasure.rows;
  const results =
    sessionTokens(sessionId) === sessionId
      ? await eraseSubjectMessages(jsm, names.resultStream, resultSubject(names.prefix, tenantId, sessionId), async (m) => {
          const basis = answerBasisOf(m.header);
          return basis === null || erasesAnswer(erasure, basis) || (await answerOfAnotherLog(basis));
        })
      : 0;
  const decisions = await eraseSubjectMessages(jsm, names.decisionStream, decisionSubject(names.prefix, tenantId, sessionId), async (m) => {
    const header = m.header.get(LOG_POSITION_HEADER);
    const body = m.json<{ type?: unknown; revision?: unknown }>();
    if (!header || (body.type ?? null) === SESSION_ERASED) return false;
    const position = BigInt(header);
    const named =
      typeof body.revision === 'string' && /^\d+$/.test(body.revision)
        ? erasesCopyOf(rows, { revision: BigInt(body.revision), position })
        : position < erasure.position;
    return named || (await ofAnotherLog({ position, event: m.header.get(LOG_EVENT_HEADER) || null }));
  });
  const commands = erasure.erasedAt === undefined ? 0 : await eraseSessionCommands(jsm, names, tenantId, sessionId, new Date(erasure.erasedAt));
  return { results, decisions, commands };
}
