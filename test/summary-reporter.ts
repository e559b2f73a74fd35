import type { Reporter, File, Task } from 'vitest';

/** Ends the run with the plain line "N passed, N failed" that CI reads in any language. */
export default class SummaryReporter implements Reporter {
  onFinished(files: File[] = []): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    const walk = (tasks: Task[]) => {
      for (const t of tasks) {
        if (t.type === 'suite') walk(t.tasks);
        else if (t.result?.state === 'pass') passed++;
        else if (t.result?.state === 'fail') failed++;
        else skipped++;
      }
    };
    for (const f of files) {
      const before = failed;
      walk(f.tasks);
      // A file that failed outside its tests (a hook, its import) counts once.
      if (f.result?.state === 'fail' && failed === before) failed++;
    }
    process.stdout.write(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  }
}
