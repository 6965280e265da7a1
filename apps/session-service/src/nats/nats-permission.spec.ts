import { PermissionViolationError } from '@nats-io/transport-node';
import { isPermissionDenied } from './nats-permission';

describe('isPermissionDenied', () => {
  it("tells the client's request error caused by a permissions violation (what nats-server 2.9 answers) from other failures", () => {
    const violation = new PermissionViolationError('Permissions Violation for Publish to "$JS.API.STREAM.MSG.GET.X"', 'publish', '$JS.API.STREAM.MSG.GET.X');
    expect(isPermissionDenied(new Error('Permissions Violation for Publish to "$JS.API.STREAM.MSG.GET.X"', { cause: violation }))).toBe(true);
    expect(isPermissionDenied(violation)).toBe(true);
    expect(isPermissionDenied(new Error('timeout', { cause: new Error('no responders') }))).toBe(false);
    expect(isPermissionDenied('Permissions Violation')).toBe(false);
  });
});
