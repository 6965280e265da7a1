/**
 * The one rule the extractive summary folds repeated user messages by, in all its forms (the
 * sectioned summary's "User messages" and the compact form's archived lines): user messages sent
 * in a row with the same text are written once, with their count.
 */

/** Prefix of a user message's formatted line (DESIGN §3.1). */
const USER_PREFIX = 'User: ';

/**
 * One archived event after {@link foldRepeatedUserMessages}: `line`, its formatted text on one
 * line (whitespace runs collapsed, trimmed); for a user message also `user`, its text so collapsed
 * and `times`, how many messages in a row it stands for (≥ 1).
 */
export interface FoldedEvent {
  line: string;
  user?: { text: string; times: number };
}

/**
 * How a user message sent `times` times in a row is written: `(×N) text` when `times` > 1, else
 * `text`. E.g. `repeatedMessage('next', 57)` is `(×57) next`.
 */
export function repeatedMessage(text: string, times: number): string {
  return times > 1 ? `(×${times}) ${text}` : text;
}

/**
 * `events` (formatted lines, oldest first) with each run of N > 1 user messages of the same text
 * (whitespace runs collapsed) sent in a row folded into its first: one event whose line is
 * `User: (×N) text` (see {@link repeatedMessage}), in the place of the first; the later ones of the
 * run are left out. In a row: no other user message between them (the assistant's answers and
 * tool results may be, and stay where they are). Other events are kept, each on one line. So
 * `next` sent 57 times between the answers is one line, not 57. Linear in the events' length.
 */
export function foldRepeatedUserMessages(events: readonly string[]): FoldedEvent[] {
  const folded: FoldedEvent[] = [];
  let run: { at: number; text: string; times: number } | undefined;
  const close = () => {
    if (run !== undefined && run.times > 1)
      folded[run.at] = { line: `${USER_PREFIX}${repeatedMessage(run.text, run.times)}`, user: { text: run.text, times: run.times } };
  };
  for (const event of events) {
    const line = event.replace(/\s+/g, ' ').trim();
    if (!event.startsWith(USER_PREFIX)) {
      folded.push({ line });
      continue;
    }
    const text = event.slice(USER_PREFIX.length).replace(/\s+/g, ' ').trim();
    if (run?.text === text) {
      run.times++;
      continue;
    }
    close();
    run = { at: folded.length, text, times: 1 };
    folded.push({ line, user: { text, times: 1 } });
  }
  close();
  return folded;
}
