import { VERSION } from '../client/version.js';
import { EXIT } from './exit-codes.js';

/**
 * `router --version` (or `-V`) and nothing else, which bin/router sends here: the version without
 * loading the command tree (a bare node start). A failed write is reported as every command's is.
 */
export async function main(): Promise<number> {
  const err = await new Promise<NodeJS.ErrnoException | null | undefined>((resolve) => {
    process.stdout.once('error', resolve);
    process.stdout.write(`${VERSION}\n`, resolve);
  });
  if (!err || err.code === 'EPIPE') return EXIT.OK;
  const [{ reportError }, { IO }] = await Promise.all([import('./errors.js'), import('./io.js')]);
  return reportError(Object.assign(err, { path: 'stdout' }), new IO());
}
