import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cliEnvPerFile, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
const run = cliEnvPerFile((env) => (t = env));

describe('bad-input corpus: refused with its message before any request', () => {
  const dir = resolve(__dirname, '..', 'corpus');
  const expected = JSON.parse(readFileSync(join(dir, 'batch', 'expected.json'), 'utf8')) as Record<string, string>;
  it('has an expectation for every corpus file', () => {
    expect(readdirSync(join(dir, 'batch')).filter((f) => f.endsWith('.jsonl')).sort()).toEqual(Object.keys(expected).sort());
  });
  for (const [file, message] of Object.entries(expected)) {
    it(`batch create ${file}`, async () => {
      const r = await run(['batch', 'create', join(dir, 'batch', file)]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(t.requests()).toHaveLength(0);
    });
  }
  const flags = JSON.parse(readFileSync(join(dir, 'flags.json'), 'utf8')) as { args: string[]; message: string }[];
  for (const { args, message } of flags) {
    it(`router ${args.join(' ')}`, async () => {
      const r = await run(args, { ROUTER_MANAGEMENT_KEY: t.managementKey });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(message);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(t.requests()).toHaveLength(0);
    });
  }
  it('a broken config file is refused with one line', async () => {
    const cfgDir = join(t.dir, 'broken-config');
    const { mkdirSync } = await import('node:fs');
    mkdirSync(cfgDir, { recursive: true });
    writeFileSync(join(cfgDir, 'config.json'), '{ not json');
    const r = await run(['chat', 'x'], { ROUTER_CONFIG_DIR: cfgDir, ROUTER_API_KEY: '' });
    expect(r.code).not.toBe(0);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(t.requests()).toHaveLength(0);
  });
});
