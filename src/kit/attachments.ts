/**
 * Attachments: files, bytes or URLs made into the content parts of a user message (chat's
 * image_url, file and input_audio; Responses' input_image, input_file and input_audio).
 */
import { isUtf8 } from 'node:buffer';
import { basename, extname } from 'node:path';
import { readLocalFile } from '../internal/local-file.js';
import { isPipe, readPipe, unreadableWhy } from '../internal/named-input.js';
import { blankInput, onlyBlanks } from '../internal/blank.js';
import { AttachmentError } from './errors.js';
import { nounFor } from '../internal/counted.js';
import { checkOptions, optionNames } from '../client/option-names.js';
import { ValidationError } from '../client/errors.js';
import { shownGiven } from '../internal/shape.js';

/**
 * The largest attachment sent (before base64): 20 MiB, the image size OpenAI-compatible
 * providers take; the service states none (see docs/conformance.md).
 */
export const MAX_ATTACHMENT_BYTES = 20 * 1024 * 1024;

export type AttachmentKind = 'image' | 'file' | 'audio';

export interface Attachment {
  /** As given: a path, a URL, or a name for bytes ("-" for stdin). */
  source: string;
  kind: AttachmentKind;
  mediaType: string;
  filename: string;
  /** Undefined for a URL (passed as it is, never fetched). */
  data?: Buffer | undefined;
  sha256?: string | undefined;
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

export const isAttachmentUrl = (s: string) => /^https?:\/\//i.test(s);

/** An attachment by URL: sent as it is, never fetched (its type from its extension; an image when none). */
export function attachmentFromUrl(url: string): Attachment {
  const path = URL.canParse(url) ? new URL(url).pathname : undefined;
  if (path === undefined) throw new AttachmentError('invalid_url', url, 'not a valid URL');
  const [kind, mediaType] = BY_EXTENSION[extname(path).toLowerCase()] ?? ['image', 'image/*'];
  if (kind === 'audio') throw new AttachmentError('audio_url', url, 'audio is sent as data, not as a URL; download it and attach the file');
  return { source: url, kind, mediaType, filename: basename(path) || 'attachment' };
}

export const tooLargeAttachment = (source: string) => new AttachmentError('too_large', source, `larger than ${MAX_ATTACHMENT_BYTES / 1024 / 1024} MiB, the most one attachment may hold; nothing was sent`);

/** The names of BytesOptions's members, checked against it both ways (a new option is a name here too). */
const BYTES_OPTIONS = optionNames<BytesOptions>()({ source: 1, filename: 1, mediaType: 1 });

export interface BytesOptions {
  /** What the attachment is called (a file name; "-" for stdin): its extension helps tell the type. */
  source?: string | undefined;
  /** The name sent with a file part (default: the source's base name). */
  filename?: string | undefined;
  /** The media type, when known (else told from the bytes, then the source's extension). */
  mediaType?: string | undefined;
}

/** An attachment of bytes: its type from its magic number, then its name's extension, then whether it is text. */
export async function attachmentFromBytes(bytes: Uint8Array, opts: BytesOptions = {}): Promise<Attachment> {
  checkOptions('attachmentFromBytes()', opts, BYTES_OPTIONS);
  const source = opts.source ?? opts.filename ?? 'attachment';
  // From JavaScript: else node's TypeError ("The first argument must be of type string … Received undefined").
  if (!(bytes instanceof Uint8Array)) throw new ValidationError(`attachmentFromBytes() takes bytes (a Buffer or a Uint8Array), not ${typeof bytes === 'string' ? 'a string: Buffer.from(text)' : shownGiven(bytes)}`);
  const data = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // Blank lines are nothing to read either (a pipe from a command that printed no text).
  if (onlyBlanks(data)) throw new AttachmentError('empty', source, source === '-' ? blankInput(data) : blankInput(data, 'the file'));
  if (data.length > MAX_ATTACHMENT_BYTES) throw tooLargeAttachment(source);
  const given = opts.mediaType ? (Object.values(BY_EXTENSION).find(([, m]) => m === opts.mediaType) ?? [opts.mediaType.startsWith('image/') ? 'image' : opts.mediaType.startsWith('audio/') ? 'audio' : 'file', opts.mediaType]) : undefined;
  const type = given ?? sniff(data) ?? (source === '-' ? undefined : BY_EXTENSION[extname(source).toLowerCase()]) ?? (isText(data) ? TEXT : undefined);
  if (!type) throw new AttachmentError('unknown_type', source, 'unknown type (attach PNG, JPEG, WebP, GIF, PDF, WAV, MP3 or a text document)');
  // Loaded only when something is attached: a one-shot chat never loads node:crypto.
  const { createHash } = await import('node:crypto');
  const filename = opts.filename ?? (source === '-' ? 'stdin' : basename(source));
  return { source, kind: type[0] as AttachmentKind, mediaType: type[1], filename, data, sha256: createHash('sha256').update(data).digest('hex') };
}

/**
 * An attachment from a path or an http(s) URL. A file is read whole, at most 20 MiB (a larger one
 * is refused by its size, unread); a pipe or a device (`<(cmd)`) is read once, refused past 20 MiB.
 */
export async function readAttachment(source: string): Promise<Attachment> {
  if (isAttachmentUrl(source)) return attachmentFromUrl(source);
  let data: Buffer;
  try {
    data = isPipe(source) ? await readPipe(source, MAX_ATTACHMENT_BYTES, () => tooLargeAttachment(source)) : readLocalFile(source, MAX_ATTACHMENT_BYTES);
  } catch (err) {
    if (err instanceof AttachmentError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EFBIG') throw tooLargeAttachment(source);
    if (typeof code !== 'string') throw err;
    throw new AttachmentError('unreadable', source, unreadableWhy(code));
  }
  return attachmentFromBytes(data, { source });
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
  return `[attachment: ${JSON.stringify(a.filename).slice(1, -1)} (${a.mediaType}, ${a.data.length} ${nounFor(a.data.length, 'byte')}, sha256:${a.sha256})]`;
}
