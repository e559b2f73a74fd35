import { NoProfileError } from '../../config/fields.js';
import { openaiHint } from './openai-cli-words.js';

/**
 * What a user of llm (or aichat) types that router spells otherwise, and where to go instead: said in
 * place of a guess after "unknown command" or "unknown option" (a guess there would mislead: `router keys
 * set` is no `keys get`, llm's --hide-reasoning no --show-reasoning). Each of their flags is listed in
 * every spelling it has there (-o and --option alike); test/inprocess/llm-flags.test.ts holds their option
 * lists against router's commands.
 */

/** By the command's path and the word that is no subcommand of it. */
const COMMANDS: Record<string, string> = {
  'router prompt': "llm's prompt is router chat here: router chat PROMPT",
  'router templates': 'a saved prompt is a role here: router roles list, router roles save NAME --system TEXT',
  'router schemas': 'a schema is given with each call here: --schema JSON|FIELDS|FILE; a role keeps one: router roles save NAME --schema …',
  'router tools': 'tools come from a file here: chat --tools FILE, each with its command; or --mcp SERVER',
  'router plugins': 'router has no plugins: tools come from chat --tools FILE or --mcp SERVER, models from the service (router models)',
  'router install': 'router has no plugins: tools come from chat --tools FILE or --mcp SERVER, models from the service (router models)',
  'router embed-models': 'embedding models are among router models (router models --output-modality embeddings); the default: router config set embed_model ID',
  'router options': "a model's default options: router models options set MODEL OPTION VALUE",
  'router keys set': 'to keep the API key router calls with: router login; router keys manages the workspace\'s keys',
  'router keys path': 'the API key router calls with is in a profile: router config path; router auth status',
};

/** llm's (llm prompt, llm chat) and aichat's prompt flags that router chat and responses spell otherwise. */
const PROMPT_FLAGS: Record<string, string> = {
  '-o': "llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-tokens 100",
  '--option': "llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-tokens 100",
  '--options': "llm's --options are flags of their own here: --temperature 0.5, --max-tokens 100",
  '--template': "llm's -t TEMPLATE is --role NAME here; -t is --temperature",
  '-T': 'tools come from a file here: --tools FILE, each with its command; or --mcp SERVER',
  '--tool': "llm's --tool NAME is --tools FILE here, each tool with its command; or --mcp SERVER",
  '--functions': 'tools come from a file here: --tools FILE, each with its command; or --mcp SERVER',
  '--xl': "llm's --xl is --extract-last here",
  '--td': 'with --verbose each tool call and its result are shown on stderr',
  '--tools-debug': 'with --verbose each tool call and its result are shown on stderr',
  '--ta': "llm's --ta is --approve here",
  '--tools-approve': "llm's --tools-approve is --approve here",
  '--cl': "llm's --cl is --max-tool-rounds here",
  '--chain-limit': "llm's --chain-limit is --max-tool-rounds here",
  '-n': "llm's -n is --no-log here",
  '--log': 'each chat is kept unless --no-log: router config set log on logs them again',
  '-u': "llm's -u is --usage here",
  '-R': 'reasoning is not shown here unless --show-reasoning',
  '--hide-reasoning': 'reasoning is not shown here unless --show-reasoning',
  '--at': "an attachment's type comes from its bytes here: -a FILE (text of any name goes as text/plain)",
  '--attachment-type': "an attachment's type comes from its bytes here: -a FILE (text of any name goes as text/plain)",
  '-d': 'there is no database: conversations are files (router logs, router conversations list)',
  '--database': 'there is no database: conversations are files (router logs, router conversations list)',
  '--query': 'a model is named here: --model ID; router models WORDS finds one',
  '--async': 'calls at once: several router chat under xargs -P, or a file of requests: router batch run FILE',
  '--cid': "llm's --cid is --conversation ID here; router conversations list shows them",
  '--key': 'a key is never an argument: ROUTER_API_KEY, or router login --profile NAME and then --profile NAME',
  '--save': 'a saved prompt is a role here: router roles save NAME --system TEXT',
  '-r': "aichat's -r ROLE is --role NAME here",
  '-S': "aichat's -S is --no-stream here",
  '-e': 'router runs no answer as a command: -x prints the code of its first code block (router chat -x … | sh)',
  '--execute': 'router runs no answer as a command: -x prints the code of its first code block (router chat -x … | sh)',
  '--code': "aichat's --code is -x/--extract here",
  '--file': "aichat's -f FILE is -f FILE here (its text before the prompt), or -a FILE (an attachment)",
  '--prompt': "aichat's --prompt is -s/--system here",
  '--empty-session': 'each chat is a conversation of its own here unless -c or --conversation NAME',
  '--save-session': 'each chat is kept as a conversation here (router conversations list) unless --no-log',
};

