import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmulator, type Emulator } from '../../src/emulator/server.js';
import { encodePng } from '../../src/emulator/png.js';
import { runInProcess, type InProcessOptions } from '../support/inprocess.js';

// chat and responses beyond text (issue 33), over real HTTP against the emulator in this process.
let emu: Emulator;
let dir: string;
let env: Record<string, string>;
let png: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'router-rich-'));
  emu = await startEmulator({ stateDir: join(dir, 'state'), port: 0, batchDelayMs: 0 });
  const { apiKey, managementKey } = emu.store.firstKeys();
  env = { ROUTER_API_ROOT: emu.apiRoot, ROUTER_API_KEY: apiKey, ROUTER_MANAGEMENT_KEY: managementKey, ROUTER_CONFIG_DIR: join(dir, 'config'), ROUTER_STATE_DIR: join(dir, 'rs'), XDG_STATE_HOME: join(dir, 'xdg'), ROUTER_PROFILE: '', ROUTER_MODEL: '', ROUTER_VOICE: '', ROUTER_SPEECH_MODEL: '', ROUTER_EMBED_MODEL: '' };
  png = join(dir, 'photo.png');
  writeFileSync(png, encodePng(40, 30, () => [200, 10, 10]));
});
afterAll(async () => {
  await emu.close();
  rmSync(dir, { recursive: true, force: true });
});

const run = (args: string[], o: InProcessOptions = {}) => runInProcess(args, { ...o, env: { ...env, ...o.env } });
const lastBody = () => emu.requestLog[emu.requestLog.length - 1]!.body as Record<string, any>;

describe('attachments', () => {
  for (const stream of ['--stream', '--no-stream']) {
    it(`an image goes as an image_url data URL part after the text; local/vision reads its size (${stream})`, async () => {
      const r = await run(['chat', stream, '--model', 'local/vision', '-a', png, 'what is this?']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/1\. image: image\/png, \d+ bytes, 40x30 pixels/);
      const content = lastBody().messages.at(-1).content;
      expect(content[0]).toEqual({ type: 'text', text: 'what is this?' });
      expect(content[1].type).toBe('image_url');
      expect(content[1].image_url.url).toMatch(/^data:image\/png;base64,iVBOR/);
    });
  }
});
