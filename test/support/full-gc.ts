import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A full (mark-compact) collection on demand, without starting the worker with --expose-gc: what a
// loaded worker's heap does at times of its own, made to happen while a test waits. Weakly held
// objects (a WeakRef's target, AbortSignal.timeout() inside AbortSignal.any()) go at one.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

export function fullGc(): void {
  gc();
}