/** The top-level words of llm and aichat (whose prompt needs no command) that are flags of router chat. */
const PROMPT_AT_TOP = ['-m', '--model', '-s', '--system', '-c', '--continue', '--conversation', '-a', '--attachment', '-f', '--fragment',
  '--sf', '--system-fragment', '-x', '--extract', '--extract-last', '--json', '--schema', '--schema-multi', '--no-stream', '--param', '--usage', '--role', '--dry-run'];

/** aichat's top-level flags that are commands here (or mean another thing in router chat). */
const AICHAT_TOP: Record<string, string> = {
  '--list-models': "aichat's --list-models is router models here",
  '--list-roles': "aichat's --list-roles is router roles list here",
  '--list-sessions': "aichat's --list-sessions is router conversations list here",
  '--session': "aichat's sessions are conversations here: router chat --conversation NAME …; router conversations list",
  '--serve': "aichat's --serve is router serve here",
  '--info': "aichat's --info is router config list here (and router auth status)",
};

/**
 * aichat's --session NAME keeps a conversation; router's --session is the service's session id, sent as it is
 * (scripts pass it meaning that). Said to a person at a terminal, where a newcomer types it.
 */
export const SESSION_MEANT = "note: --session is the service's session id (it groups calls; nothing is kept here): a conversation kept here is --conversation NAME, -c goes on with the last (router conversations list)";

/** By the command's path and the flag it does not take (or takes a value of another kind). */
const FLAGS: Record<string, string> = {
  'router chat -t': "llm's -t TEMPLATE is --role NAME here; -t is --temperature",
  'router responses -t': "llm's -t TEMPLATE is --role NAME here; -t is --temperature",
  'router responses -o': "llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-output-tokens 100",
  'router responses --option': "llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-output-tokens 100",
  'router responses -s': "llm's -s is --instructions here (router chat takes -s)",
  'router responses --system': "llm's --system is --instructions here (router chat takes --system)",
  'router responses -f': 'fragments are router chat\'s (-f SOURCE); here the text goes in the prompt, --input FILE or -a FILE',
  'router responses --fragment': 'fragments are router chat\'s (-f SOURCE); here the text goes in the prompt, --input FILE or -a FILE',
  'router responses --sf': 'fragments are router chat\'s (--sf SOURCE); here the system text goes in --instructions @FILE',
  'router responses --system-fragment': 'fragments are router chat\'s (--sf SOURCE); here the system text goes in --instructions @FILE',
  'router responses -c': 'responses keeps no conversation: the whole history goes in --input FILE; router chat -c goes on with one',
  'router responses --continue': 'responses keeps no conversation: the whole history goes in --input FILE; router chat -c goes on with one',
  'router responses --conversation': 'responses keeps no conversation: the whole history goes in --input FILE; router chat --conversation ID goes on with one',
  'router embed -d': 'there is no database: collections are files (router collections list)',
  'router embed --database': 'there is no database: collections are files (router collections list)',
  'router similar -d': 'there is no database: collections are files (router collections list)',
  'router similar --database': 'there is no database: collections are files (router collections list)',
  'router similar -c': "llm's -c TEXT is the text itself here: router similar NAME \"TEXT\", or --id ID for a kept entry",
  'router similar --content': "llm's -c TEXT is the text itself here: router similar NAME \"TEXT\", or --id ID for a kept entry",
  'router similar -p': "llm's -p is --plain here",
  'router similar -i': "llm's -i FILE is stdin here: router similar NAME - < FILE",
  'router similar --input': "llm's -i FILE is stdin here: router similar NAME - < FILE",
  'router similar --binary': 'router embeds text only',
  'router embed --content': "llm's -c TEXT is the text itself here: router embed \"TEXT\" (-c NAME --id ID keeps it in a collection)",
  'router embed -i': "llm's -i FILE is --file FILE here",
  'router embed --input': "llm's -i FILE is --file FILE here",
  'router embed --binary': 'router embeds text only',
  'router embed --metadata': 'router keeps no metadata beside a vector: --store keeps its text',
  'router embed -f': "llm's -f FORMAT is --json (the default) or --jsonl here",
  'router embed --format': "llm's -f FORMAT is --json (the default) or --jsonl here",
  'router embed-multi -v': 'its progress shows on stderr on a terminal, with no flag; --verbose adds detail to errors',
  'router embed-multi --encoding': 'files are read as UTF-8 here',
  'router embed-multi --binary': 'router embeds text only',
  'router embed-multi --sql': 'there is no database: give a file (jsonl, json, csv, tsv) or --files DIR GLOB',
  'router embed-multi --attach': 'there is no database: give a file (jsonl, json, csv, tsv) or --files DIR GLOB',
  'router embed-multi --prepend': 'put the text in the file: router embeds each text as given',
  'router embed-multi -d': 'there is no database: collections are files (router collections list)',
  'router embed-multi --database': 'there is no database: collections are files (router collections list)',
};

