// An MCP server (stdio) that misbehaves on purpose: `node mcp-fixture-server.mjs MODE [PIDFILE]`.
// Modes: crash (exits during a call), hang (never answers a call, ignores SIGTERM), flood (answers
// 5 MiB; flood-20: 20 MiB), env (answers with its environment), silent (never answers initialize, ignores SIGTERM;
// notes beside PIDFILE what it heard), tty (writes to
// its terminal, /dev/tty, and answers whether it could), log (appends each call's arguments, as they came, to PIDFILE.args).
import { appendFileSync, writeFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const [mode, pidFile] = process.argv.slice(2);
if (mode === 'hang' || mode === 'silent') process.on('SIGTERM', () => {});
if (mode === 'silent') {
  // What it was told, in order, beside its pid file: the end of its stdin (`eof`), SIGTERM (`term`).
  const heard = (what) => pidFile && appendFileSync(`${pidFile}.heard`, `${what}\n`);
  process.stdin.on('end', () => heard('eof')).resume();
  process.on('SIGTERM', () => heard('term'));
}
// Written once what it does on a signal is set: a test that reads it may signal it at once.
if (pidFile) writeFileSync(pidFile, `${process.pid}\n`);
if (mode === 'silent') setInterval(() => {}, 1000);
else {
  const server = new Server({ name: `fixture-${mode}`, version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [{ name: mode, description: `the ${mode} tool`, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request) => {
    if (mode === 'crash') process.exit(3);
    if (mode === 'log') {
      appendFileSync(`${pidFile}.args`, `${JSON.stringify(request.params.arguments)}\n`);
      return { content: [{ type: 'text', text: 'logged' }] };
    }
    if (mode === 'hang') {
      if (pidFile) writeFileSync(`${pidFile}.called`, 'yes\n');
      return new Promise(() => setInterval(() => {}, 1000));
    }
    if (mode === 'tty') {
      try {
        appendFileSync('/dev/tty', 'THE SERVER WROTE ON THE TERMINAL\n');
        return { content: [{ type: 'text', text: 'it wrote on the terminal' }] };
      } catch (err) {
        return { content: [{ type: 'text', text: `no terminal (${err.code})` }] };
      }
    }
    if (mode === 'flood' || mode === 'flood-20') return { content: [{ type: 'text', text: 'x'.repeat((mode === 'flood' ? 5 : 20) * 1024 * 1024) }] };
    return { content: [{ type: 'text', text: JSON.stringify(process.env) }] };
  });
  await server.connect(new StdioServerTransport());
}
