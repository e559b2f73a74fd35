import { ProtocolError } from './errors.js';
import { withoutUserinfo } from '../internal/userinfo.js';

/**
 * A 2xx answer of a kind the call cannot use: an HTML page (another server, or an API root that is
 * not one), anything but audio where audio was asked for (it would be saved as an audio file), or
 * JSON where an event stream was.
 * Other mismatches pass: the body's own parsing says what is wrong with it.
 */
export function unexpectedContent(contentType: string | string[] | undefined, accept: string, url: string, apiRoot: string): ProtocolError | undefined {
  const mime = (Array.isArray(contentType) ? contentType[0] : contentType)?.split(';')[0]!.trim().toLowerCase();
  if (!mime) return undefined;
  if (mime === 'text/html') return new ProtocolError(`${withoutUserinfo(url)} answered with a web page, not the API: is ${withoutUserinfo(apiRoot)} the API root (the URL before /v1)?`);
  if (accept === 'audio/*' && !mime.startsWith('audio/') && mime !== 'application/octet-stream') return new ProtocolError(`the service sent ${mime} instead of audio`);
  // A whole JSON answer to a stream request would read as a stream cut before its first event.
  if (accept === 'text/event-stream' && mime === 'application/json') return new ProtocolError('the service sent application/json where an event stream was asked for');
  return undefined;
}

/** A redirect is not followed (the key would go with it): it says where to, and asks about the API root. */
export function redirected(status: number, locationHeader: string | string[] | undefined, url: string, apiRoot: string): ProtocolError {
  const location = [locationHeader].flat()[0];
  let to = '';
  try {
    if (location) to = ` to ${withoutUserinfo(new URL(location, url).toString())}`;
  } catch {
    /* a Location that is no URL: the status says enough */
  }
  return new ProtocolError(`HTTP ${status} from ${withoutUserinfo(url)}: a redirect${to}, not followed (the key stays with the API root): is ${withoutUserinfo(apiRoot)} the API root (the URL before /v1)?`);
}
