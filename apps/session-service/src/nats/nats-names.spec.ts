import fc from 'fast-check';
import { SESSION_ID_PATTERN } from '../http/request-schemas';
import { commandSubject, decisionSubject, natsNames, parseCommandSubject } from './nats-names';
import { documentationFile } from '../../../../test/support/documentation';

const sessionChars = fc.constantFrom(...'abcXYZ019_-:@.'.split(''));
const sessionId = fc.string({ unit: sessionChars, minLength: 1, maxLength: 40 }).filter((s) => !s.startsWith('.') && !s.endsWith('.') && !s.includes('..'));
const tenant = fc.string({ unit: fc.constantFrom(...'abc019_-'.split('')), minLength: 1, maxLength: 12 });
const kind = fc.constantFrom('compact', 'append', 'messages', 'policy', 'explode');

describe('command subjects', () => {
  it('parse back to the tenant, the session (dots included) and the kind they were built from', () => {
    fc.assert(
      fc.property(tenant, sessionId, kind, (t, s, k) => {
        expect(SESSION_ID_PATTERN.test(s)).toBe(true);
        expect(parseCommandSubject('compaction', commandSubject('compaction', t, s, k))).toEqual({ tenant: t, sessionId: s, kind: k });
      }),
    );
  });

  it('decision subjects have only non-empty tokens, and distinct sessions get distinct subjects', () => {
    const anySession = fc.string({ unit: sessionChars, minLength: 1, maxLength: 20 });
    fc.assert(
      fc.property(anySession, anySession, (a, b) => {
        const [sa, sb] = [decisionSubject('p', 't', a), decisionSubject('p', 't', b)];
        expect(sa.split('.').every((token) => token.length > 0)).toBe(true);
        expect(sa === sb).toBe(a === b);
      }),
    );
  });

  it('reject subjects of another prefix or without a session token', () => {
    expect(parseCommandSubject('compaction', 'other.commands.default.s1.compact')).toBeNull();
    expect(parseCommandSubject('compaction', 'compaction.results.default.s1.compact')).toBeNull();
    expect(parseCommandSubject('compaction', 'compaction.commands.default.compact')).toBeNull();
  });
});

describe('docs/nats.md on NATS names', () => {
  it('names the streams and the consumer as natsNames does, for the default and another NATS_PREFIX', () => {
    const nats = documentationFile('docs/nats.md');
    const streams = /- \*\*Streams\*\*[\s\S]*?\n- \*\*/.exec(nats)?.[0].replace(/\s+/g, ' ') ?? '';
    for (const prefix of ['compaction', 'ncx']) {
      const names = natsNames(prefix);
      for (const name of [names.commandStream, names.resultStream, names.decisionStream, names.commandConsumer]) {
        expect({ prefix, name, inReadme: streams.includes(`\`${name}\``) }).toEqual({ prefix, name, inReadme: true });
      }
    }
  });
});
