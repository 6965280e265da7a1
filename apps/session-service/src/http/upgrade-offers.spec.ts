import { offersUpgrade } from './upgrade-offers';

describe('offersUpgrade: an upgrade offer as Node reads it', () => {
  it.each([
    { upgrade: 'h2c', connection: 'Upgrade, HTTP2-Settings' },
    { upgrade: 'websocket', connection: 'upgrade' },
    { upgrade: 'websocket', connection: 'keep-alive,  UPGRADE ' },
  ])('is an offer: %p', (headers) => {
    expect(offersUpgrade(headers)).toBe(true);
  });

  it.each([{ upgrade: 'h2c' }, { upgrade: 'h2c', connection: 'keep-alive' }, { upgrade: 'h2c', connection: 'upgrades' }, { connection: 'Upgrade' }, {}])(
    'is no offer: %p',
    (headers) => {
      expect(offersUpgrade(headers)).toBe(false);
    },
  );
});
