/** `--save-images DIR`: generated images written as files, never dumped as base64. */
import { rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CliError, EXIT, usage } from '../exit-codes.js';
import type { IO } from '../io/io.js';
import { sniff } from './attach.js';
import { describeCode, isPathProblem } from '../../internal/system-errors.js';
import { visible } from '../../internal/visible.js';
import { counted } from '../../internal/counted.js';

const EXTENSIONS: Record<string, string> = { 'image/png': '.png', 'image/jpeg': '.jpg', 'image/webp': '.webp', 'image/gif': '.gif' };

/** The folder must exist and be a folder before anything is sent. */
export function checkImagesDir(dir: string | undefined): void {
  if (dir === undefined) return;
  try {
    if (!statSync(dir).isDirectory()) throw usage(`--save-images ${dir}: not a folder`);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === 'string') throw usage(`--save-images ${dir}: ${describeCode(code)}`);
    throw err;
  }
}

/**
 * Writes each data-URL image to DIR (image-1.png, image-2.jpg, …, never over an existing file) and
 * names each path on stderr; URL images are listed, not fetched. Without DIR, says how many came back.
 */
export function showImages(io: IO, images: { image_url?: { url?: string } }[] | undefined, dir: string | undefined): void {
  if (!images?.length) return;
  const urls = images.map((i) => i.image_url?.url ?? '').filter(Boolean);
  if (dir === undefined) {
    io.note(`${counted(urls.length, 'image')} came back (--save-images DIR writes them)`);
    return;
  }
  let n = 0;
  for (const url of urls) {
    const m = /^data:([^;,]*)(;[^,]*)?,(.*)$/s.exec(url);
    if (!m) {
      io.note(`image: ${visible(url)}`);
      continue;
    }
    const bytes = Buffer.from(m[3]!, (m[2] ?? '').includes('base64') ? 'base64' : 'utf8');
    const ext = EXTENSIONS[sniff(bytes)?.[1] ?? m[1]!] ?? '.bin';
    for (;;) {
      const path = join(dir, `image-${++n}${ext}`);
      try {
        writeFileSync(path, bytes, { flag: 'wx' });
        io.note(`image: ${path}`);
        break;
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        if (code === 'EEXIST') continue;
        // A file begun (a disk that filled up) is not left half-written.
        rmSync(path, { force: true });
        const message = `--save-images: cannot write ${path} (${describeCode(code)})`;
        throw isPathProblem(code) ? usage(message) : new CliError(message, EXIT.FAILURE);
      }
    }
  }
}
