import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';

// `router chat --router-metadata` says the routing (the model that answered, the attempts) on stderr;
// `router speak` had no such flag, and the library's speech call never asked for the metadata, so the
// `X-Router-Metadata` header speech answers carry was never seen. Now `speak --router-metadata` says it
// as chat does, on stderr (stdout is the audio), and in `--json` output.
let t: CliEnv;
let mgmt: Record<string, string>;
sharedCliEnv((e) => {
  t = e;
  mgmt = { ROUTER_MANAGEMENT_KEY: e.managementKey };
});

describe('router speak --router-metadata', () => {
  it('says the routing on stderr, the audio alone on stdout', async () => {
    const r = await t.run(['speak', 'Hello there.', '--voice', 'alloy', '--model', 'local/tts', '--router-metadata'], { env: mgmt });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('router: speech: local/tts -> local/tts via local-alpha (attempt 1)\n');
    expect(r.stderr).toContain('router: attempts: local/tts via local-alpha (200)\n');
    // An MPEG audio frame first: nothing but audio on stdout.
    expect([r.stdoutBytes[0], r.stdoutBytes[1]! & 0xe0]).toEqual([0xff, 0xe0]);
  });

  it('puts it in --json output with -o', async () => {
    const out = join(t.dir, 'routed.pcm');
    const r = await t.run(['speak', 'one two', '--voice', 'sage', '--model', 'local/tts', '-o', out, '--json', '--router-metadata'], { env: mgmt });
    expect(r.code, r.stderr).toBe(0);
    const json = JSON.parse(r.stdout) as { bytes: number; router_metadata: { summary: string }; openrouter_metadata: { attempts: unknown[] } };
    expect(json.bytes).toBe(readFileSync(out).length);
    expect(json.router_metadata.summary).toBe('speech: local/tts -> local/tts via local-alpha (attempt 1)');
    expect(json.openrouter_metadata.attempts).toEqual([{ provider: 'local-alpha', model: 'local/tts', status: 200 }]);
  });
});
