/**
 * The letter case of compaction ids. Every compaction id is a UUID (`compactionIdFor`,
 * `commandCompactionId`), written to the log, stored in the read models and answered in lower
 * case. UUIDs are case-insensitive on input (RFC 9562 §4: "The hexadecimal values "a" through "f"
 * are output as lower case characters and are case insensitive on input"), so a compaction id a
 * client sends (the path of `GET …/compactions/{compactionId}` and its `/diff`, recall's
 * `compactionId` filter) names the compaction in any case: it is looked up as
 * {@link compactionIdAsStored} spells it.
 */

/**
 * The spelling under which the compaction `id` (text a client sent) is stored: its ASCII letters in
 * lower case, e.g. `5DD76AFD-8C70-5120-973C-2E236778C02C` → `5dd76afd-8c70-5120-973c-2e236778c02c`.
 * Other characters are kept (a text that is no UUID names no compaction in any case: a 404 or 400
 * follows). Pure; never throws.
 */
export function compactionIdAsStored(id: string): string {
  return id.replace(/[A-Z]+/g, (letters) => letters.toLowerCase());
}

/**
 * Compaction ids as a client may send them: UUIDs, as every compaction id is derived
 * (`compactionIdFor`), in any case (the letters are spelled out rather than a flag, so the
 * OpenAPI document, which takes the source, says so too).
 */
export const COMPACTION_ID_PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * What a text that does not match {@link COMPACTION_ID_PATTERN} is told, after "is not a compaction
 * id: " (recall's `compactionId` filter, 400; a compaction path, 404 `compaction_not_found`).
 */
export const COMPACTION_ID_FORM =
  'compaction ids are UUIDs such as "0f8e5e7a-3b1c-5d2e-9f4a-6b7c8d9e0f1a": take it from a compaction answer, the compaction history or a recall hit';
