'use strict';
/**
 * Ctrl-C (SIGINT) or SIGTERM while `npm run conformance` loads (ts-node and the service's modules:
 * seconds, before any vector runs and before the run's own handler, `stopOnSignals`, is in place)
 * ends it with one line saying so and exit code 130 (143 on SIGTERM), as a stop during the run does;
 * before 2026-12-07 such a stop printed nothing (newcomer ncdata74 F2). Plain JavaScript, so that
 * conformance.js holds the signals before ts-node loads.
 */

/** @type {((signal: NodeJS.Signals) => void) | null} */
let held = null;

/**
 * Until {@link releaseLoadingSignals}: a SIGINT or SIGTERM writes `<name>: interrupted by <signal>
 * while loading, before any vector ran; nothing was made` to stderr and exits 130 (SIGINT) or 143
 * (SIGTERM). A second call while held does nothing.
 * @param {string} name the command's name at the start of the line (`conformance`)
 */
function holdSignalsWhileLoading(name) {
  if (held) return;
  held = (signal) => {
    process.stderr.write(`${name}: interrupted by ${signal} while loading, before any vector ran; nothing was made\n`);
    process.exit(signal === 'SIGTERM' ? 143 : 130);
  };
  process.on('SIGINT', held);
  process.on('SIGTERM', held);
}

/** Removes the handlers of {@link holdSignalsWhileLoading} (call right before the run installs its own); nothing when none is held. */
function releaseLoadingSignals() {
  if (!held) return;
  process.off('SIGINT', held);
  process.off('SIGTERM', held);
  held = null;
}

module.exports = { holdSignalsWhileLoading, releaseLoadingSignals };
