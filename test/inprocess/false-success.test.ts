import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../support/cli-env.js';
import { startBadServer, type BadServer, type Misbehaviour } from '../support/bad-server.js';

// No false success: a stream that breaks in any way ends with one error line and a non-zero code,
// for chat, chat --stream --json and responses (a hang is the test's own timeout, never a wall-clock assert).
// The timeout: 15 s where the failure must come before it (a loaded machine moves 64 MiB slowly); where the
// timeout is the failure, 500 ms.
const KINDS: [Misbehaviour, RegExp, number, string][] = [
  ['malformed-then-flood', /malformed stream event/, 7, '15'],
  ['malformed-then-stall', /malformed stream event/, 7, '15'],
  ['huge-line', /larger than 64 MiB/, 7, '15'],
  ['error-then-stall', /the provider failed mid-stream/, 7, '15'],
  ['headers-then-stall', /timed out/, 8, '500ms'],
];
const COMMANDS: [string, string[]][] = [
  ['chat', ['chat', '--model', 'x/y', 'hi']],
  ['chat --stream --json', ['chat', '--stream', '--json', '--model', 'x/y', 'hi']],
  ['responses', ['responses', '--model', 'x/y', 'hi']],
];

for (const [kind, message, code, timeout] of KINDS) {
  describe(kind, () => {
    let server: BadServer;
    beforeAll(async () => {
      server = await startBadServer(kind);
    });
    afterAll(() => server.close());
    for (const [name, args] of COMMANDS) {
      it(name, async () => {
        const r = await runCliInProcess(['--timeout', timeout, '--max-retries', '0', ...args], {
          env: { ROUTER_API_ROOT: server.apiRoot, ROUTER_API_KEY: 'sk-test-key-000000', ROUTER_CONFIG_DIR: '/nonexistent-router-config', ROUTER_PROFILE: '' },
        });
        expect(r.code).toBe(code);
        expect(r.stderr).toMatch(message);
        expect(r.stderr.trim().split('\n')).toHaveLength(1);
        if (!args.includes('--json')) expect(r.stdout).toMatch(/^partial/);
      });
    }
  });
}
