// Renders `router --help` as a pipe sees it into dist/cli/root-help.txt (src/cli/quick.ts prints it).
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const file = fileURLToPath(new URL('../dist/cli/root-help.txt', import.meta.url));
rmSync(file, { force: true });
const text = execFileSync(process.execPath, [fileURLToPath(new URL('../bin/router', import.meta.url)), '--help'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
writeFileSync(file, text);
