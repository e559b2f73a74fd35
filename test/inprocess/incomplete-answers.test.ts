import { afterEach, describe, expect, it, onTestFinished } from 'vitest';
import { runInProcess } from '../support/inprocess.js';
import { startFixtureServer, type FixtureServer } from '../support/fixture-server.js';

// An embeddings answer is one vector per input, and a speech answer holds audio: an answer with fewer
// vectors (none), one input's twice, or no audio bytes
// is not printed as if it were whole (exit 7, nothing on stdout).
let server: FixtureServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const vector = (index: number) => ({ object: 'embedding', index, embedding: [0.1, 0.2] });
const answer = (data: unknown[]) => ({ 'POST /api/v1/embeddings': { body: { object: 'list', data, model: 'x/y', usage: { prompt_tokens: 2, total_tokens: 2 } } } });

async function embed(data: unknown[], flags: string[] = []) {
  server = await startFixtureServer(answer(data));
  const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_NO_LOG: '1' };
  return runInProcess(['--max-retries', '0', 'embed', '--model', 'x/y', ...flags, 'one', 'two'], { env });
}

describe('embed against an answer that does not hold one vector per input', () => {
  it.each([
    ['no vector at all', [], /^error: the service answered 0 vectors for 2 inputs: none for input 1, 2\n$/],
    ['one of two', [vector(0)], /^error: the service answered 1 vector for 2 inputs: none for input 2\n$/],
    ['the first input twice', [vector(0), vector(0)], /^error: the service answered 2 vectors for 2 inputs: none for input 2\n$/],
    ['one too many', [vector(0), vector(1), vector(1)], /^error: the service answered 3 vectors for 2 inputs\n$/],
  ])('%s: exit 7, nothing printed (JSON or --jsonl)', async (_, data, said) => {
    for (const flags of [[], ['--jsonl']]) {
      const r = await embed(data, flags);
      expect(r).toMatchObject({ code: 7, stdout: '' });
      expect(r.stderr).toMatch(said);
      await server!.close();
      server = undefined;
    }
  });

  it('one vector per input, in any order: printed, exit 0', async () => {
    const r = await embed([vector(1), vector(0)], ['--jsonl']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l).input)).toEqual(['two', 'one']);
  });
});

describe('speak against an answer of no audio at all (200, zero bytes)', () => {
  it('is exit 7, and -o writes no file', async () => {
    const { existsSync, mkdtempSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    server = await startFixtureServer({ 'POST /api/v1/audio/speech': { contentType: 'audio/mpeg', body: '' } });
    const dir = mkdtempSync(join(tmpdir(), 'router-speak-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const out = join(dir, 'hi.mp3');
    const env = { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_MANAGEMENT_KEY: 'sk-test-mgmt-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '', ROUTER_NO_LOG: '1' };
    for (const flags of [[], ['-o', out]]) {
      const r = await runInProcess(['--max-retries', '0', 'speak', '--model', 'x/y', '--voice', 'alloy', ...flags, 'hi'], { env });
      expect(r).toEqual({ code: 7, stdout: '', stderr: 'error: the service sent no audio (an empty answer)\n' });
    }
    expect(existsSync(out)).toBe(false);
  });
});
