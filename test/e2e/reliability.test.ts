// Ctrl-C in a real process. Retries, the bad-input corpus and key safety run in process:
// test/inprocess/retries.test.ts and bad-input-corpus.test.ts.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { startTestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { closedStatus } from '../support/run-process.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startTestEnv());
beforeEach(async () => {
  t.clearRequests();
  await t.admin('faults', { faults: [] });
});

describe('interruption', () => {
  it('Ctrl-C during speak -o leaves no file at the target and no temp file (exit 130)', async () => {
    const { existsSync } = await import('node:fs');
    const out = join(t.dir, 'interrupted.pcm');
    const text = Array.from({ length: 4000 }, (_, i) => `word${i % 50}`).join(' ');
    await t.admin('credits', { amount: 10 });
    const child = t.spawn(['speak', text, '--voice', 'alloy', '--model', 'local/tts', '--format', 'pcm', '-o', out], { ROUTER_MANAGEMENT_KEY: t.managementKey });
    const exited = closedStatus(child);
    const env = child as unknown as { stderr: NodeJS.ReadableStream };
    let stderr = '';
    env.stderr.on('data', (c) => (stderr += c));
    // Wait until the temp file exists: audio is flowing.
    expect(await until(() => readdirSync(t.dir).some((f) => f.startsWith('.router-tmp-interrupted.pcm.')))).toBe(true);
    child.kill('SIGINT');
    const code = await exited;
    expect(code).toBe(130);
    expect(stderr).toMatch(/interrupted/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(t.dir).filter((f) => f.startsWith('.router-tmp-interrupted.pcm.'))).toEqual([]);
  });
});
