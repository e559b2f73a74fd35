/** `local/tools`: calls one of the given function tools with arguments that fit its parameters; given the results, answers in text from them. */
import { textOf } from './content-text.js';
import { instanceOf } from './json-schema-answer.js';
import { prng, seedOf } from './models.js';
import { randomHex } from '../http/ids.js';
import { bad } from '../http/validate.js';

type Body = Record<string, unknown>;

export interface ToolCall {
  index: number;
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export interface FunctionTool {
  name: string;
  description?: string;
  parameters: Body;
}

/** Chat's function tools (`{type: function, function: {name, description, parameters}}`), checked; other tool kinds are passed over. */
export function checkTools(tools: unknown): FunctionTool[] {
  if (tools === undefined || tools === null) return [];
  if (!Array.isArray(tools)) bad('tools must be an array');
  const out: FunctionTool[] = [];
  tools.forEach((t: Body, i) => {
    if (!t || typeof t !== 'object' || typeof t.type !== 'string') bad(`tools[${i}] must be an object with a type`);
    if (t.type !== 'function') return;
    const f = t.function as Body | undefined;
    if (!f || typeof f !== 'object') bad(`tools[${i}].function is required`);
    if (typeof f.name !== 'string' || !/^[A-Za-z0-9_-]{1,64}$/.test(f.name)) bad(`tools[${i}].function.name must be 1 to 64 letters, digits, _ or -`);
    if (f.parameters !== undefined && (!f.parameters || typeof f.parameters !== 'object' || Array.isArray(f.parameters))) bad(`tools[${i}].function.parameters must be a JSON schema object`);
    out.push({ name: f.name, description: typeof f.description === 'string' ? f.description : undefined, parameters: (f.parameters as Body | undefined) ?? { type: 'object', properties: {} } });
  });
  return out;
}

/**
 * Arguments that fit a tool's parameters, as a model fills them: the first free-text string property carries
 * the user's words. Where the schema names required properties, only those and that one are filled (a tool's
 * options may exclude each other, as server-filesystem's head and tail); where it names none, every one is.
 * A property named as a path or file takes the path in the words ("read_text_file plan.txt": plan.txt).
 */
function argumentsFor(tool: FunctionTool, lastUser: string, toolNames: string[]): string {
  const value = instanceOf(tool.parameters, tool.parameters, prng(seedOf('tool', tool.name, lastUser)), 0);
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const properties = (tool.parameters.properties ?? {}) as Record<string, Body>;
    const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as string[]) : [];
    const freeText = ([, s]: [string, Body]) => s?.type === 'string' && !s.enum && !s.format && !s.pattern && s.const === undefined;
    const entries = Object.entries(properties);
    const free = entries.find((e) => required.includes(e[0]) && freeText(e)) ?? entries.find(freeText);
    const pick = required.length > 0;
    if (pick) for (const key of Object.keys(value)) if (!required.includes(key) && key !== free?.[0]) delete (value as Body)[key];
    const words = free && PATH_NAMED.test(free[0]) ? pathIn(lastUser, toolNames) : lastUser.trim();
    if (free && words && words.length >= ((free[1].minLength as number | undefined) ?? 0)) (value as Body)[free[0]] = words.slice(0, (free[1].maxLength as number | undefined) ?? 500);
    else if (pick && free && !required.includes(free[0])) delete (value as Body)[free[0]];
  }
  return JSON.stringify(value);
}

/** A string property a path goes in: `path`, `file_path`, `filename`, `directory`, `folder`. */
const PATH_NAMED = /path|file|dir|folder/i;

/**
 * The path in a prompt, as a model reads it: the first word that looks like one (a slash, a leading `~` or
 * `.`, a file's extension), quotes and closing punctuation taken off; else the words but the tools' names.
 */
function pathIn(prompt: string, toolNames: string[]): string {
  const names = new Set(toolNames.map((n) => n.toLowerCase()));
  const words = prompt.split(/\s+/).map((w) => w.replace(/^["'`(<]+|["'`)>,;:!?]+$|(?<=\w)\.$/g, '')).filter((w) => w && !names.has(w.toLowerCase()));
  return words.find((w) => /[/\\]|^[~.]|\.[A-Za-z0-9]{1,8}$/.test(w)) ?? words.join(' ');
}

/**
 * What `local/tools` answers when given tools: a call of the tool `tool_choice` names, else of each
 * tool whose name the prompt mentions (one, unless parallel calls are allowed), else of the first.
 */
export function callTools(tools: FunctionTool[], choice: unknown, lastUser: string, parallel: boolean): ToolCall[] {
  const named = (choice as Body | undefined)?.type === 'function' ? ((choice as Body).function as Body | undefined)?.name : undefined;
  let chosen: FunctionTool[];
  if (typeof named === 'string') {
    const tool = tools.find((t) => t.name === named);
    if (!tool) bad(`tool_choice names ${named}, which is not among the tools`);
    chosen = [tool];
  } else {
    const mentioned = tools.filter((t) => lastUser.toLowerCase().includes(t.name.toLowerCase()));
    chosen = mentioned.length ? (parallel ? mentioned : mentioned.slice(0, 1)) : tools.slice(0, 1);
  }
  return chosen.map((tool, index) => ({ index, id: `call_${randomHex(12)}`, type: 'function', function: { name: tool.name, arguments: argumentsFor(tool, lastUser, tools.map((t) => t.name)) } }));
}

/** Given the results of its calls (the tool messages after its last call), `local/tools` answers in text with them. */
export function toolResultsAnswer(messages: Body[]): string | undefined {
  let i = messages.length;
  while (i > 0 && messages[i - 1]!.role === 'tool') i--;
  const results = messages.slice(i);
  if (!results.length) return undefined;
  const calls = ((messages[i - 1]?.tool_calls as ToolCall[] | undefined) ?? []).filter(Boolean);
  const lines = results.map((r) => {
    const name = calls.find((c) => c.id === r.tool_call_id)?.function?.name ?? 'a tool';
    return `${name} answered: ${textOf(r.content).trim()}`;
  });
  return `From the tool results: ${lines.join('; ')}`;
}
