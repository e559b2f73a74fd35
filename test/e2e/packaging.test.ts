import { execFile, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startCliEnv } from '../support/cli-env.js';

// Issue 34, rough edge 9: what `npm pack` ships and what installing it runs.
const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));

describe('the package', () => {
  it('ships a LICENSE, ignores tarballs, and says the node version engines says', () => {
    expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toMatch(/^MIT License/);
    expect(pkg.files).toContain('LICENSE');
    expect(readFileSync(join(root, '.gitignore'), 'utf8').split('\n')).toContain('*.tgz');
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const engines = /^>=(\d+\.\d+\.\d+)$/.exec(pkg.engines.node)![1]!;
    expect(readme).toContain(`Node.js ${engines} or newer`);
    // The README links what `npm install` warns about and what `npm test` installs; docs/development.md says it.
    expect(readme).toMatch(/`npm test` installs[^]*\]\(docs\/development\.md\)/);
    expect(readFileSync(join(root, 'docs', 'development.md'), 'utf8')).toMatch(/`npm test` first installs[^]*apt-get[^]*root/);
  });

  // Issue 46: npm 11 ends `npm install` with a warning for every dependency install script not reviewed.
  it('npm install in the checkout has no install script left to warn about (allowScripts covers them; docs/development.md says why)', () => {
    expect(Object.values(pkg.allowScripts ?? {})).not.toContain(true);
    const ls = spawnSync('npm', ['install-scripts', 'ls'], { cwd: root, encoding: 'utf8' });
    if (ls.status !== 0 && /Unknown command/i.test(ls.stderr + ls.stdout)) return; // an npm before allowScripts: nothing to warn about
    expect(ls.stdout + ls.stderr).toMatch(/No packages with unreviewed install scripts/);
    expect(readFileSync(join(root, 'docs', 'development.md'), 'utf8')).toMatch(/install-script warnings[^]*allowScripts/);
  });

  it('the packed package.json has no prepare script (installing runs no build); postpack puts it back', () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-pack-'));
    try {
      mkdirSync(join(dir, 'scripts'));
      copyFileSync(join(root, 'scripts', 'pack.mjs'), join(dir, 'scripts', 'pack.mjs'));
      const manifest = { ...pkg, scripts: { ...pkg.scripts, build: 'node -e 0' } };
      const text = `${JSON.stringify(manifest, null, 2)}\n`;
      writeFileSync(join(dir, 'package.json'), text);
      const env = { ...process.env, npm_execpath: '' };
      expect(spawnSync(process.execPath, ['scripts/pack.mjs', 'before'], { cwd: dir, env }).status).toBe(0);
      const packed = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      expect(packed.scripts.prepare).toBeUndefined();
      expect(Object.keys(packed.scripts).filter((s) => /^(pre|post)?install$|^prepare$/.test(s))).toEqual([]);
      expect(spawnSync(process.execPath, ['scripts/pack.mjs', 'after'], { cwd: dir, env }).status).toBe(0);
      expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(text);
      // A pack that failed (or was stopped) between prepack and postpack: the next pack still puts it back.
      expect(spawnSync(process.execPath, ['scripts/pack.mjs', 'before'], { cwd: dir, env }).status).toBe(0);
      expect(spawnSync(process.execPath, ['scripts/pack.mjs', 'before'], { cwd: dir, env }).status).toBe(0);
      expect(spawnSync(process.execPath, ['scripts/pack.mjs', 'after'], { cwd: dir, env }).status).toBe(0);
      expect(readFileSync(join(dir, 'package.json'), 'utf8')).toBe(text);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // Issue 46: `npm run conformance` is tsx running test/conformance/report.ts outside vitest, where
  // importing vitest throws: what it loads (the test environment, the checks) must not need it.
  it('npm run conformance\'s report loads and starts its environment outside vitest', () => {
    expect(pkg.scripts.conformance).toBe('npm run build && tsx test/conformance/report.ts');
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('VITEST')) env[k] = v;
    const code = "const { startTestEnv } = await import('./test/helpers.ts'); await import('./test/conformance/checks.ts'); await import('./test/conformance/trace.ts'); const t = await startTestEnv(); await t.close(); console.log('started')";
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: root, encoding: 'utf8', env });
    expect(r.stderr).not.toMatch(/vitest/i);
    expect(r.stdout).toBe('started\n');
  });

  // Issue 46, newcomer pass 12: the installed README, --help and error messages point at docs/*.md,
  // which the tarball did not ship (an installed user found none of them).
  it('the tarball ships every docs page the README, the docs and the CLI\'s own words name', () => {
    const r = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root, encoding: 'utf8' });
    expect(r.status).toBe(0);
    const packed = new Set((JSON.parse(r.stdout) as { files: { path: string }[] }[])[0]!.files.map((f) => f.path));
    const named = new Set<string>();
    const texts = [readFileSync(join(root, 'README.md'), 'utf8'), ...readdirSync(join(root, 'docs')).map((f) => readFileSync(join(root, 'docs', f), 'utf8'))];
    const sources = (dir: string): string[] => readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [readFileSync(join(dir, e.name), 'utf8')] : []));
    for (const text of [...texts, ...sources(join(root, 'src', 'cli'))]) for (const m of text.matchAll(/docs\/[a-z-]+\.md/g)) named.add(m[0]);
    for (const text of texts) for (const m of text.matchAll(/\]\(([a-z-]+\.md)[)#]/g)) named.add(`docs/${m[1]}`);
    expect(named.size).toBeGreaterThan(10);
    expect([...named].filter((p) => !packed.has(p))).toEqual([]);
  });

  it('npm run dev runs the CLI from its sources', () => {
    const r = spawnSync(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'scripts/dev.ts', '--version'], { cwd: root, encoding: 'utf8' });
    expect(pkg.scripts.dev).toBe('tsx scripts/dev.ts');
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });

  it('npm run dev from a subfolder takes paths from there, as bin/router.cjs does', () => {
    const dry = spawnSync('npm', ['run', '-s', 'dev', '--', 'chat', '--model', 'local/echo', '--dry-run', '-a', '../README.md', 'hi'], {
      cwd: join(root, 'test'),
      encoding: 'utf8',
      env: { ...process.env, ROUTER_API_ROOT: 'http://127.0.0.1:9/api', ROUTER_API_KEY: 'sk-rt-v1-dev', ROUTER_NO_LOG: '1' },
    });
    expect(dry.stderr).not.toMatch(/cannot read/);
    expect(dry.stdout).toContain('"filename": "README.md"');
  });
});

