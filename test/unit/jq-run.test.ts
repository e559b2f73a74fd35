import { describe, expect, it } from 'vitest';
import { runJqWorker } from '../../src/cli/io/jq-run.js';

// jq runs in a worker: a filter that never ends holds no thread of ours, and an abort ends it.
describe('runJqWorker', () => {
  it('runs jq, says its errors, and an abort ends a filter that never ends; the next run starts afresh', async () => {
    expect(await runJqWorker('{"a":[1,2]}', '.a[]', ['-c'])).toBe('1\n2\n');
    await expect(runJqWorker('null', 'error("boom")', [])).rejects.toThrow(/boom/);
    const stop = new AbortController();
    const reason = Object.assign(new Error('interrupted'), { name: 'AbortError' });
    const endless = runJqWorker('null', 'last(range(1e12))', [], stop.signal);
    // The main thread is free while it runs: this timer fires, and its abort ends the run.
    setTimeout(() => stop.abort(reason), 200);
    await expect(endless).rejects.toBe(reason);
    expect(await runJqWorker('[3]', '.[0] + 1', [])).toBe('4\n');
  });

  it('an aborted signal runs nothing', async () => {
    const stop = new AbortController();
    stop.abort(new Error('already'));
    await expect(runJqWorker('null', '.', [], stop.signal)).rejects.toThrow('already');
  });
});
