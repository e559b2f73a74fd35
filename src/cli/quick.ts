import { readFileSync, statSync } from 'node:fs';
import { VERSION } from '../client/version.js';
import { EXIT } from './exit-codes.js';

/** The root help as `npm run build` rendered it (stdout not a terminal: 80 columns), beside the code it came from. */
const ROOT_HELP = new URL('./root-help.txt', import.meta.url);
const MAIN = new URL('./main.js', import.meta.url);

/** The rendered root help, unless it is missing or older than the command table it shows. */
function renderedHelp(): string | undefined {
  try {
    if (statSync(ROOT_HELP).mtimeMs < statSync(MAIN).mtimeMs) return undefined;
    return readFileSync(ROOT_HELP, 'utf8') || undefined;
  } catch {
    return undefined;
  }
}

/**
 * `router --version` and, off a terminal, `router --help`, which bin/router sends here: answered
 * without loading the command tree (a bare node start). Anything else goes to main.
 */
export async function main(argv: string[]): Promise<number> {
  const text = argv[2] === '--version' || argv[2] === '-V' ? `${VERSION}\n` : renderedHelp();
  if (text === undefined) return (await import('./main.js')).main(argv);
  const err = await new Promise<NodeJS.ErrnoException | null | undefined>((resolve) => {
    process.stdout.once('error', resolve);
    process.stdout.write(text, resolve);
  });
  // A failed write (a full disk) is reported as every command's is.
  if (!err || err.code === 'EPIPE') return EXIT.OK;
  const [{ reportError }, { IO }] = await Promise.all([import('./errors.js'), import('./io.js')]);
  return reportError(Object.assign(err, { path: 'stdout' }), new IO());
}
