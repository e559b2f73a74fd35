import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';

// A user of the openai CLI (`openai api RESOURCE.METHOD …`, openai-python's src/openai/cli/_api, its last release
// with one) types its commands and flags at router, and the API's resources it has no command for (speech, batches).
const OPENAI_COMMANDS = ['chat.completions.create', 'completions.create', 'images.generate', 'images.edit', 'images.create_variation',
  'audio.transcriptions.create', 'audio.translations.create', 'files.create', 'files.retrieve', 'files.delete', 'files.list', 'models.list',
  'models.retrieve', 'models.delete', 'fine_tuning.jobs.create', 'fine_tuning.jobs.retrieve', 'fine_tuning.jobs.list', 'fine_tuning.jobs.cancel',
  'fine_tuning.jobs.list_events', 'audio.speech.create', 'batches.create', 'batches.retrieve', 'batches.list', 'batches.cancel', 'embeddings.create'];
// chat.completions.create's flags that router chat takes under no name, or another.
const CHAT_FLAGS = ['-g', '--message', '-M', '-P', '--n'];

const users = emulatorUsers('router-openai-words-');

/** commander's refusal with no word of where to go. */
const BARE = /^error: unknown (?:option|command) '[^']*'(?: \(did you mean [^)]*\))?; see "/;

describe("the openai CLI's words: router's way said, nothing sent", () => {
  it('each of its commands, given to router and to router api', async () => {
    const u = users.user();
    const before = users.emu.requestLog.length;
    for (const word of OPENAI_COMMANDS) {
      const top = await u.run([word, '-m', 'local/echo', '-g', 'user', 'hi']);
      expect(top, word).toMatchObject({ code: 2, stdout: '' });
      expect(top.stderr, word).toContain(`(openai's ${word}`);
      const api = await u.run(['api', word]);
      expect(api, word).toMatchObject({ code: 2, stdout: '' });
      expect(api.stderr, word).toContain(`not a command: openai's ${word}`);
    }
    // `router api batches.cancel` was sent as GET /api/batches.cancel (a 404 that said to give /v1/batches.cancel).
    expect(users.emu.requestLog.length).toBe(before);
  });

  it('a resource of the API alone is not taken for a prompt (router files said `router chat "files"`)', async () => {
    const u = users.user();
    for (const word of ['files', 'images', 'audio', 'fine_tuning', 'completions', 'moderations']) {
      const r = await u.run([word, 'list']);
      expect(r.code, word).toBe(2);
      expect(r.stderr, word).not.toMatch(BARE);
      expect(r.stderr, word).not.toContain('router chat "');
    }
    expect((await u.run(['files', 'create', '-f', 'requests.jsonl'])).stderr).toContain('router batch create FILE sends the JSONL itself');
  });

  it("a batch's words there: retrieve is get, cancel said to be none", async () => {
    const u = users.user();
    const file = join(u.home, 'requests.jsonl');
    writeFileSync(file, '{"custom_id":"a","body":{"messages":[{"role":"user","content":"hi"}]}}\n');
    const id = (await u.run(['batch', 'create', file, '--model', 'local/echo'])).stdout.trim();
    expect(id).toMatch(/^batch_/);
    expect((await u.run(['batch', 'retrieve', id])).stderr).toContain('router batch get ID');
    const cancel = await u.run(['batch', 'cancel', id]);
    expect(cancel).toMatchObject({ code: 2, stdout: '' });
    expect(cancel.stderr).toContain('the service has no way to cancel a batch');
    for (const word of ['status', 'wait', 'delete', 'download']) expect((await u.run(['batch', word, id])).stderr, word).not.toMatch(BARE);
  });

  it('its chat flags given to router chat, its api flags given to router api, its --response-format to speak', async () => {
    const u = users.user();
    for (const flag of CHAT_FLAGS) expect((await u.run(['chat', '--model', 'local/echo', flag, 'user', 'hi'])).stderr, flag).not.toMatch(BARE);
    expect((await u.run(['chat', '-g', 'user', 'hi'])).stderr).toContain('router chat "CONTENT"');
    const api = await u.run(['api', '/v1/chat/completions', '-m', 'local/echo']);
    expect(api.stderr).toContain('chat.completions.create is router chat');
    // api's own flags, mistyped, still get their guess.
    expect((await u.run(['api', '--paginte', '/v1/models'])).stderr).toContain('did you mean --paginate?');
    expect((await u.run(['speak', '--response-format', 'mp3', 'hi'])).stderr).toContain('--format here');
  });

  it('each command a hint names is one of router', async () => {
    const u = users.user();
    const named = new Set<string>();
    for (const word of [...OPENAI_COMMANDS, 'files', 'images', 'audio']) {
      for (const m of (await u.run([word])).stderr.matchAll(/router ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?/g)) named.add(m[2] ? `${m[1]} ${m[2]}` : m[1]!);
    }
    for (const command of named) {
      const help = await u.run([...command.split(' '), '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toContain(`Usage: router ${command.split(' ')[0]!}`);
    }
  });
});
