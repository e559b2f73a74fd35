/**
 * --jq over JSON of several MB: jq-wasm's glue copied the rest of its input for every byte it read and
 * its whole output for every byte it wrote (minutes for 3 MB); scripts/jq-glue.mjs makes both linear.
 */
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

const t = startedForAll(() => startCliEnv());

// ~3 MB of text with multi-byte characters, quotes and newlines: JSON escapes and UTF-8 on both sides.
const content = Array.from({ length: 15_000 }, (_, i) => `line ${i}: "café" ✓ ${'x'.repeat(200)}`).join('\n');

describe('--jq over a JSON document of several MB', () => {
  // The old glue took minutes here: past the test's bound. scripts/jq-glue.mjs fails the build loudly if
  // its rewrite no longer applies; no wall-clock assertion (timing belongs in npm run bench).
  it('reads it in and writes it out whole', async () => {
    const body = JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content }] });
    expect(body.length).toBeGreaterThan(3_000_000);
    const r = await t.run(['api', 'POST', '/v1/chat/completions', '--input', '-', '--jq', '.choices[0].message.content'], { input: body });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${content}\n`);
    expect(r.stderr).toBe('');
  });

  it('many outputs, compact', async () => {
    const lines = content.split('\n');
    const r = await t.run(['api', 'POST', '/v1/chat/completions', '--input', '-', '--jq', '.choices[0].message.content | split("\\n") | map({n: length}) | .[]'], { input: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content }] }) });
    expect(r.code, r.stderr).toBe(0);
    const out = r.stdout.trimEnd().split('\n');
    expect(out).toHaveLength(lines.length);
    expect(out[0]).toBe(`{"n":${lines[0]!.length}}`);
  });

  // A test of its own: this and the outputs' call of 3 MB in one test passed the 180 s bound at load 30 on two cores
  // (~70 s a call there, ~1 s of CPU each).
  it('an error about the input still named as jq names it', async () => {
    const bad = await t.run(['api', 'POST', '/v1/chat/completions', '--input', '-', '--jq', '.choices[0].message.content.x'], { input: JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content }] }) });
    expect(bad.code).toBe(1);
    // The error, then what the POST made (named for an answer of any size, so that it is not made twice).
    expect(bad.stderr).toMatch(/^error: --jq: Cannot index string with string "x"\nPOST \/v1\/chat\/completions made chat\.completion gen-\S+\n$/);
  });
});
