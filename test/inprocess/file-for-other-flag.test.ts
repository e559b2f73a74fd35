import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';

// A file given to the flag next to the one it is for (--mcp tools.json, --schema tools.json, --mcp schema.json)
// is named for what it is and the flag that takes it, as --tools schema.json and --tools mcp.json already were:
// not "the command was not found" nor "an array, not a JSON schema object".
let t: CliEnv;
const TOOLS = [{ type: 'function', function: { name: 'get_weather', description: 'w', parameters: { type: 'object', properties: { city: { type: 'string' } } } }, command: 'echo sunny' }];
beforeAll(async () => {
  t = await startCliEnv();
  writeFileSync(join(t.dir, 'tools.json'), JSON.stringify(TOOLS));
  writeFileSync(join(t.dir, 'flat-tools.json'), JSON.stringify([{ type: 'function', name: 'now', parameters: { type: 'object', properties: {} } }]));
  writeFileSync(join(t.dir, 'schema.json'), JSON.stringify({ type: 'object', properties: { a: { type: 'string' } } }));
  writeFileSync(join(t.dir, 'mcp.json'), JSON.stringify({ mcpServers: { e: { command: 'mcp-server-everything', args: ['stdio'] } } }));
});
afterAll(() => t.close());

const sends = () => t.requests().filter((r) => r.method === 'POST').length;
const run = (args: string[]) => t.run(args, { cwd: t.dir });

describe('a file given to the wrong flag', () => {
  it('--mcp with a tools file or a schema file names the flag for it, in chat and responses; nothing is sent', async () => {
    const before = sends();
    for (const command of ['chat', 'responses']) {
      for (const file of ['tools.json', 'flat-tools.json']) {
        expect(await run([command, '--model', 'local/tools', '--mcp', file, 'hi'])).toMatchObject({ code: 12, stdout: '', stderr: `error: MCP server ${file}: could not start: it is a file of tools, not a server: give it as --tools ${file}\n` });
      }
      expect(await run([command, '--model', 'local/tools', '--mcp', 'schema.json', 'hi'])).toMatchObject({ code: 12, stderr: 'error: MCP server schema.json: could not start: it is a JSON schema, not a server: --schema schema.json asks for an answer that follows it\n' });
    }
    expect(sends()).toBe(before);
  });

  it('--schema with a tools file or a file of MCP servers names the flag for it; nothing is sent', async () => {
    const before = sends();
    expect(await run(['chat', '--model', 'local/echo', '--schema', 'tools.json', 'hi'])).toMatchObject({ code: 2, stderr: 'error: --schema: tools.json: it is a file of tools, not a schema: give it as --tools tools.json\n' });
    const servers = await run(['chat', '--model', 'local/echo', '--schema', 'mcp.json', 'hi']);
    expect(servers).toMatchObject({ code: 2, stderr: 'error: --schema: mcp.json: it is a file of MCP servers ("mcpServers"), not a schema: give each server as --mcp COMMAND or --mcp URL, as --mcp \'mcp-server-everything stdio\'\n' });
    expect(sends()).toBe(before);
  });

  it('leaves the words for other files as they were', async () => {
    expect((await run(['chat', '--model', 'local/echo', '--schema', '[1]', 'hi'])).stderr).toContain('is an array, not a JSON schema object');
    expect((await run(['chat', '--model', 'local/tools', '--mcp', 'mcp.json', 'hi'])).stderr).toContain('could not start: it is a file of MCP servers ("mcpServers"), not a server');
    expect((await run(['chat', '--model', 'local/echo', '--schema', 'schema.json', 'hi'])).code).toBe(0);
  });
});
