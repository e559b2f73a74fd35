/**
 * Scripting as with gh: --json FIELDS and --jq on every command with --json, router api, the usage
 * ledger and router usage, and conversations; through the real binary against the emulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { startTestEnv, type TestEnv } from '../helpers.js';
import { seedScripting } from '../support/scripting-state.js';

let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
  await seedScripting(t);
});
afterAll(() => t.close());

describe('--json FIELDS on every command with --json', () => {
  it('serve: only api_root,state_dir on its one JSON line', async () => {
    const child = t.spawn(['serve', '--port', '0', '--state', join(t.dir, 'serve-fields'), '--json', 'api_root,state_dir']);
    const line = await new Promise<string>((resolve) => {
      let out = '';
      child.stdout!.on('data', (c) => {
        out += c;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
    });
    child.kill('SIGTERM');
    expect(Object.keys(JSON.parse(line)).sort()).toEqual(['api_root', 'state_dir']);
  });

});
