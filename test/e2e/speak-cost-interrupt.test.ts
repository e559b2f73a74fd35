import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestEnv, type TestEnv } from '../helpers.js';
import { until } from '../support/until.js';
import { closedStatus } from '../support/run-process.js';

// speak asks the service what the audio cost (GET /v1/generation) once the audio is in: a lookup that is
// slow and then interrupted must lose neither the audio nor the ledger's record of a call that was charged.
let t: TestEnv;
beforeAll(async () => {
  t = await startTestEnv();
});
afterAll(async () => {
  await t.admin('faults', { faults: [] });
  await t.close();
});

it('Ctrl-C while the cost is asked: the audio is in its file, the ledger has the call by its id, exit 130', async () => {
  const state = join(t.dir, 'speak-interrupted');
  const out = join(t.dir, 'kept.mp3');
  // The lookup is held far longer than the test: only the interrupt can end it.
  await t.admin('faults', { faults: ['slow,delay_ms=600000,times=1,path=/generation'] });
  t.clearRequests();
  const child = t.spawn(['speak', 'a sentence whose audio arrives in full', '--voice', 'alloy', '--model', 'local/tts', '-o', out], { ROUTER_STATE_DIR: state, ROUTER_MANAGEMENT_KEY: t.managementKey });
  let stderr = '';
  child.stderr!.on('data', (c) => (stderr += c));
  const closed = closedStatus(child);
  try {
    // The audio is all in once its cost is asked.
    expect(await until(() => t.requests().some((r) => r.path.endsWith('/generation')))).toBe(true);
    child.kill('SIGINT');
    // 130 as the interrupt ends it; 0 only if the machine held this test past the 5 s speak waits for a cost
    // (the same file and ledger line either way: the assertions below hold for both).
    const code = await closed;
    expect([130, 0], stderr).toContain(code);
    if (code === 130) expect(stderr).toMatch(/interrupted/);
  } finally {
    child.kill('SIGKILL');
  }
  // Was: the file removed (the abort took it back) and no line in the ledger for audio that was charged.
  expect(existsSync(out)).toBe(true);
  expect(readFileSync(out).length).toBeGreaterThan(0);
  const lines = readFileSync(join(state, 'usage.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatchObject({ command: 'speak', endpoint: '/v1/audio/speech', model: 'local/tts', id: expect.stringMatching(/^gen-/) });
  expect(lines[0]).not.toHaveProperty('cost');
});
