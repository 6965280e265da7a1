/**
 * A token-counting worker entry for tests (`TokenCountingPool` option `workerFile`): answers every
 * task with the thread's own `resourceLimits` (node:worker_threads), so a test can read the limits
 * the pool started its thread with.
 */
import { resourceLimits } from 'node:worker_threads';

/** The worker thread's `resourceLimits` (MiB figures as Node reports them), whatever the task. */
export default function reportResourceLimits(): typeof resourceLimits {
  return resourceLimits;
}
