// Renders `router --help` as a pipe sees it into dist/cli/root-help.txt (src/cli/quick.ts prints it),
// after the build id line of dist/cli/main.js: quick.ts prints it only for the build it was rendered from.
import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = fileURLToPath(new URL('../dist/cli/root-help.txt', import.meta.url));
rmSync(file, { force: true });
const text = execFileSync(process.execPath, [fileURLToPath(new URL('../bin/router.cjs', import.meta.url)), '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
const id = /^\/\* router build \w+ \*\/\n/.exec(readFileSync(fileURLToPath(new URL('../dist/cli/main.js', import.meta.url)), 'latin1'))?.[0];
if (id) writeFileSync(file, id + text);