// A program that installed the package runs batch jobs as `batch run` does (npm run build first).
const PROGRAM = `
import { RouterClient } from 'router-cli';
import { BatchError, runJob } from 'router-cli/batch';
const client = new RouterClient({ apiKey: process.env.KEY, apiRoot: process.env.ROOT, maxRetries: 0 });
const env = { ROUTER_STATE_DIR: process.env.STATE };
const chunks = [];
const submitted = [];
const outcome = await runJob(client, {
  input: process.argv[2], model: 'local/echo', maxRequests: 2, interval: 0.05, env,
  results: { write: (chunk) => void chunks.push(chunk), format: 'numbered' },
  on: { submitted: (job, shard) => submitted.push(shard.batch_id) },
});
const refused = await runJob(client, { input: process.argv[2] + '.missing', env }).catch((err) => err);
await client.close();
const results = Buffer.concat(chunks).toString().trim().split('\\n').map((l) => JSON.parse(l));
console.log(JSON.stringify({ shards: outcome.job.shards.length, failed: outcome.failed, submitted, results: results.map((r) => [r.line, r.custom_id]), refused: refused instanceof BatchError ? refused.reason : String(refused) }));
`;

describe('the library', () => {
  it('a program imports runJob from router-cli/batch and runs a file as a job against the emulator', async () => {
    expect(pkg.exports['./batch']).toEqual({ types: './dist/batch/index.d.ts', default: './dist/batch/index.js' });
    const t = await startCliEnv();
    const dir = mkdtempSync(join(tmpdir(), 'router-program-'));
    try {
      mkdirSync(join(dir, 'node_modules'));
      symlinkSync(root, join(dir, 'node_modules', 'router-cli'), 'dir');
      writeFileSync(join(dir, 'program.mjs'), PROGRAM);
      const input = join(dir, 'requests.jsonl');
      writeFileSync(input, Array.from({ length: 5 }, (_, i) => JSON.stringify({ custom_id: `r${i + 1}`, body: { messages: [{ role: 'user', content: `q${i + 1}` }] } })).join('\n') + '\n');
      const env = { ...process.env, KEY: t.apiKey, ROOT: t.apiRoot, STATE: join(dir, 'state') };
      // Asynchronous: the emulator answers from this process.
      const out = await new Promise<string>((done, fail) => execFile(process.execPath, ['program.mjs', input], { cwd: dir, env }, (err, stdout, stderr) => (err ? fail(new Error(`${err.message}\n${stderr}`)) : done(stdout))));
      const r = JSON.parse(out);
      expect(r).toEqual({ shards: 3, failed: 0, submitted: [expect.stringMatching(/^batch_/), expect.stringMatching(/^batch_/), expect.stringMatching(/^batch_/)], results: [1, 2, 3, 4, 5].map((n) => [n, `r${n}`]), refused: 'invalid' });
      expect(new Set(r.submitted).size).toBe(3);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      await t.close();
    }
  });
});
