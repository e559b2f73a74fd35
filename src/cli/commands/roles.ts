/** `router roles list|show|save|edit|delete|path`: the roles `chat --role` and `responses --role` apply. */
import { DamagedFileError } from '../../config/fields.js';
import { leftOutDamaged } from '../io/damaged-note.js';
import { existsSync, renameSync, rmSync } from 'node:fs';
import { readLocalFile, readLocalText } from '../../internal/local-file.js';
import { basename, dirname, join } from 'node:path';
import { cliErrorOf } from '../kit-words.js';
import { defineCommand, defineGroup } from '../define.js';
import type { FlagTable } from '../flags/flags.js';
import type { RunContext } from '../run.js';
import { CliError, EXIT, usage } from '../exit-codes.js';
import { applyRole, inFolder, loadYaml, parseRole, readRole, roleNames, rolePath, rolesDir, roleTexts, shownRoleSettings, shownRoleText, unknownRole, type Role } from '../saved/roles.js';
import { writeWhole } from '../../internal/write-whole.js';
import { PROSE, visible } from '../../internal/visible.js';
import { textOrFile } from '../io/input.js';
import { CHAT_FLAGS } from './chat/flags.js';
import { nonEmpty, paramValue } from '../flags/options.js';
import { placeholderNames } from '../../kit/placeholders.js';

/** What a role may hold that `roles save` takes as flags: chat's generation flags, a prompt text and its placeholders' defaults. */
const SAVE_FLAGS: FlagTable = {
  ...Object.fromEntries(Object.entries(CHAT_FLAGS).filter(([k]) => !['role', 'param', 'json', 'interactive', 'continue', 'conversation'].includes(k))),
  prompt: { flags: '--prompt <text>', help: 'the prompt sent, $input where the prompt given goes (default: the prompt as given)', parse: nonEmpty },
  default: { flags: '--default <name=value>', help: "a default for the role's $NAME, repeatable: --default lang French (or lang=French)", parse: paramValue },
};

const kebab = (attr: string) => attr.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

const ROLE_NAME = { name: '<name>', help: 'role name', complete: 'roles' } as const;

const list = defineCommand({
  name: 'list',
  jsonFields: ['name', 'model', 'settings', 'system'],
  printsKept: true,
  summary: 'list the roles',
  description: 'list the roles; piped, one tab-separated line each: name, model (empty if none), first line of the prompt',
  flags: { json: { flags: '--json', help: 'print them as JSON' } },
  examples: ['router roles list', 'router roles list --json name,model'],
  run: async ({ io, opts, env }) => {
    await loadYaml();
    const all = roleNames(env).flatMap((name) => {
      try {
        const r = readRole(env, name);
        return [{ name, model: typeof r.settings.model === 'string' ? r.settings.model : null, settings: r.settings, system: r.system }];
      } catch (err) {
        // One broken file does not hide the others: said as every listing says a damaged one, and left out.
        if (err instanceof DamagedFileError) leftOutDamaged(io, err.path, (err as { detail?: string }).detail);
        else io.note(`warning: ${(err as Error).message}`);
        return [];
      }
    });
    if (opts.json) return io.json(all);
    if (!all.length) return io.info('no roles yet: router roles save NAME --system TEXT');
    // One row per role whatever its file holds (table() shows a tab or an escape sequence escaped); keys hidden, then
    // cut: piped at 80 columns, on a terminal to its width, with "…" either way. No model: an empty field piped (as
    // config profiles prints one), a dash for the eye on a terminal.
    const { cut, table } = await import('../io/table.js');
    const first = (r: (typeof all)[number]) => io.redact(visible(r.system.split('\n')[0]!));
    const rows = all.map((r) => [r.name, r.model ?? (io.stdoutTTY ? '-' : ''), io.stdoutTTY ? first(r) : cut(first(r), 80)]);
    io.out(table(io, ['name', 'model', 'prompt'], rows, { fit: 2 }));
  },
});

const show = defineCommand({
  name: 'show',
  jsonFields: ['name', 'path', 'settings', 'system'],
  printsKept: true,
  summary: "print a role file, a URL's password as ***",
  args: [ROLE_NAME],
  flags: { json: { flags: '--json', help: 'print it as JSON: name, path, settings, system' } },
  examples: ['router roles save reviewer --temperature 0.2 \\\n--system "Review the diff: bugs first."', 'router roles show reviewer'],
  run: async ({ io, opts, env }, name) => {
    await loadYaml();
    const role = readRole(env, name, EXIT.NOT_FOUND);
    if (opts.json) return io.json({ ...role, settings: shownRoleSettings(role.settings) });
    const text = shownRoleText(readLocalText(role.path));
    // On a terminal, escape sequences in it are shown, not obeyed; piped, it is the file as it is (but a URL's password).
    io.out(io.stdoutTTY ? visible(text, PROSE) : text);
  },
});

