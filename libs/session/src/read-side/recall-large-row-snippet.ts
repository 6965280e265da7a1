import Database from 'better-sqlite3';
import { recallTableDdl, type RecallIndexKind } from './recall-index-tables';
import { snippetCutsOnClusters } from './recall-snippet-clusters';
import { cutMarkCompleted } from './recall-snippet-cut-mark';

/**
 * Longest index row text, in UTF-16 code units, whose snippet FTS5's `snippet()` cuts from the whole row. FTS5 scores a
 * snippet window at each instance of the query's phrases against every other instance, so its cost grows with the square of
 * the instances in the row (measured on the 2-core machine: 16,384 code units of `lorem ipsum dolor sit amet` repeated took 3.8
 * ms for `lorem` and 33 ms for `ipsum dolor sit`; a 262,144-unit row 4.6 s, and a page of such hits held the event loop for
 * minutes: newcomer ncapi66 F1). At this length a row of one-letter words and a 26-word query costs ~16 ms.
 */
export const RECALL_SNIPPET_WHOLE_ROW_LIMIT = 2048;

/** Code units of each piece a longer row's snippet is cut from ({@link largeRowSnippet}). */
const PIECE_LENGTH = RECALL_SNIPPET_WHOLE_ROW_LIMIT;

/** Code units two consecutive pieces share at least: a query word (at most 1,000 characters) near a piece's end is whole in the next. */
const PIECE_OVERLAP = 1024;

/** Pieces a snippet is tried in (those holding every word by {@link looseHolds} first) before the row's start is shown unmarked. */
const PIECES_TRIED = 3;

/** Scratch FTS5 tables, one per index kind, in a connection of their own (in memory): a piece is indexed there to cut its snippet. */
let scratch: { db: Database.Database; tables: Map<RecallIndexKind, string> } | undefined;

/**
 * The snippet (FTS5's form: marks `\u0001`/`\u0002`, a cut end `…`) of an index row text `body` longer than
 * {@link RECALL_SNIPPET_WHOLE_ROW_LIMIT}, cut by FTS5's `snippet()` (24 tokens, the same arguments as for a short row) from one
 * piece of it ({@link PIECE_LENGTH} code units, consecutive pieces overlapping by {@link PIECE_OVERLAP}) instead of the whole
 * row, so its cost is bounded whatever the row holds: the earliest piece holding every one of the query's words
 * (`phrases`, the plan's quoted phrases; a loose test, {@link looseHolds}), else the pieces holding the most of them, indexed in a scratch table with the
 * index's tokenizer (`kind`) and matched with `match` (the query's MATCH expression, or any of its phrases when the whole
 * query is not in the piece). The cut moves out to the piece's grapheme cluster boundaries ({@link snippetCutsOnClusters}),
 * a mark closed at the cut grows to its whole phrase ({@link cutMarkCompleted}),
 * and a piece that does not start (end) the row gets the `…` there; a snippet running to its piece's end (the row going on)
 * gives way to the next piece's, when that one matches. When no tried piece matches (the words are in the row
 * only across the tokenizer's folding the loose test does not see), the row's first piece is shown unmarked, cut with `…`.
 * Cost: a linear scan of the row's pieces until one holds every word and matches, with at most {@link PIECES_TRIED} snippets of a
 * piece in all.
 */
