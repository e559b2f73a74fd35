import { describe, expect, it } from 'vitest';
import { runInProcess } from '../support/inprocess.js';

// `router api --help`: the usage line and the Arguments section name the same arguments.
describe('api --help', () => {
  it('names [method] and <path> in the usage line and in Arguments', async () => {
    const help = (await runInProcess(['api', '--help'])).stdout;
    expect(help).toMatch(/^Usage: router api \[options\] \[method\] <path>$/m);
    const args = help.split('Arguments:\n')[1]!.split('\n\n')[0]!;
    const names = args.split('\n').filter((l) => /^ {2}\S/.test(l)).map((l) => l.trim().split(/\s+/)[0]);
    expect(names).toEqual(['method', 'path']);
  });

  it('without a path: one usage line naming path, exit 2', async () => {
    const r = await runInProcess(['api']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: missing required argument 'path'.*\n$/);
  });
});
