import { expect, it } from 'vitest';
import { runKeyCommand } from '../../src/config/key-command.js';

// Cuts of a key command's stderr (k16): a bound that stopped reading in the middle of a line left that line's end,
// which could be a key's start, as what the command said last.
const KEY = 'sk-rt-v1-0123456789abcdef0123456789abcdef';

it("a key command's stderr past its bound: the line the bound cut is not said", async () => {
  // 4,100 characters, then a line whose key the bound cut after 12 characters (the rest written later, not read).
  const command = `printf '%4100s\\nError: bad key ${KEY.slice(0, 12)}' x >&2; sleep 0.3; printf '${KEY.slice(12)}\\n' >&2; exit 1`;
  const said = await runKeyCommand(command, 'api_key_command', { PATH: process.env.PATH }).then(() => '', (err: Error) => err.message);
  expect(said).toMatch(/^api_key_command failed \(exit 1\)/);
  expect(said).not.toContain(KEY.slice(0, 10));
});

// Read late (a busy process), the lines past the bound came in the same read as the bound's: they were said whole.
it("a key command's stderr past its bound in one read: nothing past the bound is said", async () => {
  const command = `printf '%4100s\\nError: bad key ${KEY}\\n' x >&2; exit 1`;
  const said = await runKeyCommand(command, 'api_key_command', { PATH: process.env.PATH }).then(() => '', (err: Error) => err.message);
  expect(said).toMatch(/^api_key_command failed \(exit 1\)/);
  expect(said).not.toContain(KEY.slice(0, 10));
});
