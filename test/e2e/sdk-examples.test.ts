import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { waitBound } from '../support/until.js';

// docs/sdks.md: every program runs as written (node, the official SDKs from the package's node_modules) against
// the emulator of the flavour its first line names, and prints what its `// → …` comments say; and the page's
// list of statuses the OpenAPI does not declare is the list the emulator answers.
const ROOT = resolve(import.meta.dirname, '..', '..');
const PAGE = readFileSync(join(ROOT, 'docs', 'sdks.md'), 'utf8');
const programs = [...PAGE.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]!);
const flavorOf = (code: string) => (/^\/\/ against router serve --flavor deployed/.test(code) ? 'deployed' : 'spec');

const envs: Partial<Record<'spec' | 'deployed', CliEnv>> = {};
beforeAll(async () => {
  envs.spec = await startCliEnv();
  envs.deployed = await startCliEnv({ flavor: 'deployed' });
});
afterAll(async () => {
  await envs.spec?.close();
  await envs.deployed?.close();
});

function runProgram(file: string, t: CliEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = { ...process.env, ...t.env, ROUTER_MANAGEMENT_KEY: t.managementKey };
  return new Promise((done) => {
    const child = spawn(process.execPath, [file], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: waitBound() });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

it('docs/sdks.md has its three programs, one of them for the deployed flavour', () => {
  expect(programs.length).toBe(3);
  expect(programs.map(flavorOf)).toEqual(['deployed', 'spec', 'spec']);
});

for (const [i, code] of programs.entries()) {
  it(`docs/sdks.md's program ${i + 1} runs as written (${flavorOf(code)}) and prints what its comments say`, async () => {
    // Inside the package, so that `openai` and `@openrouter/sdk` resolve as they do in a user's project.
    const file = join(ROOT, `.sdk-example-${process.pid}-${i}.mjs`);
    writeFileSync(file, code);
    try {
      const r = await runProgram(file, envs[flavorOf(code)]!);
      const said = [...code.matchAll(/\/\/ → (.*)$/gm)].map((m) => m[1]!);
      expect({ exit: r.code, printed: r.stdout.trim().split('\n') }, r.stderr).toEqual({ exit: 0, printed: said });
    } finally {
      rmSync(file, { force: true });
    }
  });
}

describe("the OpenAPI's undeclared statuses the page lists", () => {
  it('are those the emulator answers: 401 with no key, 403 with a standard key', async () => {
    const openapi = parse(readFileSync(resolve(ROOT, '..', 'shared', 'reference', 'openrouter-openapi.yaml'), 'utf8')) as {
      paths: Record<string, Record<string, { responses?: Record<string, unknown> }>>;
    };
    const t = envs.spec!;
    const found: Record<'401' | '403', string[]> = { '401': [], '403': [] };
    for (const [path, operations] of Object.entries(openapi.paths)) {
      for (const [method, op] of Object.entries(operations)) {
        if (!op.responses) continue;
        const url = `${t.apiRoot}/v1${path.replace('{author}', 'local').replace('{slug}', 'echo').replace(/\{[^}]+\}/g, 'x')}`;
        for (const [status, key] of [['401', undefined], ['403', t.apiKey]] as const) {
          if (status in op.responses) continue;
          const headers: Record<string, string> = { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) };
          const res = await fetch(url, { method: method.toUpperCase(), headers, body: method === 'get' || method === 'delete' ? undefined : '{}' });
          await res.arrayBuffer();
          if (String(res.status) === status) found[status].push(`${method.toUpperCase()} ${path}`);
        }
      }
    }
    const listed = (status: string) => {
      const line = PAGE.split('\n- ').find((l) => l.startsWith(status))!;
      // A path named without a method is a GET.
      return [...line.matchAll(/`(?:([A-Z|]+) )?(\/[^`]*)`/g)].flatMap((m) => (m[1] ?? 'GET').split('|').map((one) => `${one} ${m[2]}`));
    };
    expect(found['401'].length + found['403'].length).toBeGreaterThan(0);
    expect(new Set(listed('401'))).toEqual(new Set(found['401']));
    expect(new Set(listed('403'))).toEqual(new Set(found['403']));
  });
});
