/** API roots as they are kept and compared (the batch index, batch jobs, the usage ledger). */

/**
 * An API root as it is kept and compared: without a user name or password (a library client's root may
 * hold them; never written down), spelled as WHATWG URLs read it (HTTP://Host:80/api is http://host/api).
 */
export function rootKey(root: string): string {
  if (!URL.canParse(root)) return root;
  const url = new URL(root);
  url.username = url.password = '';
  return url.href.replace(/\/+$/, '');
}

/**
 * Whether two API roots are one service: as rootKey spells them, the loopback names of this machine
 * (localhost, 127.0.0.1, [::1]) being one host. `router serve` prints 127.0.0.1 and a user types
 * localhost as often: taken for two services, a batch run of the same file sent every request again.
 */
export function sameRoot(a: string, b: string): boolean {
  return serviceKey(a) === serviceKey(b);
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

function serviceKey(root: string): string {
  const key = rootKey(root);
  if (!URL.canParse(key)) return key;
  const url = new URL(key);
  if (LOOPBACK.has(url.hostname)) url.hostname = 'localhost';
  return url.href;
}

/** Whether a URL's host is this machine: localhost, 127.0.0.0/8, ::1 (what is sent there never crosses a network). */
export function isThisMachine(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return host === 'localhost' || host.endsWith('.localhost') || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Credentials sent to `url` go unencrypted and are readable on the way: plain http:// to a host not this machine. */
export function sentInTheClear(url: URL): boolean {
  return url.protocol === 'http:' && !isThisMachine(url);
}
