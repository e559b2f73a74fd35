import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BIN } from '../helpers.js';
import { terminalsOnEmulator } from '../support/terminal-file.js';
import { HAS_TMUX } from '../support/tmux.js';

// What an MCP server asks for on a terminal (tmux): a sampling request is asked before it is sent, a form a question
// a field (@inquirer/prompts), against server-everything and the emulator.
const ROOT = resolve(import.meta.dirname, '..', '..');
const EVERYTHING = `node ${join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')} stdio`;
const router = `node ${BIN}`;

const open = terminalsOnEmulator(() => {});

describe.skipIf(!HAS_TMUX)('an MCP server asks, on a terminal', () => {
  it('a sampling request without --mcp-sampling is asked; yes sends it to the model', async () => {
    const term = await open();
    // local/tools gives the tool's maxTokens a whole 16 for this prompt (the SDK takes only integers).
    term.run(`${router} chat --model local/tools --mcp "${EVERYTHING}" "trigger-sampling-request 36"`);
    await term.waitFor(/MCP server mcp-servers\/everything asks the model \(100 tokens at most\): "Resource trigger-sampling-request context: trigger-sampling-request 36"\. Send it\?/);
    term.keys('y', 'Enter');
    await term.waitFor(/sampling for mcp-servers\/everything: .* -> local\/tools/);
    await term.waitFor(/"text": "Resource trigger-sampling-request context: trigger-sampling-request 36"/);
    expect(await term.lastExit()).toBe(0);
  });

  it("server-everything's form: a question a field, the answers sent back to the server", async () => {
    const term = await open();
    term.run(`${router} chat --model local/tools --mcp "${EVERYTHING}" "trigger-elicitation-request"`);
    await term.waitFor(/MCP server mcp-servers\/everything asks: Please provide inputs/);
    await term.waitFor(/String \(Your full, legal name\)/);
    term.keys('Ada', 'Enter');
    // Each field after: its default taken (Enter).
    for (const title of ['Boolean', 'String with default', 'String with email format', 'String with uri format', 'String with date format', 'Integer', 'Number in range', 'Untitled Single Select Enum', 'Untitled Multiple Select Enum', 'Titled Single Select Enum', 'Titled Multiple Select Enum', 'Legacy Titled Single Select Enum']) {
      await term.waitFor(new RegExp(`\\? ${title}`));
      term.keys('Enter');
    }
    await term.waitFor(/User provided the requested information(.|\n)*Name: Ada(.|\n)*Favorite Integer: 42/);
    await term.waitFor(/"action": "accept", "content": \{ "name": "Ada", "check": false, "firstLine": "It was a dark and stormy night\."/);
    expect(await term.lastExit()).toBe(0);
  });
});