const save = defineCommand({
  name: 'save',
  summary: 'write a role from --system or stdin and chat flags',
  description: 'write a role (replacing one of that name): its system prompt from --system or stdin, and any chat flag given',
  args: [{ name: '<name>', help: 'role name: letters, digits, ".", "_" or "-"' }],
  flags: SAVE_FLAGS,
  examples: ['router roles save terse --system "Answer in one line." --model local/echo', 'echo "You review shell scripts." | router roles save shell --temperature 0.1'],
  run: runSave,
});

const edit = defineCommand({
  name: 'edit',
  summary: 'open a role in $VISUAL or $EDITOR',
  description: 'open a role in $VISUAL or $EDITOR (a new one starts from a template); checked when the editor closes',
  args: [ROLE_NAME],
  examples: ["EDITOR='echo You are terse. >' router roles edit scratch"],
  run: runEdit,
});

const remove = defineCommand({
  name: 'delete',
  summary: 'delete a role',
  args: [ROLE_NAME],
  examples: ['router roles save scratch --system "temporary"', 'router roles delete scratch'],
  run: async ({ io, env }, name) => {
    const path = rolePath(env, name);
    if (!existsSync(path)) throw unknownRole(env, name, EXIT.NOT_FOUND);
    rmSync(path);
    rmSync(draftOf(path), { force: true });
    io.info(`deleted role ${name}`);
  },
});

const showPath = defineCommand({
  name: 'path',
  summary: 'print the folder of the roles, or the file of one',
  args: [{ name: '[name]', help: 'role name', complete: 'roles' }],
  examples: ['router roles path', 'ls "$(router roles path)"'],
  run: async ({ io, env }, name) => {
    io.out(`${name === undefined ? rolesDir(env) : rolePath(env, name)}\n`);
  },
});

export const roles = defineGroup({
  name: 'roles',
  summary: 'system prompts and settings kept by name (--role)',
  description: 'Roles: a system prompt and settings kept under a name, applied with router chat --role NAME (also responses, and /role in chat -i). Each is a Markdown file in the config folder: YAML front matter (any chat flag: model, temperature, max-tokens, …) and the system prompt as its body. Flags given on the command line win over the role; the role wins over the profile.',
  commands: [list, show, save, edit, remove, showPath],
  examples: ['router roles save terse --system "Answer in one line." --model local/echo', 'router chat --role terse "what is a CLI?"', 'router roles list'],
});

async function runSave(ctx: RunContext<Record<string, unknown>>, name: string): Promise<void> {
  const { io, opts, cmd, env } = ctx;
  const path = rolePath(env, name);
  let system = await textOrFile('--system', typeof opts.system === 'string' ? opts.system : undefined, io);
  if (system === undefined && !io.stdinTTY && !io.noStdin) system = (await (await import('../io/read-stdin.js')).readAll(io.stdin, io.interrupt)).trim();
  if (!system) throw usage(`no system prompt for role ${name}: give --system TEXT or pipe it (echo "You are terse." | router roles save ${name})`);
  const settings: Record<string, unknown> = {};
  const { typedAlias } = await import('../flags/model-alias.js');
  for (const [attr, value] of Object.entries(opts)) {
    if (attr === 'system' || cmd.getOptionValueSource(attr) !== 'cli') continue;
    const option = cmd.options.find((o) => o.attributeName() === attr);
    const absolute = (v: unknown) => (option && typeof v === 'string' ? inFolder(option, v, process.cwd()) : v);
    // A model given as an alias is kept as the alias: the role follows where the alias points.
    settings[attr === 'default' ? 'defaults' : kebab(attr)] = typedAlias(opts, attr) ?? (Array.isArray(value) ? value.map(absolute) : absolute(value));
  }
  const names = placeholderNames(system, settings.prompt as string | undefined);
  const needs = names.filter((n) => n !== 'input' && !Object.hasOwn((settings.defaults ?? {}) as object, n));
  // A default for a placeholder the role does not have (a typo): refused, nothing saved.
  const unused = unusedDefaults(names, settings.defaults);
  if (unused.length) throw usage(`role ${name} has no ${unused.map((n) => `$${n}`).join(', ')}: --default ${unused.join(', ')} would go unused (nothing saved; the placeholders: ${names.filter((n) => n !== 'input').map((n) => `$${n}`).join(', ') || 'none'})`);
  if (needs.length) io.note(`note: role ${name} takes ${needs.map((n) => `--param ${n} VALUE`).join(', ')} (its ${needs.map((n) => `$${n}`).join(', ')}; $$ writes a literal $)`);
  await checkFiles(opts, io);
  const { stringify } = await loadYaml();
  // A prompt that starts with a "---" line would be read as front matter: an empty one goes before it.
  const front = Object.keys(settings).length ? `---\n${stringify(settings)}---\n` : /^---[ \t]*\r?\n/.test(system) ? '---\n---\n' : '';
  const text = `${front}${system}\n`;
  const before = existsSync(path) ? readIfCan(path) : undefined;
  writeWhole(path, text);
  // Another role's prompt or settings are gone: said piped too (--quiet silences it).
  if (before !== undefined && before !== text && !io.quiet) io.note(`note: replaced role ${name} (${path})`);
  else io.info(`${before === text ? 'role unchanged' : 'saved role'} ${name} (${path})`);
}

