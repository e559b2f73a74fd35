import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sharedCliEnv, type CliEnv } from '../support/cli-env.js';

let t: CliEnv;
let mgmt: Record<string, string>;
const sent = sharedCliEnv((e) => {
  t = e;
  mgmt = { ROUTER_MANAGEMENT_KEY: e.managementKey };
});

/** sox that can decode MP3 (the capability the checks need: Debian's libsox-fmt-mp3), not just sox. */
function hasSox(): boolean {
  try {
    return /\bmp3\b/i.test(execFileSync('sox', ['-h'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  } catch {
    return false;
  }
}

describe('router speak', () => {
  it('streams real MP3 to stdout; longer text gives longer audio', async () => {
    // spec: speech.content-type
    const short = await t.run(['speak', 'Hello there.', '--voice', 'alloy', '--model', 'local/tts'], { env: mgmt });
    expect(short.code).toBe(0);
    expect(short.stderr).toBe('');
    // An MPEG audio frame starts with 11 set sync bits.
    expect(short.stdoutBytes[0]).toBe(0xff);
    expect(short.stdoutBytes[1]! & 0xe0).toBe(0xe0);
    const long = await t.run(['speak', 'Hello there, this is a much longer sentence with many more words to say.', '--voice', 'alloy', '--model', 'local/tts'], { env: mgmt });
    expect(long.stdoutBytes.length).toBeGreaterThan(short.stdoutBytes.length * 2);
    if (hasSox()) {
      writeFileSync(join(t.dir, 'short.mp3'), short.stdoutBytes);
      writeFileSync(join(t.dir, 'long.mp3'), long.stdoutBytes);
      const info = (f: string, flag: string) => execFileSync('sox', ['--i', flag, join(t.dir, f)]).toString().trim();
      expect(info('short.mp3', '-r')).toBe('24000');
      const d1 = Number(info('short.mp3', '-D'));
      const d2 = Number(info('long.mp3', '-D'));
      expect(d1).toBeGreaterThan(0.3);
      expect(d2).toBeGreaterThan(d1 * 2);
    } else {
      console.warn('sox with MP3 decoding is not installed: the MP3 decoder check was skipped (npm test installs it where it can)');
    }
  });

  it('writes PCM (16-bit LE, 24 kHz) to -o atomically; speed shortens it', async () => {
    const out = join(t.dir, 'voice.pcm');
    const r = await t.run(['speak', 'one two three four', '--voice', 'sage', '--model', 'local/tts', '-o', out, '--json'], { env: mgmt });
    expect(r.code).toBe(0);
    const meta = JSON.parse(r.stdout);
    expect(meta).toMatchObject({ file: out, content_type: 'audio/pcm' });
    const pcm = readFileSync(out);
    expect(pcm.length).toBe(meta.bytes);
    expect(pcm.length % 2).toBe(0);
    const samples = new Int16Array(pcm.buffer, pcm.byteOffset, pcm.length / 2);
    expect(Math.max(...samples)).toBeGreaterThan(1000);
    const fast = await t.run(['speak', 'one two three four', '--voice', 'sage', '--model', 'local/tts', '--format', 'pcm', '--speed', '2'], { env: mgmt });
    expect(fast.stdoutBytes.length).toBeLessThan(pcm.length * 0.6);
    if (hasSox()) {
      const stat = execFileSync('sox', ['-t', 'raw', '-r', '24000', '-e', 'signed', '-b', '16', '-c', '1', out, '-n', 'stat'], { stdio: ['ignore', 'ignore', 'pipe'] });
      void stat;
      const len = execFileSync('sh', ['-c', `sox -t raw -r 24000 -e signed -b 16 -c 1 ${out} -n stat 2>&1 | grep Length`]).toString();
      expect(Number(len.split(':')[1])).toBeCloseTo(pcm.length / 2 / 24000, 2);
    }
    expect(readdirSync(t.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });

  it('multi-speaker turns and reference audio go out in the spec\'s shape', async () => {
    const turns = join(t.dir, 'turns.json');
    writeFileSync(turns, JSON.stringify([{ text: 'hi', voice: 'alloy' }, { text: 'hello', voice: 'ember' }]));
    const clip = join(t.dir, 'me.wav');
    writeFileSync(clip, Buffer.from('RIFFfakewav'));
    const r = await t.run(['speak', '--turns', turns, '--voice', 'alloy', '--model', 'local/tts', '--format', 'pcm', '--reference-audio', clip, '--reference-text', 'my words', '--reference-audio', clip], { env: mgmt });
    expect(r.code).toBe(0);
    const body = sent('/v1/audio/speech')[0]!.body;
    expect(body.input).toEqual([{ text: 'hi', voice: 'alloy' }, { text: 'hello', voice: 'ember' }]);
    expect(body.input_references.map((p: any) => p.type)).toEqual(['input_audio', 'text', 'input_audio']);
    expect(body.input_references[0].input_audio.data).toMatch(/^data:audio\/wav;base64,/);
  });

  it('a turn of --turns with an empty or blank text is refused before sending, as an empty text is', async () => {
    const turns = join(t.dir, 'blank-turns.json');
    for (const text of ['', '  \n']) {
      writeFileSync(turns, JSON.stringify([{ text: 'hi' }, { text, voice: 'ember' }]));
      const r = await t.run(['speak', '--turns', turns, '--voice', 'alloy', '--model', 'local/tts', '-o', join(t.dir, 'blank.mp3')], { env: mgmt });
      expect(r).toMatchObject({ code: 2, stderr: 'error: --turns: turn 2 has no text\n' });
    }
    expect(sent('/v1/audio/speech')).toHaveLength(0);
  });

  it('refuses a terminal-less mistake list before sending: bad speed, mixed references, 4 clips, no voice', async () => {
    // spec: speech.speed, speech.references, speech.required
    const clip = join(t.dir, 'me.wav');
    const img = join(t.dir, 'me.png');
    writeFileSync(img, 'png');
    t.clearRequests();
    for (const [args, msg] of [
      [['x', '--voice', 'alloy', '--model', 'local/tts', '--speed', 'fast'], /not a number/],
      // Was sent, and the service's 400 came back: a multiplier of 0 or less means nothing.
      ...['0', '-1', '-0', 'NaN', '1e309', ''].map((v): [string[], RegExp] => [['x', '--voice', 'alloy', '--model', 'local/tts', `--speed=${v}`], /^error: option '--speed <x>' argument '.*' is invalid: (must be more than 0 \(a multiplier: 1 is normal\)|not a number); see "router speak --help"$/m]),
      [['x', '--voice', 'alloy', '--model', 'local/tts', '--reference-audio', clip, '--reference-image', img], /cannot be mixed/],
      [['x', '--voice', 'alloy', '--model', 'local/tts', ...Array(4).fill(['--reference-audio', clip]).flat()], /1 to 3 times/],
      [['x', '--model', 'local/tts'], /^error: no voice: give --voice/],
      [['x', '--voice', 'alloy'], /no model/],
    ] as [string[], RegExp][]) {
      const r = await t.run(['speak', ...args], { env: mgmt });
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr).toMatch(msg);
    }
    expect(t.requests()).toHaveLength(0);
  });

  it('server rules: non-default speed without speed control 400; a standard key 403 (exit 3)', async () => {
    const r = await t.run(['speak', 'x', '--voice', 'alloy', '--model', 'local/tts-basic', '--speed', '1.5'], { env: mgmt });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no speed control/);
    const std = await t.run(['speak', 'x', '--voice', 'alloy', '--model', 'local/tts']);
    expect(std.code).toBe(3);
    expect(std.stderr).toMatch(/Only management keys/);
  });

  it('a stream cut mid-way leaves no file behind and exits 8', async () => {
    const out = join(t.dir, 'cut.mp3');
    await t.admin('faults', { faults: ['cut,after=2,times=1,path=/audio'] });
    const r = await t.run(['speak', 'a long enough sentence to be cut in the middle of it', '--voice', 'alloy', '--model', 'local/tts', '-o', out], { env: mgmt });
    expect(r.code).toBe(8);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(t.dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});
