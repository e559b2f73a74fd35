/**
 * The docs pages (docs/*.md, shipped in the package) by the path a reader can open: help and messages
 * name them as `docs/keys.md`, which means nothing in an installed package's user's folder. The package's
 * folder is the one holding this code's dist/ (a module, or the bundle dist/cli.bundle.cjs) or, in a
 * checkout run from source, src/; worked out from this file's place, with no file looked at.
 */
import { dirname, join, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Help, type Command } from '../commander.js';
import { wrapped } from './narrow-help.js';

let root: string | undefined;

/** The folder of the package this code is part of. */
function packageFolder(): string {
  if (root !== undefined) return root;
  const here = fileURLToPath(import.meta.url).split(sep);
  const at = Math.max(here.lastIndexOf('dist'), here.lastIndexOf('src'));
  root = at > 0 ? here.slice(0, at).join(sep) || sep : dirname(dirname(dirname(here.join(sep))));
  return root;
}

/** `text` with each docs page it names (`docs/keys.md`) given by its absolute path in the package. */
export function withInstalledDocs(text: string): string {
  return text.replace(/(?<![\w./-])docs\/([\w-]+\.md)\b/g, (_, page: string) => join(packageFolder(), 'docs', page));
}

/**
 * Stands for a space of a page's path while help is wrapped (wrapped at whitespace, a path under "John Smith" would be
 * cut): a character of private use, which no text of help holds and which is no whitespace (U+00A0 is, to a regex's \s).
 */
const HELD_SPACE = '\ue000';

/** withInstalledDocs for text help wraps: the spaces of each path held as one word, until unheldSpaces. */
const unbrokenDocs = (text: string): string => withInstalledDocs(text.replace(/(?<![\w./-])docs\/[\w-]+\.md\b/g, (page) => `\0${page}\0`)).replace(/\0([^\0]*)\0/g, (_, path: string) => path.replaceAll(' ', HELD_SPACE));

/** Help as wrapped, with the spaces unbrokenDocs held given back. */
const unheldSpaces = (text: string): string => text.replaceAll(HELD_SPACE, ' ');

/** Help's settings that name docs pages by their paths (before wrapping, each path one word), for configureHelp. */
export const docsInHelp: Partial<Help> = {
  commandDescription: (c) => unbrokenDocs(Help.prototype.commandDescription.call(null, c)),
  optionDescription: function (this: Help, o) {
    return unbrokenDocs(Help.prototype.optionDescription.call(this, o));
  },
  argumentDescription: function (this: Help, a) {
    return unbrokenDocs(Help.prototype.argumentDescription.call(this, a));
  },
  formatHelp: function (this: Help, c, helper) {
    return unheldSpaces(Help.prototype.formatHelp.call(this, c, helper));
  },
};

/** The width help is wrapped to: a terminal's, else (piped, rendered at build) 80 columns. */
export const helpWidth = (out: { columns?: number }, tty: boolean): number => (tty && out.columns) || 80;

/**
 * A command's notes and examples after its help, as `command` writes its help: each line of prose (a paragraph, one
 * line in the source) wrapped to the help's width, an indented line (an example, one command a line) kept whole.
 */
export function helpAfterText(text: string, command: Command): string {
  const width = command.configureOutput().getOutHelpWidth?.() ?? 80;
  const lines = unbrokenDocs(text).split('\n').map((line) => (/^\s/.test(line) ? line : wrapped(line, width)));
  return unheldSpaces(lines.join('\n'));
}
