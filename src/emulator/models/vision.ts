import { HttpError } from '../http/http.js';
import type { ModelSpec } from './models.js';
import { imageDimensions } from './png.js';
import { bad } from '../http/validate.js';
import { counted, nounFor } from '../../internal/counted.js';

type Body = Record<string, unknown>;

/** One non-text part of a request: its modality and where its bytes are (a data URL's, or a URL). */
export interface MediaPart {
  modality: 'image' | 'file' | 'audio';
  url?: string;
  data?: Buffer;
  mediaType?: string;
  filename?: string;
}

const DATA_URL = /^data:([\w.+-]+\/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,(.*)$/s;

function fromUrl(modality: MediaPart['modality'], url: unknown, where: string, filename?: string): MediaPart {
  if (typeof url !== 'string' || url === '') bad(`${where} must be an http(s) or data: URL`);
  const data = DATA_URL.exec(url);
  if (data) return { modality, data: Buffer.from(data[2]!, 'base64'), mediaType: data[1], filename };
  if (!/^https?:\/\//i.test(url)) bad(`${where} must be an http(s) or data: URL`);
  return { modality, url, filename };
}

/** The media parts of one content array: chat's image_url, file and input_audio parts, and Responses' input_image, input_file and input_audio. */
function partsOf(content: unknown, where: string): MediaPart[] {
  if (!Array.isArray(content)) return [];
  const out: MediaPart[] = [];
  content.forEach((part: Body, i) => {
    const at = `${where}[${i}]`;
    switch (part?.type) {
      case 'image_url':
        out.push(fromUrl('image', (part.image_url as Body | undefined)?.url ?? part.image_url, `${at}.image_url.url`));
        break;
      case 'input_image':
        out.push(fromUrl('image', part.image_url, `${at}.image_url`));
        break;
      case 'file':
      case 'input_file': {
        const file = (part.type === 'file' ? part.file : part) as Body | undefined;
        const name = typeof file?.filename === 'string' ? file.filename : undefined;
        out.push(fromUrl('file', file?.file_data ?? file?.file_url, `${at}.${part.type === 'file' ? 'file.' : ''}file_data`, name));
        break;
      }
      case 'input_audio': {
        const audio = part.input_audio as Body | undefined;
        if (typeof audio?.data !== 'string') bad(`${at}.input_audio.data must be base64 audio`);
        const format = typeof audio.format === 'string' ? audio.format : 'wav';
        const data = DATA_URL.exec(audio.data);
        out.push({ modality: 'audio', data: Buffer.from(data ? data[2]! : audio.data, 'base64'), mediaType: data?.[1] ?? `audio/${format}` });
        break;
      }
    }
  });
  return out;
}

/** Every media part of a chat's messages or a Responses input. */
export function mediaParts(messages: unknown): MediaPart[] {
  if (!Array.isArray(messages)) return [];
  return messages.flatMap((m: Body, i) => partsOf(m?.content, `messages[${i}].content`));
}

/** A part of a modality the model does not take is a 400 naming it, as the service answers. */
export function checkInputModalities(model: ModelSpec, parts: MediaPart[]): void {
  const takes = ['text', ...(model.input ?? [])];
  const refused = parts.find((p) => !takes.includes(p.modality));
  if (refused) throw new HttpError(400, `${model.id} does not take ${refused.modality} input (it takes ${takes.join(', ')})`, 'invalid_request');
}

const n = (x: number) => x.toLocaleString('en-US');

/** What `local/vision` answers: one line per part with its kind, media type, size, and an image's pixel dimensions. */
export function describeParts(parts: MediaPart[]): string {
  if (!parts.length) return 'I received no image, file or audio, only text.';
  const lines = parts.map((p, i) => {
    const name = p.filename ? ` "${p.filename}"` : '';
    if (p.url) return `${i + 1}. ${p.modality}${name}: a URL, ${p.url}`;
    const size = imageDimensions(p.data!);
    const pixels = p.modality === 'image' ? (size ? `, ${size.width}x${size.height} pixels` : ', dimensions unreadable') : '';
    return `${i + 1}. ${p.modality}${name}: ${p.mediaType ?? 'application/octet-stream'}, ${n(p.data!.length)} ${nounFor(p.data!.length, 'byte')}${pixels}`;
  });
  return `I received ${counted(parts.length, 'attachment')}:\n${lines.join('\n')}`;
}
