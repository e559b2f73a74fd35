import { collect, collectFiles, commaList, fileArg, integerIn, secondsIn } from './options.js';
import type { FlagTable } from './flags.js';

/** The flags `chat` and `responses` share for what goes beyond text: attachments, a schema, plugins, output modalities, reasoning, images. */
export const ANSWER_FLAGS = {
  attach: { flags: '-a, --attach <path|url|->', help: 'attach an image (PNG, JPEG, WebP, GIF), a PDF or document, audio (WAV, MP3), an http(s) URL, or stdin ("-"); @PATH too, as -s takes a file; repeatable', parse: collectFiles },
  schema: { flags: '--schema <json|file>', help: 'answer as JSON that follows this JSON schema (inline, a FILE or @FILE, - for stdin), or fields as "name, age int" (checked locally; exit 10 when it does not)', parse: fileArg, oneCall: true },
  schemaMulti: { flags: '--schema-multi <json|file>', help: 'answer as {"items": [...]} of values that follow this schema (as --schema takes it)', parse: fileArg, oneCall: true },
  plugin: { flags: '--plugin <id[,key=value...]>', help: 'a plugin of the service, with its settings (repeatable), e.g. web,max_results=3', parse: collect, oneCall: true },
  web: { flags: '--web', help: 'search the web (the web plugin); citations listed on stderr on a terminal', oneCall: true },
  modalities: { flags: '--modalities <list>', help: 'output modalities, e.g. text,image', parse: commaList, oneCall: true },
  showReasoning: { flags: '--show-reasoning', help: "print the model's reasoning to stderr" },
  extract: { flags: '-x, --extract', help: "print only the code of the answer's first fenced block, indented, quoted or not (none: the whole answer; an open block: what came, said on stderr; a block cut at the length limit: none of it, exit 1)", oneCall: true },
  extractLast: { flags: '--extract-last', help: "print only the answer's last fenced code block", oneCall: true },
  saveImages: { flags: '--save-images <dir>', help: 'write generated images into DIR (paths on stderr)', oneCall: true },
} as const satisfies FlagTable;

/** Chat's tools that router runs itself. */
export const TOOL_FLAGS = {
  tools: { flags: '--tools <file>', help: 'function tools (a JSON array, in FILE or @FILE); a tool with a "command" is run locally when called (exit 11 when one without is)', parse: fileArg },
  mcp: { flags: '--mcp <command|url>', help: 'tools of an MCP server: a command line (stdio) or an http(s) URL (Streamable HTTP); repeatable', parse: collect },
  maxToolRounds: { flags: '--max-tool-rounds <n>', help: 'most rounds of tool calls run before giving up (default 8)', parse: integerIn(1, 100), goesWith: ['tools', 'mcp'] },
  approve: { flags: '--approve', help: 'ask before running each tool command or MCP tool (on a terminal)', goesWith: ['tools', 'mcp'] },
  toolTimeout: { flags: '--tool-timeout <duration>', help: 'end a tool call that runs longer (default 5m; an MCP server that does not answer ends the command)', parse: secondsIn(0.001, 86_400), goesWith: ['tools', 'mcp'] },
  mcpRoot: { flags: '--mcp-root <dir>', help: 'offer the MCP servers this folder as a root (repeatable; none offered without it: server-filesystem then keeps the folders it was given)', parse: collect, goesWith: ['mcp'] },
  mcpSampling: { flags: '--mcp-sampling', help: "answer an MCP server's sampling request with this command's model, its cost counted (without it: asked on a terminal, refused in a pipe)", goesWith: ['mcp'] },
} as const satisfies FlagTable;
