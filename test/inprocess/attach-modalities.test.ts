import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';
import { encodePng } from '../../src/emulator/models/png.js';

// An attachment the named model does not take (its input modalities in the model list) is refused before anything is
// sent, naming the way out: a text file goes in the prompt with -f, as llm's fragments. Was: sent, and the
// service's 400 ("local/echo does not take file input") named none.
let t: CliEnv;
const sent = sharedCliEnv((env) => (t = env));
const completions = () => sent('/v1/chat/completions').length + sent('/v1/responses').length;

describe('attachments a model does not take', () => {
  it('a text file to a text-only model: refused before sending, -f named; -f sends its words', async () => {
    const notes = join(t.dir, 'notes.txt');
    writeFileSync(notes, 'the door code is 4711\n');
    for (const command of ['chat', 'responses']) {
      const r = await t.run([command, '--model', 'local/echo', '-a', notes, 'what is the code?']);
      expect(r, command).toMatchObject({ code: 2, stdout: '' });
      expect(r.stderr, command).toBe(`error: --attach ${notes}: local/echo takes text input, not a file (text/plain); -f ${notes} puts a text file in the prompt; nothing was sent\n`);
    }
    const piped = await t.run(['chat', '--model', 'local/echo', '-a', '-', 'code?'], { input: 'the door code is 4711\n' });
    expect(piped).toMatchObject({ code: 2, stderr: 'error: --attach -: local/echo takes text input, not a file (text/plain); give the text as the prompt (echo … | router chat); nothing was sent\n' });
    expect(completions()).toBe(0);
    // The way out named works: the text reaches the model.
    expect((await t.run(['chat', '--model', 'local/echo', '-f', notes, 'what is the code?'])).stdout).toContain('the door code is 4711');
  });

  it('an image to a text-only model names models that take one; a model that takes it is sent it', async () => {
    const photo = join(t.dir, 'photo.png');
    writeFileSync(photo, encodePng(2, 2, () => [255, 0, 0]));
    const r = await t.run(['chat', '--model', 'local/echo', '-a', photo, 'what is it?']);
    expect(r).toMatchObject({ code: 2, stderr: `error: --attach ${photo}: local/echo takes text input, not image; models that do: router models --input-modality image; nothing was sent\n` });
    expect(completions()).toBe(0);
    const taken = await t.run(['chat', '--model', 'local/vision', '-a', photo, '-a', join(t.dir, 'photo.png'), 'what is it?']);
    expect(taken.code, taken.stderr).toBe(0);
    expect(completions()).toBe(1);
  });

  it('a model the list does not hold is left to the service (its 400 with a guess), as before', async () => {
    const notes = join(t.dir, 'notes.txt');
    writeFileSync(notes, 'x\n');
    const r = await t.run(['chat', '--model', 'local/ech', '-a', notes, 'x']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/did you mean local\/echo\?/);
  });
});
