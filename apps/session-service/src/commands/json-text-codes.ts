/**
 * The code units of JSON's structural characters (RFC 8259 §2) and of the string escape, shared by
 * the scans of a body's raw text: `rejectDeepBody` (UTF-8 bytes) and `duplicateMember` (UTF-16
 * code units: the same values, all of them ASCII).
 */
export const QUOTE = 0x22;
export const BACKSLASH = 0x5c;
export const COLON = 0x3a;
export const COMMA = 0x2c;
export const OPEN_BRACE = 0x7b;
export const CLOSE_BRACE = 0x7d;
export const OPEN_BRACKET = 0x5b;
export const CLOSE_BRACKET = 0x5d;
