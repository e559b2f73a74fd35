import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureMain, startCliEnv, type CliEnv } from '../support/cli-env.js';

// Keys the CLI knows without asking anyone (the environment's, every profile's in the config file) are hidden where it
// prints what it kept of prompts and answers, and in what chat says back: a key in use or not (task k14).
let t: CliEnv;
/** A profile's key that no run sends: another profile's, kept in the config file (ROUTER_KEYCHAIN=off). */
const OTHER = 'sk-rt-other-profile-0123456789abcdef';
/** The default profile's own key, which an environment's key goes before. */
const OWN = 'sk-rt-own-profile-fedcba9876543210';
/** Under 8 characters: never hidden (it would hide common words); 8 is. */
const TINY = 'ab12cd3';
const EIGHT = 'ab12cd34';

/** `router ARGS` in this process (captureMain: runCliInProcess would throw on the key itself, the old behaviour). */
async function run(args: string[], input = '') {
  const { code, out, err } = await captureMain(args, { input: Buffer.from(input), env: { ...process.env, FORCE_COLOR: undefined, ...t.env } });
  return { code, stdout: out.toString('utf8'), stderr: err.toString('utf8') };
}

/** No key the run knows in anything printed, as a whole or as a start of 16 characters. */
function noKey(r: { stdout: string; stderr: string }, keys = [t.apiKey, OTHER, OWN]): void {
  for (const key of keys) {
    expect(r.stdout + r.stderr).not.toContain(key);
    expect(r.stdout + r.stderr).not.toContain(key.slice(0, 16));
  }
}

beforeAll(async () => {
  t = await startCliEnv();
  for (const [profile, key] of [['other', OTHER], ['default', OWN], ['tiny', TINY], ['eight', EIGHT]] as const) {
    expect((await run(['config', 'set', 'api_key', '--profile', profile], key)).code).toBe(0);
  }
});
afterAll(() => t.close());

describe('what was kept of prompts and answers', () => {
  const prompt = () => `env ${t.apiKey} other ${OTHER} own ${OWN} end`;
  const shown = 'env **** other **** own **** end';
  beforeAll(async () => {
    expect((await run(['chat', '--conversation', 'keys', '--model', 'local/echo', prompt()])).code).toBe(0);
  });

  it('router logs: as text, --json, --truncate', async () => {
    // Was: the prompt and the echoed answer printed whole, all three keys in them.
    const text = await run(['logs']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`## Prompt\n\n${shown}\n`);
    expect(text.stdout).toContain(`## Response\n\n${shown}\n`);
    noKey(text);
    const json = await run(['logs', '--json']);
    expect(JSON.parse(json.stdout)[0]).toMatchObject({ prompt: shown, response: shown });
    noKey(json);
    // Cut to 100 characters after the keys are hidden: no start of a key left by the cut.
    const cut = await run(['logs', '-t']);
    expect(cut.stdout).toContain(shown);
    noKey(cut);
    noKey(await run(['logs', '--json', '--jq', '.[].prompt']));
  });

  it('router conversations show and list', async () => {
    const show = await run(['conversations', 'show', 'keys']);
    expect(show).toMatchObject({ code: 0, stdout: `user: ${shown}\n\nassistant: ${shown}\n` });
    const json = await run(['conversations', 'show', 'keys', '--json']);
    expect(JSON.parse(json.stdout).messages.map((m: { content: string }) => m.content)).toEqual([shown, shown]);
    const list = await run(['conversations', 'list']);
    expect(list.stdout).toMatch(/^keys\t/m);
    for (const r of [show, json, list, await run(['conversations', 'list', '--json'])]) noKey(r);
  });

  it('router fragments show and list, router roles show and list', async () => {
    const file = join(t.dir, 'notes.txt');
    writeFileSync(file, `the key: ${OTHER}\n`);
    expect((await run(['fragments', 'set', 'notes', file])).code).toBe(0);
    const show = await run(['fragments', 'show', 'notes']);
    expect(show).toMatchObject({ code: 0, stdout: 'the key: ****\n' });
    noKey(show);
    noKey(await run(['fragments', 'show', 'notes', '--json']));
    noKey(await run(['fragments', 'list']));
    expect((await run(['roles', 'save', 'keyed', '--system', `send ${OWN} along`])).code).toBe(0);
    const role = await run(['roles', 'show', 'keyed']);
    expect(role.stdout).toContain('send **** along');
    for (const r of [role, await run(['roles', 'show', 'keyed', '--json']), await run(['roles', 'list'])]) noKey(r);
  });
});

describe('chat hides every key it knows, not only the one it sends', () => {
  it('another profile\'s key, and the profile\'s own under an environment\'s key', async () => {
    for (const extra of [[], ['--no-stream'], ['--json'], ['--json', '--stream']]) {
      const r = await run(['chat', '--model', 'local/echo', '--no-log', ...extra, `a ${OTHER} b ${OWN} c`]);
      expect(r.code).toBe(0);
      // Was: both printed (only the environment's key, the one sent, was hidden).
      noKey(r);
      if (!extra.length) expect(r.stdout).toBe('a **** b **** c\n');
    }
  });

  it('a key under 8 characters is never hidden; one of 8 is', async () => {
    const r = await run(['chat', '--model', 'local/echo', '--no-log', `${TINY} and ${EIGHT}`]);
    expect(r).toMatchObject({ code: 0, stdout: `${TINY} and ****\n` });
    const logged = await run(['chat', '--model', 'local/echo', '--conversation', 'short', `${TINY} and ${EIGHT}`]);
    expect(logged.code).toBe(0);
    expect((await run(['conversations', 'show', 'short'])).stdout).toBe(`user: ${TINY} and ****\n\nassistant: ${TINY} and ****\n`);
  });
});

describe('chat --json --stream: a key split across chunks', () => {
  it('is hidden: the chunks\' text joined holds **** where the key was', async () => {
    // local/echo streams a piece a chunk ("sk", "-", "rt", …): the key comes in many chunks.
    const r = await run(['chat', '--model', 'local/echo', '--no-log', '--json', '--stream', `the key ${t.apiKey} and ${OTHER} end`]);
    expect(r.code).toBe(0);
    const chunks = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { choices: { delta: { content?: string } }[] });
    expect(chunks.length).toBeGreaterThan(10);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    // Was: the pieces of both keys, one chunk each, that joined give the keys whole.
    expect(text).toBe('the key **** and **** end');
    noKey(r);
  });
});

describe('an error that quotes what was typed', () => {
  it('hides every key the run knows, also one met before the key was read (a --json field, decide)', async () => {
    // Was: `error: unknown JSON field "x sk-rt-…"`, the environment's and a profile's key printed whole.
    for (const key of [t.apiKey, OTHER]) {
      const r = await run(['decide', '--json', `x ${key}`]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('error: unknown JSON field "x ****"');
      noKey(r);
    }
  });
});

describe("a usage error of the flags' parser", () => {
  it('hides every key the run knows in what it quotes', async () => {
    // Was: `error: unknown option '--nope=sk-rt-…'`, and an invalid flag value quoted whole.
    for (const args of [['chat', `--nope=${t.apiKey}`], ['chat', '--model', OTHER, 'hi']]) {
      const r = await run(args);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('****');
      noKey(r);
    }
  });
});
