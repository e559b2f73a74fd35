import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';

// A user of the openai CLI or of another OpenRouter client has their key in OPENAI_API_KEY or OPENROUTER_API_KEY;
// router reads ROUTER_API_KEY alone. Where it finds no key, it says the other is set and not read (never its value).
const users = emulatorUsers('router-other-key-env-');

describe("another tool's key variable, where router has no key", () => {
  for (const name of ['OPENROUTER_API_KEY', 'OPENAI_API_KEY']) {
    it(`${name} set: named, not read, not shown; nothing sent`, async () => {
      const u = users.user();
      const key = users.emu.store.firstKeys().apiKey;
      const before = users.emu.requestLog.length;
      const env = { ROUTER_API_KEY: '', ROUTER_MANAGEMENT_KEY: '', [name]: key };
      for (const args of [['chat', '--model', 'local/echo', 'hi'], ['speak', '--model', 'local/tts', '--voice', 'alloy', '-o', 'x.mp3', 'hi']]) {
        const r = await u.run(args, { env });
        expect(r, args[0]).toMatchObject({ code: 3, stdout: '' });
        expect(r.stderr, args[0]).toContain(`(${name} is set, and not read: router's is ROUTER_API_KEY, as in export ROUTER_API_KEY="$${name}")`);
        expect(r.stderr).not.toContain(key.slice(12));
      }
      expect(users.emu.requestLog.length).toBe(before);
    });
  }

  it('with a key of its own, another variable set is none of its business', async () => {
    const u = users.user();
    const r = await u.run(['chat', '--model', 'local/echo', 'hi'], { env: { OPENAI_API_KEY: 'sk-elsewhere-0123456789' } });
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n', stderr: '' });
    const none = await u.run(['chat', '--model', 'local/echo', 'hi'], { env: { ROUTER_API_KEY: '' } });
    expect(none.stderr).toBe('error: no API key for profile "default": set ROUTER_API_KEY, or run "router login"\n');
  });
});
