import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';
import { startedForAll } from '../support/for-all.js';

// An empty text (an unset shell variable, "$X" with X mistyped) is a slip, not a request: the
// service would be paid to embed nothing, judge nothing, or follow an empty instruction.
const t = startedForAll(() => startCliEnv());

const env = () => ({ ROUTER_MANAGEMENT_KEY: t.managementKey });
const posts = () => t.requests().filter((r) => r.method === 'POST').length;
const speak = ['speak', 'hi', '--model', 'local/tts', '--voice', 'alloy'];
const decide = ['decide', '--model', 'local/judge', '--state-text', 'the food was cold'];

describe('a blank text value is one line, exit 2, and nothing is sent', () => {
  const cases: [string[], string][] = [
    [['embed', '', '--model', 'local/embed'], 'error: argument 1 is blank: there is nothing to embed in it'],
    [['chat', '', '--model', 'local/echo'], 'error: no prompt: the argument is blank (an unset or empty "$VAR"?), and stdin was empty'],
    [['chat', ' ', '', '--model', 'local/echo'], 'error: no prompt: the arguments are blank (an unset or empty "$VAR"?), and stdin was empty'],
    [['--no-stdin', 'chat', '', '--model', 'local/echo'], 'error: no prompt: the argument is blank (an unset or empty "$VAR"?)'],
    [['responses', '', '--model', 'local/echo'], 'error: no prompt: the argument is blank (an unset or empty "$VAR"?), and stdin was empty'],
    [[...speak.slice(0, 1), '', ...speak.slice(2), '-o', 'x.mp3'], 'error: no text: the argument is blank (an unset or empty "$VAR"?)'],
    [['embed', 'a', '  ', '--model', 'local/embed'], 'error: argument 2 is blank: there is nothing to embed in it'],
    [['embed', 'a', '--model', 'local/embed', '--user', ''], `error: option '--user <id>' argument '' is invalid: must not be empty; see "router embed --help"`],
    [['embed', 'a', '--model', 'local/embed', '--input-type', ''], `error: option '--input-type <type>' argument '' is invalid: must not be empty; see "router embed --help"`],
    [['chat', 'hi', '--model', 'local/echo', '-s', ''], `error: option '-s, --system <text>' argument '' is invalid: must not be empty; see "router chat --help"`],
    [['chat', 'hi', '--model', 'local/echo', '--stop', 'x', '--stop', ''], `error: option '--stop <seq>' argument '' is invalid: must not be empty; see "router chat --help"`],
    [['chat', 'hi', '--model', 'local/echo', '--session', ''], `error: option '--session <id>' argument '' is invalid: must not be empty; see "router chat --help"`],
    [['chat', 'hi', '--model', 'local/echo', '--user', ' '], `error: option '--user <id>' argument ' ' is invalid: must not be empty; see "router chat --help"`],
    [['responses', 'hi', '--model', 'local/echo', '--instructions', ' '], `error: option '--instructions <text>' argument ' ' is invalid: must not be empty; see "router responses --help"`],
    [['responses', 'hi', '--model', 'local/echo', '--session', ''], `error: option '--session <id>' argument '' is invalid: must not be empty; see "router responses --help"`],
    [[...speak, '--instructions', '', '-o', 'x.mp3'], `error: option '--instructions <text>' argument '' is invalid: must not be empty; see "router speak --help"`],
    [[...speak, '--user', '', '-o', 'x.mp3'], `error: option '--user <id>' argument '' is invalid: must not be empty; see "router speak --help"`],
    [['decide', '--model', 'local/judge', '--state-text', '', '--noul', 'spam', 'Is this spam?'], 'error: --state-text is empty'],
    [['decide', '--model', 'local/judge', '--state-text', ' ', '--noul', 'spam', 'Is this spam?'], 'error: --state-text is empty'],
    [[...decide, '--noul', 'spam', ''], 'error: --noul spam: the instructions are blank'],
    [[...decide, '--noul', ' ', 'Is this spam?'], 'error: --noul: the question key is blank'],
    [[...decide, '--noul', 'spam', 'Is it?', '--true', 'yes', '--false', ''], 'error: --noul spam: --false "" has a blank description'],
    [[...decide, '--score', 'mood', 'How?', '--level', '', '--level', 'good'], 'error: --score mood: --level "" has a blank description'],
    [[...decide, '--choice', 'c', 'Which?', '--option', 'a=', '--option', 'b=x'], 'error: --choice c: --option "a=" has a blank description'],
    [[...decide, '--choice', 'c', 'Which?', '--option', ' =x', '--option', 'b=x'], 'error: --option must be key=description, got " =x"'],
    [[...decide, '--noul', 'spam', 'Is it?', '--session', ''], `error: option '--session <id>' argument '' is invalid: must not be empty; see "router decide --help"`],
  ];
  for (const [args, line] of cases) {
    it(args.map((a) => (a.trim() ? a : `'${a}'`)).join(' '), async () => {
      const before = posts();
      expect(await t.run(args, { cwd: t.dir, env: env() })).toMatchObject({ code: 2, stdout: '', stderr: `${line}\n` });
      expect(posts()).toBe(before);
    });
  }

  it('a blank line of an embed file is skipped, a blank JSON string in it is refused', async () => {
    const plain = join(t.dir, 'with-blank-lines.txt');
    writeFileSync(plain, 'a\n\n   \nb\n');
    const r = await t.run(['embed', '--file', plain, '--model', 'local/embed', '--dimensions', '2', '--jsonl']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim().split('\n').map((l) => JSON.parse(l).input)).toEqual(['a', 'b']);
    const json = join(t.dir, 'blank-json.txt');
    writeFileSync(json, '"a"\n{"input": " "}\n');
    const before = posts();
    expect(await t.run(['embed', '--file', json, '--model', 'local/embed'])).toMatchObject({ code: 2, stderr: 'error: line 2: the input is blank: there is nothing to embed in it\n' });
    expect(posts()).toBe(before);
  });

  it('what looks blank but says something still goes: a space as a stop sequence, an empty metadata value', async () => {
    const r = await t.run(['chat', 'hi there', '--model', 'local/echo', '--stop', ' ', '--metadata', 'k=', '--no-stream']);
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
    const sent = t.requests().filter((q) => q.path.endsWith('/chat/completions')).at(-1)!;
    expect(sent.body.stop).toEqual([' ']);
    expect(sent.body.metadata).toEqual({ k: '' });
  });

  it('a setting in the environment that is blank is unset, and spaces around one are dropped (ROUTER_MODEL, ROUTER_VOICE, …)', async () => {
    const before = posts();
    const noVoice = await t.run(['speak', 'hi', '--model', 'local/tts', '-o', 'x.mp3'], { cwd: t.dir, env: { ...env(), ROUTER_VOICE: ' ' } });
    expect(noVoice).toMatchObject({ code: 2, stderr: 'error: no voice: give --voice (e.g. alloy), or set a default: router config set voice alloy\n' });
    const noModel = await t.run(['embed', 'a'], { env: { ROUTER_EMBED_MODEL: '  ' } });
    expect(noModel).toMatchObject({ code: 2, stderr: expect.stringMatching(/^error: no model: give --model/) });
    expect(posts()).toBe(before);
    const spoken = await t.run(['speak', 'hi', '-o', join(t.dir, 'trimmed.mp3')], { env: { ...env(), ROUTER_VOICE: ' alloy ', ROUTER_SPEECH_MODEL: ' local/tts\t' } });
    expect(spoken.code).toBe(0);
    expect(t.requests().filter((q) => q.path.endsWith('/audio/speech')).at(-1)!.body).toMatchObject({ voice: 'alloy', model: 'local/tts' });
    const chatted = await t.run(['chat', 'hi', '--no-stream'], { env: { ROUTER_MODEL: ' local/echo ' } });
    expect(chatted).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect(t.requests().at(-1)!.body.model).toBe('local/echo');
    // A blank ROUTER_API_ROOT is no root: the profile's is taken.
    const config = join(t.dir, 'root-in-profile');
    expect((await t.run(['config', 'set', 'api_root', t.apiRoot], { env: { ROUTER_CONFIG_DIR: config } })).code).toBe(0);
    const fromProfile = await t.run(['chat', '--model', 'local/echo', 'via the profile'], { env: { ROUTER_CONFIG_DIR: config, ROUTER_API_ROOT: ' ' } });
    expect(fromProfile).toMatchObject({ code: 0, stdout: 'via the profile\n' });
  });

  it('config set takes a value as the environment does: a blank one is refused, spaces around one dropped', async () => {
    const config = { ROUTER_CONFIG_DIR: join(t.dir, 'set-blank') };
    expect(await t.run(['config', 'set', 'voice', ' '], { env: config })).toMatchObject({ code: 2, stderr: 'error: voice must not be empty (an unset variable?); router config unset voice removes it\n' });
    expect(await t.run(['config', 'get', 'voice'], { env: config })).toMatchObject({ code: 5 });
    expect((await t.run(['config', 'set', 'voice', ' alloy '], { env: config })).code).toBe(0);
    expect((await t.run(['config', 'set', 'model', 'local/echo '], { env: config })).code).toBe(0);
    expect(await t.run(['config', 'get', 'voice'], { env: config })).toMatchObject({ code: 0, stdout: 'alloy\n' });
    expect(await t.run(['config', 'get', 'model'], { env: config })).toMatchObject({ code: 0, stdout: 'local/echo\n' });
  });
});
