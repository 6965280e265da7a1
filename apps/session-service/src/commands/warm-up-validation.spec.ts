/**
 * The start-up warm-up of validation: its sample body passes the append route's check under the
 * documented limits (else it would stop at the first refusal and warm up less), and warming up
 * never throws.
 */
import { requestSchemas } from '../http/request-schemas';
import { appendEventsCommandFrom } from './session-command-requests';
import { WARM_UP_APPEND_BODY, warmUpValidation } from './warm-up-validation';

describe('warmUpValidation', () => {
  it('parses a body holding one event of each type, accepted under the documented limits', () => {
    const schemas = requestSchemas({ maxEventsPerRequest: 1000, maxTextLength: 1_000_000 });
    expect(warmUpValidation(schemas)).toBe(true);
    const command = appendEventsCommandFrom(schemas, 't', 's', WARM_UP_APPEND_BODY);
    expect(command.events.map((e) => e.event.type)).toEqual(['user', 'assistant', 'tool', 'system', 'summary']);
  });

  it('does not throw under limits the sample exceeds', () => {
    expect(warmUpValidation(requestSchemas({ maxEventsPerRequest: 1, maxTextLength: 1 }))).toBe(false);
  });
});
