// A worker thread's OS priority below the thread that made it (Linux, where a thread's nice value is its own:
// setpriority(2) with no id applies to the calling thread). A thread starts with its maker's nice value, so
// the worker takes that value plus `steps`: 2 below a node run at nice 0 or at nice -15 alike. An absolute
// value would put a node's workers 17 steps below a node run at -15, and above one run at 5.
import { getPriority, setPriority } from 'node:os';

/**
 * Whether a thread can lower its own priority without lowering the whole process's: on Linux a thread's nice
 * value is its own; elsewhere setpriority(2) would lower the whole process.
 */
export const canLowerThreadPriority = process.platform === 'linux';

/** The lowest priority (highest nice value) a thread can have. */
const LOWEST = 19;

/** Lowers the calling thread's priority by `steps` of nice (0, or where it cannot: left as it is). */
export function lowerThisThread(steps: number): void {
  if (steps <= 0 || !canLowerThreadPriority) return;
  setPriority(Math.min(LOWEST, getPriority() + steps));
}
