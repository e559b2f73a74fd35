/** A tool's name as the API takes it (OpenAI's rule, which the emulator keeps): 1 to 64 letters, digits, _ or -. */
export const API_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const API_TOOL_NAME_RULE = "a tool's name is 1 to 64 letters, digits, _ or -, as the API takes it";

/** A name made to follow that rule (an MCP server's tool's, which may hold any character): each other character an underscore, cut at 64. */
export const apiToolName = (name: string): string => name.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
