/** `router-cli/kit`: the tool loop's pieces and the MCP client, for programs (no terminal IO, no exit codes). */
export { ToolSourceError, functionTool, type Tool, type ToolResult, type ToolImage, type ToolCallInfo } from './tool.js';
export { commandTool, runCommand, MAX_RESULT_BYTES } from './command-tool.js';
export { toolEnv } from './tool-env.js';
export * from './spend/index.js';
export { chatWithTools, ToolRoundsExceeded, type ChatToolsOptions, type ChatToolsResult } from './chat-tools.js';
export { connectMcp, type McpServer, type McpOptions } from './mcp.js';
export { ToolSet, type ToolDeclaration, type ToolSetOptions } from './toolset.js';
export { runToolCall, ResultBudget, DEFAULT_RESULTS_BYTES, type ToolCallRequest, type CallOutcome, type CallOptions } from './tool-calls.js';
export { splitCommandLine } from './command-line.js';
