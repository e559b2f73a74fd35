/** A tool's name as the API takes it (OpenAI's rule, which the emulator keeps): 1 to 64 letters, digits, _ or -. */
export const API_TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export const API_TOOL_NAME_RULE = "a tool's name is 1 to 64 letters, digits, _ or -, as the API takes it";