/** llm's `logs list` flags that router logs spells otherwise. */
const LOGS_FLAGS: Record<string, string> = {
  '-s': 'each turn is shown whole here; -t/--truncate cuts its texts to 100 characters; --json id,prompt keeps fields',
  '--short': 'each turn is shown whole here; -t/--truncate cuts its texts to 100 characters; --json id,prompt keeps fields',
  '-u': "a turn's tokens and cost are in the usage ledger here: router usage",
  '--usage': "a turn's tokens and cost are in the usage ledger here: router usage",
  '-l': 'turns are shown newest last here, and -n N takes the last N',
  '--latest': 'turns are shown newest last here, and -n N takes the last N',
  '--cid': "llm's --cid is --conversation ID here",
  '--id-gt': 'turns are named CONVERSATION#N here: --conversation ID narrows them',
  '--id-gte': 'turns are named CONVERSATION#N here: --conversation ID narrows them',
  '-x': 'router logs -r prints the last answer whole; chat -x takes the code of an answer as it comes',
  '--extract': 'router logs -r prints the last answer whole; chat -x takes the code of an answer as it comes',
  '--xl': 'router logs -r prints the last answer whole; chat --extract-last takes the code of an answer as it comes',
  '--extract-last': 'router logs -r prints the last answer whole; chat --extract-last takes the code of an answer as it comes',
  '-T': 'tool calls are not kept in the log here',
  '--tool': 'tool calls are not kept in the log here',
  '--tools': 'tool calls are not kept in the log here',
  '--schema': 'schemas are not kept in the log here: --json and --jq read the answers',
  '--schema-multi': 'schemas are not kept in the log here: --json and --jq read the answers',
  '--data': 'schemas are not kept in the log here: --json and --jq read the answers',
  '--data-array': 'schemas are not kept in the log here: --json and --jq read the answers',
  '--data-key': 'schemas are not kept in the log here: --json and --jq read the answers',
  '--data-ids': 'schemas are not kept in the log here: --json and --jq read the answers',
  '-e': 'fragments are listed by hash here: router fragments show HASH prints one',
  '--expand': 'fragments are listed by hash here: router fragments show HASH prints one',
  '-f': 'fragments are listed by hash here: router logs --json id,fragments, then router fragments show HASH',
  '--fragment': 'fragments are listed by hash here: router logs --json id,fragments, then router fragments show HASH',
  '-d': 'there is no database: conversations are files (router conversations list)',
  '--database': 'there is no database: conversations are files (router conversations list)',
  '--path': 'there is no database: conversations are files (router conversations list)',
};

