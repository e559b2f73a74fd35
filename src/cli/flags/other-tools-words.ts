/**
 * What a user of llm (or aichat) types that router spells otherwise, and where to go instead: said in
 * place of a guess after "unknown command" or "unknown option" (a guess there would mislead: `router keys
 * set` is no `keys get`).
 */

/** By the command's path and the word that is no subcommand of it. */
const COMMANDS: Record<string, string> = {
  'router templates': 'a saved prompt is a role here: router roles list, router roles save NAME --system TEXT',
  'router keys set': 'to keep the API key router calls with: router login; router keys manages the workspace\'s keys',
};

/** By the command's path and the flag it does not take (or takes a value of another kind). */
const FLAGS: Record<string, string> = {
  'router chat -t': "llm's -t TEMPLATE is --role NAME here; -t is --temperature",
  'router responses -t': "llm's -t TEMPLATE is --role NAME here; -t is --temperature",
  'router chat -o': "llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-tokens 100",
  'router responses -o': "llm's -o KEY VALUE is a flag of its own here: --temperature 0.5, --max-output-tokens 100",
  'router chat -T': 'tools come from a file here: --tools FILE, each with its command; or --mcp SERVER',
  'router chat --xl': "llm's --xl is --extract-last here",
  'router responses --xl': "llm's --xl is --extract-last here",
  'router chat --td': 'with --verbose each tool call and its result are shown on stderr',
  'router chat -n': "llm's -n is --no-log here",
  'router chat --cid': "llm's --cid is --conversation ID here; router conversations list shows them",
  'router chat --key': 'a key is never an argument: ROUTER_API_KEY, or router login --profile NAME and then --profile NAME',
  'router chat --save': 'a saved prompt is a role here: router roles save NAME --system TEXT',
  'router similar -c': "llm's -c TEXT is the text itself here: router similar NAME \"TEXT\", or --id ID for a kept entry",
  'router similar -p': "llm's -p is --plain here",
  'router similar -i': "llm's -i FILE is stdin here: router similar NAME - < FILE",
  'router embed-multi -v': 'its progress shows on stderr on a terminal, with no flag; --verbose adds detail to errors',
};

/** Where to go instead of a command or flag of another tool (`path`: the command it was given to). */
export function otherToolsHint(path: string, word: string): string | undefined {
  // -v is verbose, or the version, elsewhere: both are here, spelled otherwise.
  if (word === '-v') return FLAGS[`${path} -v`] ?? 'no -v here: --verbose adds detail to errors, -V prints the version';
  return word.startsWith('-') ? FLAGS[`${path} ${word}`] : COMMANDS[`${path} ${word}`];
}
