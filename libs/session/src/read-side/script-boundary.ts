/**
 * Script boundaries as word boundaries in the word index (`recall_fts_<id>`, unicode61).
 *
 * unicode61 splits words at spaces and punctuation only, so a Latin code written directly against
 * text of a script without spaces (`我的预订号码是XK42Q9`, `予約番号はJP5512です`,
 * `หมายเลขคือTH9931`) or against Korean (`번호는KR7781입니다`) was one token, and `XK42Q9` was not
 * found. {@link wordIndexText} puts {@link RECALL_SCRIPT_BOUNDARY} between such runs, in documents
 * (the text the word index holds) and in the words of queries searched there, so both sides split
 * alike.
 */

/**
 * The separator put at script boundaries: U+0003, a control character, not a word character for
 * unicode61. Recall documents never hold it (`recallDocument` turns it into a space), so snippets
 * drop every one to show the text as sent.
 */
export const RECALL_SCRIPT_BOUNDARY = '\u0003';

/**
 * Scripts written without spaces between words (as `unspaced-script`, by script extension, so the
 * prolonged sound mark `ー` and the iteration mark `々` count as Japanese and Han).
 */
const UNSPACED = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
/** Korean: spaced, but particles and endings are written against the word before (`KR7781입니다`). */
const HANGUL = /\p{scx=Hangul}/u;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;
const MARK = /\p{M}/u;
const ANY_SPLIT_SCRIPT = new RegExp(`${UNSPACED.source}|${HANGUL.source}`, 'u');

/** What a character is to {@link wordIndexText}. */
enum Kind {
  /** Neither a letter, a digit nor a mark: separates words already. */
  Separator = 0,
  /** A combining mark: belongs to the letter before it. */
  Mark = 1,
  /** A letter or digit of any other script. */
  Other = 2,
  Unspaced = 3,
  Hangul = 4,
}

function kindOf(character: string): Kind {
  if (MARK.test(character)) return Kind.Mark;
  if (!WORD_CHARACTER.test(character)) return Kind.Separator;
  if (UNSPACED.test(character)) return Kind.Unspaced;
  if (HANGUL.test(character)) return Kind.Hangul;
  return Kind.Other;
}

/** Not computed yet, in {@link bmpKinds}. */
const UNKNOWN = 255;
/** {@link kindOf} of the BMP code units met so far (a regular-expression test per character of a long document costs ~0.3 µs each). */
const bmpKinds = new Uint8Array(0x10000).fill(UNKNOWN);
function bmpKind(unit: number): Kind {
  const known: number = bmpKinds[unit];
  if (known !== UNKNOWN) return known;
  const kind = unit >= 0xd800 && unit <= 0xdfff ? Kind.Separator : kindOf(String.fromCharCode(unit));
  bmpKinds[unit] = kind;
  return kind;
}

/**
 * `text` with {@link RECALL_SCRIPT_BOUNDARY} between every letter or digit of a script written
 * without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar), or of Hangul, and an adjacent
 * letter or digit of another script (combining marks go with the letter before them):
 * `是XK42Q9，` → `是\u0003XK42Q9，`, `JP5512です` → `JP5512\u0003です`. Nothing else changes
 * (`ЁЖИК42`, `read_file`, `東京タワー` stay as they are); the length grows by one UTF-16 unit per
 * boundary. Applied to what the word index holds and to each word of a query searched there.
 */
export function wordIndexText(text: string): string {
  if (!ANY_SPLIT_SCRIPT.test(text)) return text;
  let out = '';
  let copied = 0;
  let previous: Kind = Kind.Separator;
  for (let i = 0; i < text.length;) {
    const unit = text.charCodeAt(i);
    let size = 1;
    let kind: Kind;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const point = text.codePointAt(i)!;
      size = point > 0xffff ? 2 : 1;
      kind = size === 2 ? kindOf(String.fromCodePoint(point)) : Kind.Separator;
    } else {
      kind = bmpKind(unit);
    }
    if (kind !== Kind.Mark) {
      if (kind !== Kind.Separator && previous !== Kind.Separator && kind !== previous && (kind !== Kind.Other || previous !== Kind.Other)) {
        out += text.slice(copied, i) + RECALL_SCRIPT_BOUNDARY;
        copied = i;
      }
      previous = kind;
    }
    i += size;
  }
  return copied === 0 ? text : out + text.slice(copied);
}
