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
