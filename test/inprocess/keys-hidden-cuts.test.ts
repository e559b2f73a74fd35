import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureMain, startCliEnv, type CliEnv } from '../support/cli-env.js';

// The leftovers of "keys never printed" (task k15): a key cut before it was hidden, a key whose `"` or `\` JSON
// escapes, a key split across two Responses events, a key on a stderr path that printed it raw.
let t: CliEnv;
/** Another profile's key, kept in the config file: known to every run, sent by none. */
const OTHER = 'sk-rt-other-profile-0123456789abcdef';
/** A key JSON escapes: `"` and `\` in it (printable ASCII, no spaces, as a key command's output may be). */
const QUOTED = 'sk-rt-q"uo\\ted-0123456789abcdef';

async function run(args: string[], input = '') {
  const { code, out, err } = await captureMain(args, { input: Buffer.from(input), env: { ...process.env, FORCE_COLOR: undefined, ...t.env } });
  return { code, stdout: out.toString('utf8'), stderr: err.toString('utf8') };
}

/** Neither key, nor 8 characters or more of either's start, nor the escaped form of one, in anything printed. */
function noKey(r: { stdout: string; stderr: string }): void {
  for (const key of [t.apiKey, OTHER, QUOTED, JSON.stringify(QUOTED).slice(1, -1)]) {
    expect(r.stdout + r.stderr).not.toContain(key.slice(0, 10));
  }
}

beforeAll(async () => {
  t = await startCliEnv();
  for (const [profile, key] of [['other', OTHER], ['quoted', QUOTED]] as const) {
    expect((await run(['config', 'set', 'api_key', '--profile', profile], key)).code).toBe(0);
  }
});
afterAll(() => t.close());

describe('a text cut short is cut after its keys are hidden', () => {
  it('roles list: a system prompt cut at 80 characters', async () => {
    // 70 letters, then the key: the old cut left its first 10 characters, under the 16 hidden wherever they stand.
    expect((await run(['roles', 'save', 'cut', '--system', `${'x'.repeat(70)}${OTHER} more`])).code).toBe(0);
    const r = await run(['roles', 'list']);
    expect(r.stdout).toContain(`cut\t\t${'x'.repeat(70)}**** more\n`);
    noKey(r);
  });

  it('conversations list and logs: a title cut at 60 characters when it was kept', async () => {
    // The cut leaves 13 characters and "…": past the key's kind (`sk-rt-other-`, which alone would be shown).
    expect((await run(['chat', '--conversation', 'titled', '--model', 'local/echo', `${'y'.repeat(45)} ${OTHER} end`])).code).toBe(0);
    const list = await run(['conversations', 'list']);
    expect(list.stdout).toMatch(new RegExp(`^titled\\t.*\\t${'y'.repeat(45)} \\*\\*\\*\\*…\\n`, 'm'));
    const json = await run(['conversations', 'list', '--json']);
    expect(JSON.parse(json.stdout).find((c: { id: string }) => c.id === 'titled').title).toBe(`${'y'.repeat(45)} ****…`);
    for (const r of [list, json, await run(['logs', '--json', '-c', 'titled']), await run(['logs', '-c', 'titled'])]) noKey(r);
  });

  it('fragments list: a preview cut at 100 characters', async () => {
    const file = join(t.dir, 'long-note.txt');
    writeFileSync(file, `${'z'.repeat(85)} ${OTHER} end\n`);
    expect((await run(['fragments', 'set', 'long-note', file])).code).toBe(0);
    const r = await run(['fragments', 'list']);
    expect(r.stdout).toMatch(new RegExp(`\\t${'z'.repeat(85)} \\*\\*\\*\\*…\\n`));
    noKey(r);
    noKey(await run(['fragments', 'list', '--json']));
  });

  it("--verbose tool traces: a tool's result cut at 200 characters", async () => {
    const tools = join(t.dir, 'keyed-tools.json');
    // The key comes from a file the tool reads: one written in its command line is refused before it runs (docs/keys.md).
    const keyFile = join(t.dir, 'tool-prints-this.txt');
    writeFileSync(keyFile, OTHER);
    writeFileSync(tools, JSON.stringify([{ type: 'function', function: { name: 'get_weather', description: 'weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } }, command: `printf "%0190d" 0; cat '${keyFile}'` }]));
    const r = await run(['chat', '--verbose', '--no-log', '--model', 'local/tools', '--tools', tools, 'weather in Paris']);
    expect(r.code).toBe(0);
    // Was: 190 zeros and the key's first 10 characters, then "… (226 characters)".
    expect(r.stderr).toContain(`  result: ${'0'.repeat(190)}****\n`);
    noKey(r);
  });
});

describe('a key that JSON escapes (a `"` or a `\\` in it)', () => {
  it('chat and responses --no-stream --json, and the streamed JSON lines', async () => {
    for (const args of [['chat', '--no-stream'], ['responses', '--no-stream'], ['chat', '--stream'], ['responses', '--stream']]) {
      const r = await run([...args, '--json', '--no-log', '--model', 'local/echo', `a ${QUOTED} b`]);
      expect(r.code).toBe(0);
      // Was: the JSON text searched for the key as typed, where it stands as `q\"uo\\ted`: printed whole.
      noKey(r);
      if (args[1] === '--no-stream') expect(JSON.parse(r.stdout)).toMatchObject(args[0] === 'chat' ? { choices: [{ message: { content: 'a **** b' } }] } : { output_text: 'a **** b' });
    }
  });

  it('router api: a body that echoes it, found in its escaped form', async () => {
    const body = join(t.dir, 'body.json');
    writeFileSync(body, JSON.stringify({ model: 'local/echo', messages: [{ role: 'user', content: `a ${QUOTED} b` }] }));
    const r = await run(['api', '-X', 'POST', '/v1/chat/completions', '--input', body]);
    expect(r.code).toBe(0);
    noKey(r);
    expect(JSON.parse(r.stdout).choices[0].message.content).toBe('a **** b');
  });
});

describe('responses --json --stream: a key split across events', () => {
  it("is hidden in the deltas joined; each event printed once, with its own sequence_number, in order", async () => {
    // local/echo streams a piece an event ("sk", "-", "rt", …): each key comes in many deltas.
    const r = await run(['responses', '--json', '--stream', '--no-log', '--model', 'local/echo', `the key ${t.apiKey} and ${OTHER} end`]);
    expect(r.code).toBe(0);
    const events = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; sequence_number: number; delta?: string; text?: string });
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    expect(deltas.length).toBeGreaterThan(10);
    // Was: the key's pieces, one an event, which joined give it whole.
    expect(deltas.map((e) => e.delta).join('')).toBe('the key **** and **** end');
    expect(events.find((e) => e.type === 'response.output_text.done')?.text).toBe('the key **** and **** end');
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    noKey(r);
  });
});

describe('stderr, on the paths that wrote it raw', () => {
  it("`router help KEY` and an unknown option's text quoting it", async () => {
    for (const args of [['help', OTHER], ['chat', `-Z ${OTHER}'s`]]) {
      const r = await run(args);
      expect(r.code).toBe(2);
      // Was: `error: unknown command 'sk-rt-…'` and the dashed text quoted whole.
      expect(r.stderr).toContain('****');
      noKey(r);
    }
  });
});
