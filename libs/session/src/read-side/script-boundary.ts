/**
 * Script boundaries as word boundaries in the word index (`recall_fts_<id>`, unicode61).
 *
 * unicode61 splits words at spaces and punctuation only, so a Latin code written directly against
 * text of another script (`我的预订号码是XK42Q9`, `予約番号はJP5512です`, `หมายเลขคือTH9931`,
 * `번호는KR7781입니다`, `رقم الحجزAB1234من`, `заказаRU5566пожалуйста`, `बुकिंगIN9090कृपया`) was one
 * token, and neither `XK42Q9` nor the word it was written against was found (until read models 9
 * for every script, until 15 for spaced scripts: newcomer report ncintl F9). {@link wordIndexText} puts {@link RECALL_SCRIPT_BOUNDARY} between such runs, in documents
 * (the text the word index holds) and in the words of queries searched there, so both sides split
 * alike.
 */
import { scriptChanges } from '@lib/compaction';

/**
 * The separator put at script boundaries: U+0003, a control character, not a word character for
 * unicode61. Recall documents never hold it (`recallDocument` turns it into a space), so snippets
 * drop every one to show the text as sent.
 */
export const RECALL_SCRIPT_BOUNDARY = '\u0003';

/**
 * `text` with {@link RECALL_SCRIPT_BOUNDARY} at every change of script (`scriptChanges` of
 * `@lib/compaction`, mode `text`: the one rule of script changes, the extractive summarizer's too):
 * between two adjacent letters or digits of different scripts, Latin (with the decimal digits of
 * every script), each other script (Arabic, Hebrew, Cyrillic, Greek, Devanagari, …), Korean, and
 * the scripts written without spaces (Han, Hiragana, Katakana, Thai, Lao, Khmer, Myanmar, one
 * class: `東京タワー` stays whole). Combining marks go with the letter before them. `是XK42Q9，` →
 * `是\u0003XK42Q9，`, `JP5512です` → `JP5512\u0003です`, `заказаRU5566пожалуйста` →
 * `заказа\u0003RU5566\u0003пожалуйста`, `ЁЖИК42` → `ЁЖИК\u000342`; nothing else changes (`read_file`,
 * `Zürich2024`, `बुकिंग`, `كـتاب`, `donʼt` stay as they are); the length grows by one UTF-16 unit per
 * boundary. Applied to what the word index holds and to each word of a query searched there
 * (README, "Recall `q`": "a change of script separates words").
 */
export function wordIndexText(text: string): string {
  const changes = scriptChanges(text, 'text');
  if (changes.length === 0) return text;
  let out = '';
  let copied = 0;
  for (const at of changes) {
    out += text.slice(copied, at) + RECALL_SCRIPT_BOUNDARY;
    copied = at;
  }
  return out + text.slice(copied);
}