/** A role file's text; '' when it cannot be read (it is replaced all the same). */
function readIfCan(path: string): string {
  try {
    return readLocalText(path);
  } catch {
    return '';
  }
}

/**
 * The files a role names are read and checked now, as chat reads them: a missing or broken one is
 * refused at save, not at each use. Stdin ("-") is read only when the role is used.
 */
async function checkFiles(opts: Record<string, unknown>, io: RunContext<unknown>['io']): Promise<void> {
  const file = (v: unknown) => (typeof v === 'string' && v !== '-' ? v : undefined);
  const { loadTools } = await import('../tools/tool-runner.js');
  const { loadSchema } = await import('../answers/schema-check.js');
  const { readAttachments } = await import('../answers/attach.js');
  const { checkImagesDir } = await import('../answers/save-images.js');
  await loadTools(file(opts.tools), io, 'chat');
  await loadSchema(file(opts.schema), io);
  await loadSchema(file(opts.schemaMulti), io, true);
  await readAttachments(Array.isArray(opts.attach) ? opts.attach.filter((a) => a !== '-') : undefined, io);
  checkImagesDir(file(opts.saveImages));
}

/**
 * An edited role as `chat --role` will read it: each key a flag of chat, each value through its
 * flag's parser, its files read (relative ones from the roles folder, where the role will be read).
 */
async function checkRole(role: Role, io: RunContext<unknown>['io']): Promise<void> {
  const { Command } = await import('../commander.js');
  const { addFlags } = await import('../flags/flags.js');
  const opts: Record<string, unknown> = {};
  applyRole(role, addFlags(new Command('chat'), CHAT_FLAGS), opts);
  await checkFiles(opts, io);
}

/** Where `roles edit` keeps an edit that did not parse (a dot file: not a role). */
const draftOf = (path: string) => join(dirname(path), `.${basename(path)}.edit`);

const TEMPLATE = '---\n# any chat flag: model: local/echo, temperature: 0.2, max-tokens: 500\n---\nYou are a helpful assistant.\n';

/**
 * `roles edit`: the editor works on a copy, put in place only once it parses. An editor that fails
 * leaves the role as it was (a new one is not made); an edit that does not parse is kept beside it
 * (hidden from the list), and the next edit starts from it.
 */
async function runEdit({ io, env }: RunContext<unknown>, name: string): Promise<void> {
  const path = rolePath(env, name);
  const draft = draftOf(path);
  const existed = existsSync(path);
  const kept = existed ? `role ${name} is unchanged` : `role ${name} is not made`;
  // An edit that did not parse last time is taken up again, not lost.
  const fromTemplate = !existed && !existsSync(draft);
  writeWhole(draft, existsSync(draft) ? readLocalFile(draft) : existed ? readLocalFile(path) : TEMPLATE);
  const { editFile } = await import('../io/editor.js');
  try {
    await editFile(io, draft);
  } catch (err) {
    rmSync(draft, { force: true });
    if (err instanceof CliError) err.message = `${err.message}; ${kept}`;
    throw err;
  }
  // The template left as it was: no role, as git makes no commit of a message left empty.
  if (fromTemplate && readLocalText(draft) === TEMPLATE) {
    rmSync(draft, { force: true });
    throw new CliError(`role ${name} not created (the template was left unchanged)`, EXIT.FAILURE);
  }
  await loadYaml();
  let unused: string[];
  try {
    const role = parseRole(name, path, readLocalText(draft));
    await checkRole(role, io);
    const { prompt, defaults } = roleTexts(role);
    unused = unusedDefaults(placeholderNames(role.system, prompt), defaults);
  } catch (caught) {
    const err = cliErrorOf(caught) ?? caught;
    (err as Error).message = `${(err as Error).message} (${kept}; the edit is kept in ${draft}, and router roles edit ${name} takes it up)`;
    throw err;
  }
  renameSync(draft, path);
  io.info(`saved role ${name} (${path})`);
  // Saved all the same (an edit is the user's own text): said, as chat says of --param.
  if (unused.length) io.note(`warning: role ${name} has no ${unused.map((n) => `$${n}`).join(', ')}: its defaults ${unused.join(', ')} are left unused`);
}

/** The names of `defaults` no placeholder of `names` takes. */
const unusedDefaults = (names: readonly string[], defaults: unknown) => Object.keys((defaults ?? {}) as object).filter((n) => !names.includes(n));
