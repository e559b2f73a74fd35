// npm run bench: every ratio is measured against its baseline in the same run.
import { BIN, startEmulator, timed, median, report, summary } from './lib.mjs';

const only = process.argv[2];
const sections = {
  async startup() {
    const node = [];
    const help = [];
    const version = [];
    for (let i = 0; i < 15; i++) {
      node.push((await timed(process.execPath, ['-e', '0'])).ms);
      help.push((await timed(process.execPath, [BIN, '--help'])).ms);
      version.push((await timed(process.execPath, [BIN, '--version'])).ms);
    }
    const base = median(node);
    const r = median(help) / base;
    report('router --help start time / node -e 0', `${r.toFixed(2)}x (${median(help).toFixed(0)} vs ${base.toFixed(0)} ms)`, '<= 1.5x', r <= 1.5);
    const v = median(version) / base;
    report('router --version start time / node -e 0', `${v.toFixed(2)}x (${median(version).toFixed(0)} ms)`, '<= 1.5x', v <= 1.5);
  },

  async chatStream(emu) {
    const words = 200_000;
    const body = JSON.stringify({ model: 'local/lorem', stream: true, messages: [{ role: 'user', content: `write ${words} words` }] });
    const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key };
    const curlRuns = [];
    const cliRuns = [];
    let textBytes = 0;
    for (let i = 0; i < 3; i++) {
      curlRuns.push((await timed('curl', ['-sN', '-H', `Authorization: Bearer ${emu.api_key}`, '-H', 'content-type: application/json', '-d', body, `${emu.api_root}/v1/chat/completions`])).ms);
      const cli = await timed(process.execPath, [BIN, 'chat', '--model', 'local/lorem', `write ${words} words`], { env });
      cliRuns.push(cli.ms);
      textBytes = cli.bytes;
    }
    const ratio = median(curlRuns) / median(cliRuns);
    report(
      `router chat stream throughput / curl -N (${words} words)`,
      `${ratio.toFixed(2)} (${median(cliRuns).toFixed(0)} vs ${median(curlRuns).toFixed(0)} ms)`,
      '>= 0.95',
      ratio >= 0.95,
    );
    void textBytes;
  },
};

const emu = await startEmulator();
try {
  for (const [name, fn] of Object.entries(sections)) {
    if (only && only !== name) continue;
    await fn(emu);
  }
} finally {
  await emu.stop();
}
summary();
