import { ProtocolError } from './errors.js';

/**
 * A 2xx answer of a kind the call cannot use: an HTML page (another server, or an API root that is
 * not one), anything but audio where audio was asked for (it would be saved as an audio file), or
 * JSON where an event stream was.
 * Other mismatches pass: the body's own parsing says what is wrong with it.
 */
export function unexpectedContent(contentType: string | string[] | undefined, accept: string, url: string, apiRoot: string): ProtocolError | undefined {
  const mime = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0]!.trim().toLowerCase();
  if (!mime) return undefined;
  if (mime === 'text/html') return new ProtocolError(`${url} answered with a web page, not the API: is ${apiRoot} the API root (the URL before /v1)?`);
  if (accept === 'audio/*' && !mime.startsWith('audio/') && mime !== 'application/octet-stream') return new ProtocolError(`the service sent ${mime} instead of audio`);
  // A whole JSON answer to a stream request would read as a stream cut before its first event.
  if (accept === 'text/event-stream' && mime === 'application/json') return new ProtocolError('the service sent application/json where an event stream was asked for');
  return undefined;
}
