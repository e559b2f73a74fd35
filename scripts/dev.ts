// `npm run dev -- ARGS`: the CLI from its TypeScript sources (no build), as bin/router runs the built one.
import { main } from '../src/cli/main.ts';

process.exitCode = await main(process.argv);