/** llm's `logs` subcommands, which router logs reads as words to search for. */
const LOGS_WORDS: Record<string, string> = {
  list: 'router logs lists the last turns with no word',
  path: 'conversations are files in the state folder: router conversations list names them',
  status: 'chat keeps each conversation unless --no-log or router config set log off',
  on: 'logging is a setting here: router config set log on',
  off: 'logging is a setting here: router config set log off',
  backup: 'conversations are files in the state folder: copy it',
};

/** The text a user gave router as its command, shown as the chat that would send it (cut where long). */
function asPrompt(word: string): string {
  const text = [...word].length > 60 ? `${[...word].slice(0, 60).join('')}…` : word;
  return /["$`\\!]/.test(text) ? `'${text.replace(/'/g, "'\\''")}'` : `"${text}"`;
}

/** At the top, where llm and aichat take a prompt: the same as router chat. */
function topHint(word: string): string | undefined {
  if (!word.startsWith('-')) return /\s/.test(word.trim()) ? `a prompt is router chat here: router chat ${asPrompt(word)}` : undefined;
  if (AICHAT_TOP[word]) return AICHAT_TOP[word];
  const chat = PROMPT_FLAGS[word] ?? FLAGS[`router chat ${word}`];
  if (!chat && !PROMPT_AT_TOP.includes(word)) return undefined;
  return `a prompt is router chat here, its flags after it: router chat ${word} …${chat ? `; ${chat}` : ''}`;
}

/**
 * One word at the top that is no command and near none (`router hello`): a prompt, as llm and aichat take it. A word
 * of commands elsewhere (`ls`, `list`) is left alone: that user meant a command.
 */
export function oneWordPrompt(word: string, commandWords: readonly string[]): string {
  return /^\p{L}[\p{L}'-]*$/u.test(word) && !commandWords.includes(word.toLowerCase()) ? ` (a prompt is router chat here: router chat ${asPrompt(word)})` : '';
}

/** Where to go instead of a command or flag of another tool (`path`: the command it was given to). */
export function otherToolsHint(path: string, word: string): string | undefined {
  return llmOrAichatHint(path, word) ?? openaiHint(path, word);
}

/** llm's and aichat's words (their prompt at the top, their flags in chat). */
function llmOrAichatHint(path: string, word: string): string | undefined {
  // -v is verbose, or the version, elsewhere: both are here, spelled otherwise.
  if (word === '-v') return FLAGS[`${path} -v`] ?? 'no -v here: --verbose adds detail to errors, -V prints the version';
  if (path === 'router') return COMMANDS[`${path} ${word}`] ?? topHint(word);
  if (!word.startsWith('-')) return COMMANDS[`${path} ${word}`];
  if (path === 'router logs') return LOGS_FLAGS[word];
  if (path !== 'router chat' && path !== 'router responses') return FLAGS[`${path} ${word}`];
  return FLAGS[`${path} ${word}`] ?? PROMPT_FLAGS[word] ?? AICHAT_TOP[word];
}

/** llm's `logs WORD` (logs path, logs off) where router logs found no turn holding WORD: where router has it. */
export function llmLogsWord(search: readonly string[]): string | undefined {
  return search.length === 1 ? LOGS_WORDS[search[0]!.toLowerCase()] : undefined;
}

/**
 * A profile not found where `-p NAME` was given to a command that takes --param (chat, responses): llm's
 * `-p NAME VALUE` gives a template's parameter, and that is likelier meant than a profile never made (unless one of
 * a near name exists).
 */
export function paramMeant(err: unknown, takesParam: boolean, profile: string | undefined): unknown {
  if (!takesParam || !profile || !(err instanceof NoProfileError) || !err.message.startsWith(`no profile "${profile}"`)) return err;
  // A profile of a near name (`locla` for local) is the likelier meaning: its guess is said alone.
  if (err.message.includes('(did you mean ')) return err;
  err.message += ` (llm's -p NAME VALUE is --param NAME VALUE here; -p is --profile)`;
  return err;
}
