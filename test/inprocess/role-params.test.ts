import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInProcessEnv, type InProcessEnv } from '../support/inprocess-env.js';
import { fillPlaceholders, fillPrompt, PlaceholderError } from '../../src/kit/index.js';

// llm's template parameters: a role's $name filled by --param NAME VALUE, else its defaults; $input is the prompt.
describe('the library', () => {
  it('fills $name and ${name}, $$ is a $, a $ before anything else stays', () => {
    expect(fillPlaceholders('In ${lang}: $lang costs $$5, $5 or $ x', { lang: 'French' })).toBe('In French: French costs $5, $5 or $ x');
  });

  it('names every missing value of both texts at once', () => {
    const err = (() => {
      try {
        fillPrompt({ system: 'Speak $lang', prompt: '$tone: $input' }, 'hi', {}, { of: 'role r' });
      } catch (e) {
        return e;
      }
    })() as PlaceholderError;
    expect(err).toBeInstanceOf(PlaceholderError);
    expect(err.missing).toEqual(['lang', 'tone']);
    expect(err.message).toBe('role r: no value for $lang, $tone');
  });

  it('values over defaults; without a prompt text the input is the prompt, never read for placeholders', () => {
    expect(fillPrompt({ system: 'Speak $lang' }, 'costs $x', { lang: 'German' }, { defaults: { lang: 'French' } })).toEqual({ system: 'Speak German', prompt: 'costs $x' });
    expect(fillPrompt({ prompt: 'Translate: $input' }, 'costs $x', {})).toEqual({ prompt: 'Translate: costs $x' });
  });
});

let t: InProcessEnv;
beforeAll(async () => {
  t = await startInProcessEnv();
  await t.run(['roles', 'save', 'speak', '--system', 'Answer in $lang.', '--model', 'local/echo']);
});
afterAll(() => t.close());

const messages = async (args: string[]) => {
  const r = await t.run([...args, '--dry-run']);
  expect(r.code, r.stderr).toBe(0);
  return (JSON.parse(r.stdout) as { messages: { role: string; content: string }[] }).messages;
};

describe('chat --role with placeholders', () => {
  it('a missing value is one error naming it, exit 2, nothing sent', async () => {
    for (const args of [['chat', '--role', 'speak', 'hi'], ['chat', '--role', 'speak', '--dry-run', 'hi']]) {
      const r = await t.run(args);
      expect(r).toMatchObject({ code: 2, stdout: '', stderr: 'error: role speak: no value for $lang (give --param lang VALUE; $$ writes a literal $)\n' });
    }
  });

  it('--param NAME VALUE (as llm takes it) and --param NAME=VALUE fill it', async () => {
    expect(await messages(['chat', '--role', 'speak', '--param', 'lang', 'German', 'hi'])).toEqual([{ role: 'system', content: 'Answer in German.' }, { role: 'user', content: 'hi' }]);
    expect((await messages(['chat', '--role', 'speak', '--param', 'lang=Dutch', 'costs $5 in $HOME']))).toEqual([{ role: 'system', content: 'Answer in Dutch.' }, { role: 'user', content: 'costs $5 in $HOME' }]);
    const sent = await t.run(['chat', '--role', 'speak', '--param', 'lang', 'German', 'hi']);
    expect(sent).toMatchObject({ code: 0, stdout: 'hi\n' });
  });

  it('a role keeps defaults and a prompt text with $input; --param goes over a default', async () => {
    const saved = await t.run(['roles', 'save', 'translate', '--system', 'Be exact.', '--prompt', 'Translate to $lang: $input', '--default', 'lang', 'French', '--model', 'local/echo']);
    expect(saved.code, saved.stderr).toBe(0);
    expect(await messages(['chat', '--role', 'translate', 'hello'])).toEqual([{ role: 'system', content: 'Be exact.' }, { role: 'user', content: 'Translate to French: hello' }]);
    expect((await messages(['chat', '--role', 'translate', '--param', 'lang', 'Welsh', 'hello']))[1]!.content).toBe('Translate to Welsh: hello');
    const shown = (await t.run(['roles', 'show', 'translate'])).stdout;
    expect(shown).toContain('prompt: "Translate to $lang: $input"\n');
    expect(shown).toContain('defaults:\n  lang: French\n');
  });

  it('roles save says which --param a role takes', async () => {
    const saved = await t.run(['roles', 'save', 'tone', '--system', 'Write $tone in $lang, for $$1.']);
    expect(saved.stderr).toContain('note: role tone takes --param tone VALUE, --param lang VALUE (its $tone, $lang; $$ writes a literal $)');
  });

  it('a --param the role has no place for is said; --param without --role is refused', async () => {
    const r = await t.run(['chat', '--role', 'speak', '--param', 'lang', 'German', '--param', 'lnag', 'x', '--dry-run', 'hi']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: role speak has no $lnag: --param lnag left unused');
    expect(await t.run(['chat', '--param', 'lang', 'x', '--model', 'local/echo', 'hi'])).toMatchObject({ code: 2, stderr: expect.stringContaining('--param gives a role') });
  });

  it('--param NAME as the last word is refused, not read as $NAM', async () => {
    const r = await t.run(['chat', '--role', 'speak', '--dry-run', 'hi', '--param', 'lang']);
    expect(r).toMatchObject({ code: 2, stdout: '' });
    expect(r.stderr).toContain('lang has no value');
  });

  it('$input is the prompt: --param input and --default input are refused, not dropped', async () => {
    const r = await t.run(['chat', '--role', 'speak', '--param', 'lang', 'x', '--param', 'input', 'X', '--dry-run', 'hi']);
    expect(r).toMatchObject({ code: 2, stdout: '', stderr: expect.stringContaining('$input is the prompt given') });
    const saved = await t.run(['roles', 'save', 'inputdefault', '--system', 'S', '--prompt', 'Q: $input', '--default', 'input', 'zzz']);
    expect(saved).toMatchObject({ code: 2, stderr: expect.stringContaining('$input is the prompt given') });
    expect((await t.run(['roles', 'list'])).stdout).not.toContain('inputdefault');
  });

  it('a prompt text without $input says the prompt given is not sent', async () => {
    expect((await t.run(['roles', 'save', 'fixed', '--system', 'S', '--prompt', 'Say hi', '--model', 'local/echo'])).code).toBe(0);
    const r = await t.run(['chat', '--role', 'fixed', '--dry-run', 'my question']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('warning: role fixed has no $input: the prompt given is not sent');
    expect((await t.run(['chat', '--role', 'translate', '--dry-run', 'hello'])).stderr).not.toContain('no $input');
  });

  it('a --system typed goes over the role and is not filled', async () => {
    expect((await messages(['chat', '--role', 'speak', '--system', 'Pay $5', 'hi']))[0]).toEqual({ role: 'system', content: 'Pay $5' });
  });
});

describe('responses --role', () => {
  it('fills the instructions', async () => {
    const r = await t.run(['responses', '--role', 'speak', '--param', 'lang', 'German', '--dry-run', 'hi']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).instructions).toBe('Answer in German.');
    expect(await t.run(['responses', '--role', 'speak', 'hi'])).toMatchObject({ code: 2, stderr: expect.stringContaining('no value for $lang') });
  });
});
