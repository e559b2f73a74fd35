/** `-a/--attach PATH|URL|-`: files, stdin or URLs made into the content parts of a user message. */
import { isUtf8 } from 'node:buffer';
import { basename, extname } from 'node:path';
import { collectBounded } from '../io/bounded-read.js';
import { usage } from '../exit-codes.js';
import { readFileFor, takeStdin } from '../io/input.js';
import type { IO } from '../io/io.js';

/**
 * The largest attachment sent (before base64): 20 MiB, the image size OpenAI-compatible
 * providers take; the service states none (see docs/conformance.md).
 */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

export type AttachmentKind = 'image' | 'file' | 'audio';

export interface Attachment {
  /** As given: a path, a URL or "-". */
  source: string;
  kind: AttachmentKind;
  mediaType: string;
  filename: string;
  /** Undefined for a URL (passed as it is, never fetched). */
  data?: Buffer;
  sha256?: string;
}

const BY_EXTENSION: Record<string, [AttachmentKind, string]> = {
  '.png': ['image', 'image/png'],
  '.jpg': ['image', 'image/jpeg'],
  '.jpeg': ['image', 'image/jpeg'],
  '.webp': ['image', 'image/webp'],
  '.gif': ['image', 'image/gif'],
  '.pdf': ['file', 'application/pdf'],
  '.wav': ['audio', 'audio/wav'],
  '.mp3': ['audio', 'audio/mpeg'],
  '.txt': ['file', 'text/plain'],
  '.md': ['file', 'text/markdown'],
  '.csv': ['file', 'text/csv'],
  '.json': ['file', 'application/json'],
  '.html': ['file', 'text/html'],
  '.xml': ['file', 'application/xml'],
};

/** The type of some bytes from their magic number; undefined when none is known. */
export function sniff(b: Buffer): [AttachmentKind, string] | undefined {
  const ascii = (from: number, to: number) => b.toString('latin1', from, to);
  if (b.length >= 8 && b.readUInt32BE(0) === 0x89504e47) return ['image', 'image/png'];
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return ['image', 'image/jpeg'];
  if (ascii(0, 4) === 'GIF8') return ['image', 'image/gif'];
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WEBP') return ['image', 'image/webp'];
  if (ascii(0, 4) === 'RIFF' && ascii(8, 12) === 'WAVE') return ['audio', 'audio/wav'];
  if (ascii(0, 5) === '%PDF-') return ['file', 'application/pdf'];
  // An MP3 frame: sync bits, then layer III (a UTF-16 byte-order mark, FF FE, is not one).
  if (ascii(0, 3) === 'ID3' || (b.length >= 2 && b[0] === 0xff && (b[1]! & 0xe0) === 0xe0 && (b[1]! & 0x06) === 0x02)) return ['audio', 'audio/mpeg'];
  return undefined;
}

const TEXT: [AttachmentKind, string] = ['file', 'text/plain'];

/** UTF-8 without control characters other than tab, line ends and form feed: a text document of any name (a Makefile, piped notes). */
function isText(b: Buffer): boolean {
  if (!isUtf8(b)) return false;
  for (const byte of b) if ((byte < 0x20 && byte !== 9 && byte !== 10 && byte !== 12 && byte !== 13) || byte === 0x7f) return false;
  return true;
}

const isUrl = (s: string) => /^https?:\/\//i.test(s);

/** Reads every attachment before anything is sent: a missing file, an unknown type or one too large is one line, exit 2. */
export async function readAttachments(sources: string[] | undefined, io: IO): Promise<Attachment[]> {
  const out: Attachment[] = [];
  for (const source of sources ?? []) {
    if (isUrl(source)) {
      const path = URL.canParse(source) ? new URL(source).pathname : undefined;
      if (path === undefined) throw usage(`--attach ${source}: not a valid URL`);
      const [kind, mediaType] = BY_EXTENSION[extname(path).toLowerCase()] ?? ['image', 'image/*'];
      if (kind === 'audio') throw usage(`--attach ${source}: audio is sent as data, not as a URL; download it and attach the file`);
      out.push({ source, kind, mediaType, filename: basename(path) || 'attachment' });
      continue;
    }
    if (source === '-' && sources!.filter((s) => s === '-').length > 1) throw usage('--attach -: stdin can be attached once');
    if (source === '-') takeStdin(io, '--attach -');
    // A file too large is refused by its size, unread; a pipe or a device (/dev/zero) once it has sent that much.
    const limit = { max: MAX_ATTACHMENT_BYTES, tooMuch: tooLarge(source) };
    const data = source === '-' ? await collectBounded(io.stdin, '--attach -', io.interrupt, limit.max, limit.tooMuch) : await readFileFor('--attach', source, io.interrupt, limit);
    if (data.length === 0) throw usage(`--attach ${source}: the file is empty`);
    const type = sniff(data) ?? (source === '-' ? undefined : BY_EXTENSION[extname(source).toLowerCase()]) ?? (isText(data) ? TEXT : undefined);
    if (!type) throw usage(`--attach ${source}: unknown type (attach PNG, JPEG, WebP, GIF, PDF, WAV, MP3 or a text document)`);
    // Loaded only when a file is attached: a one-shot chat never loads node:crypto.
    const { createHash } = await import('node:crypto');
    out.push({ source, kind: type[0], mediaType: type[1], filename: source === '-' ? 'stdin' : basename(source), data, sha256: createHash('sha256').update(data).digest('hex') });
  }
  return out;
}

function tooLarge(source: string) {
  return () => usage(`--attach ${source}: larger than ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MiB, the most one attachment may hold; nothing was sent`);
}

const dataUrl = (a: Attachment) => (a.data ? `data:${a.mediaType};base64,${a.data.toString('base64')}` : a.source);
const audioFormat = (a: Attachment) => (a.mediaType === 'audio/mpeg' ? 'mp3' : 'wav');

/** The chat content parts of the attachments: image_url, file and input_audio. */
export function chatParts(attachments: Attachment[]): Record<string, unknown>[] {
  return attachments.map((a) => {
    if (a.kind === 'image') return { type: 'image_url', image_url: { url: dataUrl(a) } };
    if (a.kind === 'audio') return { type: 'input_audio', input_audio: { data: a.data!.toString('base64'), format: audioFormat(a) } };
    return { type: 'file', file: { filename: a.filename, file_data: dataUrl(a) } };
  });
}

/** The Responses content parts of the attachments: input_image, input_file and input_audio. */
export function responsesParts(attachments: Attachment[]): Record<string, unknown>[] {
  return attachments.map((a) => {
    if (a.kind === 'image') return { type: 'input_image', image_url: dataUrl(a), detail: 'auto' };
    if (a.kind === 'audio') return { type: 'input_audio', input_audio: { data: a.data!.toString('base64'), format: audioFormat(a) } };
    return a.data ? { type: 'input_file', filename: a.filename, file_data: dataUrl(a) } : { type: 'input_file', file_url: a.source };
  });
}

/**
 * How a conversation keeps an attachment: by reference (its file's name, its hash), never its bytes.
 * The reference goes to the service with the turn when the conversation is taken up: the folder
 * the file was in is this machine's own business, and is left out.
 */
export function attachmentReference(a: Attachment): string {
  if (!a.data) return `[attachment: ${a.source}]`;
  return `[attachment: ${JSON.stringify(a.filename).slice(1, -1)} (${a.mediaType}, ${a.data.length} bytes, sha256:${a.sha256})]`;
}
