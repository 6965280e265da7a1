/**
 * Preloaded with `node -r` into a script under test (a spawned `npm run` script): `fs.statfsSync` answers 1020 KiB free
 * (fewer than the 1 MiB the service and the rebuild need) for the directory `FULL_DISK_DIR` names, the real answer
 * elsewhere; a full disk without filling one, as full-disk-at-start.spec.ts simulates it in-process.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const fullDir = process.env.FULL_DISK_DIR && path.resolve(process.env.FULL_DISK_DIR);
if (fullDir) {
  const real = fs.statfsSync.bind(fs);
  fs.statfsSync = (dir, ...rest) => (path.resolve(String(dir)) === fullDir ? { ...real(dir, ...rest), bavail: 255, bsize: 4096 } : real(dir, ...rest));
}
