import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullDiskPerFile, mounted } from '../support/full-disk.js';
import { startCliEnv, type CliEnv } from '../support/cli-env.js';
import { ResultWriter } from '../../src/emulator/state/batch-store.js';

// A real full file system: a small tmpfs, filled up (test/support/full-disk.ts).
const { disk, fill } = fullDiskPerFile();
let t: CliEnv;
let requests: string;

beforeAll(async () => {
  t = await startCliEnv();
  requests = join(t.dir, 'requests.jsonl');
  writeFileSync(requests, ['a', 'b'].map((c) => JSON.stringify({ custom_id: c, body: { model: 'local/echo', messages: [{ role: 'user', content: c }] } })).join('\n'));
});
afterAll(() => t?.close());

describe.skipIf(!mounted)('a full disk: one line naming the file, exit 1, nothing half-written', () => {
  it('a batch run job record: named, no temp file, and no batch created', async () => {
    fill();
    t.clearRequests();
    const state = join(disk, 'state');
    mkdirSync(state, { recursive: true });
    const r = await t.run(['batch', 'run', requests], { env: { ROUTER_STATE_DIR: state } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^error: cannot write ${state}/jobs/job_\\w+/job\\.json: disk full\\n$`));
    // No job folder is left behind, empty or not.
    expect(readdirSync(join(state, 'jobs'))).toEqual([]);
    expect(t.requests().filter((q) => q.method === 'POST')).toHaveLength(0);
  });

  it('a chat still answers; the ledger line and the turn it could not keep are warnings, in words', async () => {
    fill();
    const state = join(disk, 'chat-state');
    const r = await t.run(['chat', '--model', 'local/echo', '--verbose', 'hi'], { env: { ROUTER_STATE_DIR: state } });
    expect(r).toMatchObject({ code: 0, stdout: 'hi\n' });
    expect(r.stderr).toContain(`warning: the usage ledger ${state}/usage.jsonl could not be written (disk full)`);
  });

  it('results and audio: the file named, no half file left', async () => {
    fill();
    const id = JSON.parse((await t.run(['batch', 'create', requests, '--watch', '--interval', '0.05', '--json'])).stdout).id as string;
    const old = join(disk, 'out.jsonl');
    for (const [args, env] of [
      [['batch', 'get', id, '--results', old], {}],
      [['speak', 'a sentence long enough to need more than no room at all '.repeat(40), '--voice', 'alloy', '--model', 'local/tts', '-o', join(disk, 'out.mp3')], { ROUTER_MANAGEMENT_KEY: t.managementKey }],
    ] as [string[], Record<string, string>][]) {
      const r = await t.run(args, { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^error: cannot write .*out\.(jsonl|mp3): disk full\n$/);
    }
    expect(readdirSync(disk).filter((n) => n.includes('out.'))).toEqual([]);
  });

  it('--save-images: the answer is printed, the image named, exit 1 (not a usage error), no half image left', async () => {
    const images = join(disk, 'images');
    mkdirSync(images, { recursive: true });
    fill();
    const r = await t.run(['chat', '--model', 'local/painter', '--modalities', 'text,image', '--save-images', images, 'a red circle']);
    expect(r).toMatchObject({ code: 1, stdout: 'Here is an image of a red circle.\n', stderr: `error: --save-images: cannot write ${images}/image-1.png (disk full)\n` });
    expect(readdirSync(images)).toEqual([]);
  });
});

describe.skipIf(!mounted)('the emulator\'s results file on a disk that fills up', () => {
  it('a result that fits only in part is not written at all: no torn line, even once there is room again', () => {
    const file = join(disk, 'results.jsonl');
    rmSync(join(disk, 'filler'), { force: true });
    const writer = new ResultWriter(file);
    try {
      writer.append({ custom_id: 'first' });
      fill();
      // Room for a page or two: a result of 12 KB fits in part only.
      truncateSync(join(disk, 'filler'), Math.max(0, statSync(join(disk, 'filler')).size - 6000));
      expect(() => writer.append({ custom_id: 'big', text: 'x'.repeat(12_000) })).toThrow(/disk full|ENOSPC/);
      rmSync(join(disk, 'filler'));
      writer.append({ custom_id: 'after' });
    } finally {
      writer.close();
    }
    expect(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l).custom_id)).toEqual(['first', 'after']);
  });
});
