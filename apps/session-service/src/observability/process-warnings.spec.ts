import { processWarningLine } from './process-warnings';

describe('processWarningLine', () => {
  it("makes the pg driver's multi-line SECURITY WARNING one line (a JSON-lines log keeps it one event)", () => {
    const warning = Object.assign(
      new Error(`SECURITY WARNING: The SSL modes 'prefer', 'require', and 'verify-ca' are treated as aliases for 'verify-full'.
In the next major version, these modes will adopt standard libpq semantics.

To prepare for this change:
- If you want the current behavior, explicitly use 'sslmode=verify-full'`),
      { name: 'Warning' },
    );
    const line = processWarningLine(warning);
    expect(line).not.toContain('\n');
    expect(line).toBe(
      "Warning: SECURITY WARNING: The SSL modes 'prefer', 'require', and 'verify-ca' are treated as aliases for 'verify-full'. In the next major version, these modes will adopt standard libpq semantics. To prepare for this change: - If you want the current behavior, explicitly use 'sslmode=verify-full'",
    );
  });
});
