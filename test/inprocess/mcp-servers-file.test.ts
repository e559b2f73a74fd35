import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { emulatorUsers } from '../support/users.js';

// A user of Claude Desktop, Cursor, VS Code or crush keeps MCP servers in a JSON file and gives it to --mcp.
// router read it as a command: "the command was not found" (mcp.json) or "chmod +x it" (./mcp.json).
const FILES: Record<string, unknown> = {
  mcpServers: { mcpServers: { everything: { command: 'mcp-server-everything', args: ['stdio'] }, web: { url: 'http://127.0.0.1:3001/mcp' } } },
  servers: { servers: { fs: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '/my notes'] } } },
  mcp: { mcp: { everything: { type: 'stdio', command: 'mcp-server-everything', args: ['stdio'] } } },
};
const SHOWN: Record<string, string> = {
  mcpServers: `--mcp 'mcp-server-everything stdio' --mcp http://127.0.0.1:3001/mcp`,
  servers: `--mcp 'npx -y @modelcontextprotocol/server-filesystem '\\''/my notes'\\'''`,
  mcp: `--mcp 'mcp-server-everything stdio'`,
};

const users = emulatorUsers('router-mcp-servers-file-');

describe("--mcp given another program's file of MCP servers", () => {
  for (const [key, content] of Object.entries(FILES)) {
    it(`"${key}": said to be a file of servers, each as the --mcp that starts it; no model asked`, async () => {
      const u = users.user();
      const file = join(u.home, 'mcp.json');
      writeFileSync(file, JSON.stringify(content));
      const before = users.emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).length;
      for (const given of [file, join(u.home, '.', 'mcp.json')]) {
        const r = await u.run(['chat', '--model', 'local/tools', '--mcp', given, 'hi']);
        expect(r).toMatchObject({ code: 12, stdout: '' });
        expect(r.stderr).toContain(`could not start: it is a file of MCP servers ("${key}"), not a server: give each server as --mcp COMMAND or --mcp URL, as ${SHOWN[key]}`);
      }
      chmodSync(file, 0o755);
      expect((await u.run(['chat', '--model', 'local/tools', '--mcp', file, 'hi'])).stderr).toContain('it is a file of MCP servers');
      expect(users.emu.requestLog.filter((e) => e.path.endsWith('/chat/completions')).length).toBe(before);
    });
  }

  it('a JSON file of anything else is still a command not found', async () => {
    const u = users.user();
    const file = join(u.home, 'other.json');
    writeFileSync(file, '{"a": 1}');
    const r = await u.run(['chat', '--model', 'local/tools', '--mcp', file, 'hi']);
    expect(r.code).toBe(12);
    expect(r.stderr).not.toContain('file of MCP servers');
  });
});
