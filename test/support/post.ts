/** POSTs JSON to the emulator with a key: for checks that need the raw HTTP answer. */
export async function post(env: { apiRoot: string; apiKey: string }, path: string, body: unknown, headers: Record<string, string> = {}, key = env.apiKey) {
  const res = await fetch(`${env.apiRoot}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, headers: res.headers, text, json };
}