export function largeRowSnippet(kind: RecallIndexKind, body: string, match: string, phrases: readonly string[]): string {
  const words = phrases.map((phrase) => looseText(phrase.slice(1, -1).replace(/""/g, '"')).trim()).filter((word) => word !== '');
  const holds = looseHolds(kind);
  const pieces = piecesOf(body);
  let triesLeft = PIECES_TRIED;
  const tried = new Set<number>();
  /** The piece's snippet (counted against {@link PIECES_TRIED}), or undefined when it does not match. */
  const pieceCut = (index: number): { snippet: string; toPieceEnd: boolean } | undefined => {
    tried.add(index);
    triesLeft -= 1;
    const [start, end] = pieces[index];
    const piece = body.slice(start, end);
    const snippet = pieceSnippet(kind, piece, match) ?? pieceSnippet(kind, piece, phrases.join(' OR '));
    if (snippet === undefined) return undefined;
    const cut = cutMarkCompleted(snippetCutsOnClusters(snippet, piece), piece, phrases);
    const toPieceEnd = end < body.length && !cut.endsWith('…');
    return { snippet: `${start > 0 && !cut.startsWith('…') ? '…' : ''}${cut}${toPieceEnd ? '…' : ''}`, toPieceEnd };
  };
  /**
   * The piece's snippet; one that runs to the end of a piece the row goes on after (its words near that end: FTS5 could not
   * show what follows them, newcomer ncrecall69 F2) gives way to the next piece's, which holds that end in its middle, when
   * that one matches too.
   */
  const snippetOf = (index: number): string | undefined => {
    const cut = pieceCut(index);
    if (cut === undefined || !cut.toPieceEnd || index + 1 >= pieces.length || triesLeft <= 0) return cut?.snippet;
    return pieceCut(index + 1)?.snippet ?? cut.snippet;
  };
  // The earliest piece that holds every word is tried at once; one the loose test took for it and FTS5 does not match
  // (a false positive) does not stop the scan (newcomer ncrecall69 F1: the row's start shown unmarked).
  const scored: Array<{ index: number; held: number }> = [];
  for (let index = 0; index < pieces.length && triesLeft > 0; index++) {
    const loose = looseText(body.slice(...pieces[index]));
    const held = words.filter((word) => holds(loose, word)).length;
    scored.push({ index, held });
    if (held === words.length && held > 0) {
      const snippet = snippetOf(index);
      if (snippet !== undefined) return snippet;
    }
  }
  const rest = scored.filter((piece) => piece.held > 0 && !tried.has(piece.index)).sort((a, b) => b.held - a.held || a.index - b.index);
  for (const { index } of rest.slice(0, Math.max(0, triesLeft))) {
    const snippet = snippetOf(index);
    if (snippet !== undefined) return snippet;
  }
  const [, firstEnd] = pieces[0];
  return `${body.slice(0, Math.min(firstEnd, 200))}…`;
}

/**
 * Whether a piece's loose text ({@link looseText}) may hold a loose word, for the index `kind`: as a whole word (or run of
 * whole words) in the word index, whose tokens are whole words (`bag` is not in `baggage`); anywhere in the trigram index,
 * which matches inside words.
 */
function looseHolds(kind: RecallIndexKind): (loose: string, word: string) => boolean {
  return kind === 'words' ? (loose, word) => ` ${loose} `.includes(` ${word} `) : (loose, word) => loose.includes(word);
}

/** FTS5's snippet of `piece` for `match` in the scratch table of `kind`; undefined when the piece does not match. */
function pieceSnippet(kind: RecallIndexKind, piece: string, match: string): string | undefined {
  scratch ??= { db: new Database(':memory:'), tables: new Map() };
  let table = scratch.tables.get(kind);
  if (table === undefined) {
    table = `snippet_${kind}`;
    scratch.db.exec(recallTableDdl(kind, table));
    scratch.tables.set(kind, table);
  }
  const { db } = scratch;
  db.prepare(`INSERT INTO ${table} (rowid, body) VALUES (1, ?)`).run(piece);
  try {
    const row = db
      .prepare(`SELECT snippet(${table}, 0, char(1), char(2), '…', 24) AS snippet FROM ${table} WHERE ${table} MATCH ? AND rowid = 1`)
      .get(match) as { snippet: string } | undefined;
    return row?.snippet;
  } finally {
    db.prepare(`DELETE FROM ${table} WHERE rowid = 1`).run();
  }
}

/** `[start, end)` of each piece of `text`: {@link PIECE_LENGTH} code units, the next starting {@link PIECE_OVERLAP} before the end, cuts moved back to a white space when there is one nearby (not inside a surrogate pair). */
function piecesOf(text: string): Array<[number, number]> {
  const pieces: Array<[number, number]> = [];
  let start = 0;
  for (;;) {
    if (text.length - start <= PIECE_LENGTH) {
      pieces.push([start, text.length]);
      return pieces;
    }
    const end = cutBefore(text, start + PIECE_LENGTH, start + PIECE_LENGTH - PIECE_OVERLAP / 4);
    pieces.push([start, end]);
    start = cutBefore(text, end - PIECE_OVERLAP, end - PIECE_OVERLAP - PIECE_OVERLAP / 4);
  }
}

/** The last index at or before `at` and after `floor` just past a white space, else `at` (moved off a low surrogate). */
function cutBefore(text: string, at: number, floor: number): number {
  for (let i = at; i > floor; i--) if (/\s/.test(text[i - 1])) return i;
  const code = text.charCodeAt(at);
  return code >= 0xdc00 && code <= 0xdfff ? at - 1 : at;
}

/**
 * A loose form of `text` for telling which piece may hold a word: canonical decomposition, without combining marks, lower case,
 * each run of other characters than letters, numbers and private-use ones one space. A word the tokenizer finds in a text
 * (case and Latin diacritics folded, separators between a phrase's tokens) is in the loose form of the text as the loose
 * form of the word; the converse need not hold (the snippet's own match decides).
 */
function looseText(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{Co}]+/gu, ' ');
}
