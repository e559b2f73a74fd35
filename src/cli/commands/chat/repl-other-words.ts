/**
 * What a user of aichat's REPL (`.exit`, `.role coder`) or of `llm chat` (`exit`, `!multi`) types at chat -i's prompt:
 * each would go to the model as a message, billed, and answered about. Held back once with router's way to say it.
 */

const NONE = "router has no such command (/help lists the commands)";

/** aichat's REPL commands (its first word), with router's way. */
const AICHAT: Record<string, string> = {
  '.help': "aichat's .help is /help here",
  '.exit': "aichat's .exit is /exit here (Ctrl-D too)",
  '.model': "aichat's .model is /model ID here",
  '.role': "aichat's .role is /role NAME here (router roles list)",
  '.prompt': "aichat's .prompt is /system TEXT here",
  '.session': 'this session is kept as a conversation already (router conversations list); chat -i --conversation NAME names it',
  '.file': "aichat's .file is /attach PATH here (a picture, a PDF, audio), or /fragment SOURCE (text before the next message)",
  '.clear': "aichat's .clear is /clear here",
  '.empty': "aichat's .empty is /clear here",
  '.save': "aichat's .save is /save FILE here",
  '.edit': "aichat's .edit is /edit here",
  '.info': 'router config list and router auth status say it, outside the session',
  '.copy': 'router logs -r prints the last answer, outside the session',
  '.set': 'settings are router chat -i flags, or router config set NAME VALUE',
  '.tools': "aichat's tools are /tools here (given with --tools FILE or --mcp SERVER)",
};
for (const word of ['.continue', '.regenerate', '.rag', '.agent', '.starter', '.variable', '.macro', '.compress', '.rebuild', '.sources', '.delete', '.dump']) AICHAT[word] = NONE;

const NEW_LINE = 'Alt-Enter or Ctrl-J starts a new line here, as does a line ending in \\ (a paste is one message)';

/** Whole lines of llm chat and aichat. */
const LINES: Record<string, string> = {
  exit: '/exit ends the session here (Ctrl-D too)',
  quit: '/exit ends the session here (Ctrl-D too)',
  '!multi': `llm's !multi: ${NEW_LINE}`,
  '!end': `llm's !end: ${NEW_LINE}`,
  '!edit': "llm's !edit is /edit here",
  ':::': `aichat's ::: : ${NEW_LINE}`,
};

/** llm chat's commands that take an argument. */
const LLM_WORDS: Record<string, string> = { '!fragment': "llm's !fragment is /fragment SOURCE here" };

/** Router's way for a one-line message that is another tool's REPL command; undefined for any other text. */
export function otherReplCommand(text: string): string | undefined {
  if (text.includes('\n')) return undefined;
  const line = text.trim().toLowerCase();
  const first = line.split(/\s+/)[0]!;
  return LINES[line] ?? AICHAT[first] ?? LLM_WORDS[first];
}

/**
 * Chat -i's check before a message goes: another tool's command is held back once, with a note; the same line typed
 * again right after is sent as it is (the one way to ask a model about ".help").
 */
export function heldBackOnce(): (text: string) => string | undefined {
  let held: string | undefined;
  return (text) => {
    const hint = held === text ? undefined : otherReplCommand(text);
    held = hint ? text : undefined;
    return hint && `note: ${JSON.stringify(text.trim())} was not sent: ${hint}; typed again, it is sent as a message\n`;
  };
}
