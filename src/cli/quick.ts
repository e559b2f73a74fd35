import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { VERSION } from '../client/version.js';
import { EXIT } from './exit-codes.js';

/** The root help as `npm run build` rendered it (stdout not a terminal: 80 columns), beside the code it came from. */
const ROOT_HELP = new URL('./root-help.txt', import.meta.url);
const MAIN = new URL('./main.js', import.meta.url);

const BUILD_ID = /^\/\* router build \w+ \*\/\n/;

/** The build id line atop main.js (scripts/build-js.mjs); none after a bare tsc. */
function mainBuild(): string | undefined {
  const head = Buffer.alloc(48);
  const fd = openSync(MAIN, 'r');
  try {
    return BUILD_ID.exec(head.toString('latin1', 0, readSync(fd, head, 0, head.length, 0)))?.[0];
  } finally {
    closeSync(fd);
  }
}

/**
 * The rendered root help, unless it is missing or of another build than the command table it shows
 * (its first line is main.js's build id: file times do not survive npm pack and install).
 */
function renderedHelp(): string | undefined {
  try {
    const text = readFileSync(ROOT_HELP, 'utf8');
    const id = mainBuild();
    return id && text.startsWith(id) ? text.slice(id.length) || undefined : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `text` to stdout straight to its file descriptor: process.stdout, a stream over it, loads
 * node's streams and net (28 modules, ~100 page faults: more than the rest of the answer). Only what
 * the descriptor cannot take now (EAGAIN: a non-blocking pipe, full) goes through process.stdout.
 */
async function writeOut(text: string): Promise<NodeJS.ErrnoException | null | undefined> {
  const bytes = Buffer.from(text);
  let written = 0;
  try {
    while (written < bytes.length) written += writeSync(1, bytes, written);
    return undefined;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return err as NodeJS.ErrnoException;
  }
  return new Promise((resolve) => {
    process.stdout.once('error', resolve);
    process.stdout.write(bytes.subarray(written), resolve);
  });
}

/**
 * `router --version` and, off a terminal, `router --help`, which bin/router.cjs sends here: answered
 * without loading the command tree (a bare node start). Anything else goes to main.
 */
export async function main(argv: string[]): Promise<number> {
  const text = argv[2] === '--version' || argv[2] === '-V' ? `${VERSION}\n` : renderedHelp();
  if (text === undefined) return (await import('./main.js')).main(argv);
  const err = await writeOut(text);
  // A failed write (a full disk) is reported as every command's is.
  if (!err || err.code === 'EPIPE') return EXIT.OK;
  const [{ reportError }, { IO }] = await Promise.all([import('./errors.js'), import('./io/io.js')]);
  return reportError(Object.assign(err, { path: 'stdout' }), new IO());
}
