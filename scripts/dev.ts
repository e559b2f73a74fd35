// `npm run dev -- ARGS`: the CLI from its TypeScript sources (no build), as bin/router.cjs runs the built one.
// npm runs a script in the package's folder; the paths given are the caller's (INIT_CWD), as they are to bin/router.cjs.
import { main } from '../src/cli/main.ts';

if (process.env.INIT_CWD) process.chdir(process.env.INIT_CWD);
process.exitCode = await main(process.argv);
