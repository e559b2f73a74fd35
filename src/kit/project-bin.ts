/**
 * A command not found on PATH that a project installed (`npm install` puts its bin in `node_modules/.bin`,
 * which `npx` and npm scripts put on PATH, `node prog.js` does not): where it is, for the words of its error.
 */
import { access, constants } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';

const exists = (path: string, mode: number) => access(path, mode).then(() => true, () => false);

/**
 * `node_modules/.bin/NAME` of the folder the process runs in or one above it up to the project's root
 * (the first with a package.json or a .git, as npm finds it), as it is written from there; undefined if none.
 */
export async function projectBin(program: string | undefined, cwd = process.cwd()): Promise<string | undefined> {
  if (!program || program.includes('/')) return undefined;
  for (let dir = cwd; ; dir = dirname(dir)) {
    const found = join(dir, 'node_modules', '.bin', program);
    if (await exists(found, constants.X_OK)) return relative(cwd, found);
    if (dirname(dir) === dir) return undefined;
    if ((await exists(join(dir, 'package.json'), constants.F_OK)) || (await exists(join(dir, '.git'), constants.F_OK))) return undefined;
  }
}

/** Why a command installed in the project was not found, and the ways to run it. */
export const installedHere = (bin: string): string =>
  `the command is not on PATH but is installed in this project, ${bin}: give that path, or run the program with npx or an npm script`;
