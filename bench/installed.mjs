// The package as users install it: `npm pack`, then `npm install` of the tarball into a folder of its own.
// Its one-shot start-up against the checkout's and bare node's, interleaved rounds in the same run.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BIN, WORK, timed, median, report } from './lib.mjs';

const ROUNDS = 15;
const spread = (ratios) => `spread ${Math.min(...ratios).toFixed(2)}-${Math.max(...ratios).toFixed(2)}`;

/**
 * bin/router.cjs of the package installed from a tarball of this checkout (BENCH_BIN's, when set).
 * BENCH_INSTALLED_BIN: an installed package's bin/router.cjs already there (a before/after).
 */
function installedBin() {
  if (process.env.BENCH_INSTALLED_BIN) return process.env.BENCH_INSTALLED_BIN;
  const checkout = join(dirname(BIN), '..');
  const packs = join(WORK, 'packs');
  mkdirSync(packs, { recursive: true });
  // dist is built (npm run bench builds first): --ignore-scripts packs it as it is.
  execFileSync('npm', ['pack', '--ignore-scripts', '--silent', '--pack-destination', packs], { cwd: checkout, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = join(packs, readdirSync(packs).find((name) => name.endsWith('.tgz')));
  const prefix = join(WORK, 'installed');
  execFileSync('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', '--prefix', prefix, tarball], { stdio: ['ignore', 'ignore', 'inherit'] });
  const bin = join(prefix, 'node_modules', 'router-cli', 'bin', 'router.cjs');
  if (!existsSync(bin)) throw new Error(`the installed package has no ${bin}`);
  return bin;
}

/**
 * A second copy of the installed package whose build caches are of another node's version: what a user
 * whose node is not the build's runs (bin/router.cjs then makes caches of its own, in XDG_CACHE_HOME).
 */
function otherNodeBin(installed) {
  const pkg = join(dirname(installed), '..');
  const copy = `${pkg}-other-node`;
  rmSync(copy, { recursive: true, force: true });
  cpSync(pkg, copy, { recursive: true });
  for (const folder of [join(copy, 'dist'), join(copy, 'dist', 'cli.chunks')]) {
    for (const name of readdirSync(folder).filter((n) => n.endsWith(`.${process.version}.cache`))) renameSync(join(folder, name), join(folder, name.replace(process.version, 'v0.0.0')));
  }
  return join(copy, 'bin', 'router.cjs');
}

export const installedSections = {
  async installed(emu) {
    const installed = installedBin();
    const env = { ...process.env, ROUTER_API_ROOT: emu.api_root, ROUTER_API_KEY: emu.api_key, ROUTER_NO_LOG: '1' };
    const other = otherNodeBin(installed);
    const otherEnv = { ...env, XDG_CACHE_HOME: join(WORK, 'other-node-cache') };
    rmSync(otherEnv.XDG_CACHE_HOME, { recursive: true, force: true });
    // A newcomer's one-shot keeps its ledger line and conversation (logging is on by default): HOME
    // alone places them, as for a user, in a folder of the bench's own.
    const loggedEnv = { ...env, HOME: join(WORK, 'logged-home') };
    for (const name of ['ROUTER_NO_LOG', 'ROUTER_STATE_DIR', 'ROUTER_CONFIG_DIR', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME']) delete loggedEnv[name];
    rmSync(loggedEnv.HOME, { recursive: true, force: true });
    mkdirSync(loggedEnv.HOME, { recursive: true });
    const otherChat = [];
    const otherFirst = (await timed(process.execPath, [other, 'chat', '--model', 'local/echo', 'hi'], { env: otherEnv })).ms;
    const chat = ['chat', '--model', 'local/echo', 'hi'];
    const node = [], checkout = [], pkg = [], pkgLogged = [], pkgHelp = [], help = [], pkgModels = [];
    const cpu = { node: [], pkg: [], pkgLogged: [], pkgModels: [], before: [] };
    const faults = { node: [], pkg: [], pkgLogged: [], before: [] };
    // BENCH_BEFORE_INSTALLED_BIN: another build's installed bin/router.cjs, timed in the same rounds (a before/after).
    const before = process.env.BENCH_BEFORE_INSTALLED_BIN;
    const beforeChat = [];
    const time = async (list, cpuList, args, opts, faultList) => {
      const r = await timed(process.execPath, args, opts);
      list.push(r.ms);
      cpuList?.push(r.cpuMs);
      faultList?.push(r.faults);
    };
    for (let i = 0; i < ROUNDS; i++) {
      await time(node, cpu.node, ['-e', '0'], undefined, faults.node);
      await time(checkout, undefined, [BIN, ...chat], { env });
      await time(pkg, cpu.pkg, [installed, ...chat], { env }, faults.pkg);
      await time(pkgLogged, cpu.pkgLogged, [installed, ...chat], { env: loggedEnv }, faults.pkgLogged);
      await time(help, undefined, [BIN, 'chat', '--help']);
      await time(pkgHelp, undefined, [installed, 'chat', '--help']);
      // A command besides chat: its code in chunks of its own (scripts/bundle-split.mjs), read when it runs.
      await time(pkgModels, cpu.pkgModels, [installed, 'models'], { env });
      if (before) await time(beforeChat, cpu.before, [before, ...chat], { env }, faults.before);
      await time(otherChat, undefined, [other, ...chat], { env: otherEnv });
    }
    const vsCheckout = median(pkg) / median(checkout);
    report('installed package: one-shot router chat / the checkout', `${vsCheckout.toFixed(2)}x (${median(pkg).toFixed(0)} vs ${median(checkout).toFixed(0)} ms; ${spread(pkg.map((p, i) => p / checkout[i]))})`, '<= 1.1x', vsCheckout <= 1.1);
    const vsNode = median(pkg) / median(node);
    report('installed package: one-shot router chat / node -e 0', `${vsNode.toFixed(2)}x (${median(node).toFixed(0)} ms node; ${spread(pkg.map((p, i) => p / node[i]))})`, '<= 1.5x', vsNode <= 1.5);
    const checkoutVsNode = median(checkout) / median(node);
    report('the checkout\'s one-shot router chat / node -e 0', `${checkoutVsNode.toFixed(2)}x (${median(checkout).toFixed(0)} ms; ${spread(checkout.map((c, i) => c / node[i]))})`, '<= 1.35x', checkoutVsNode <= 1.35);
    report('  installed one-shot chat, CPU time (user+sys) / node -e 0\'s', `${(median(cpu.pkg) / median(cpu.node)).toFixed(2)}x (${median(cpu.pkg).toFixed(0)} vs ${median(cpu.node).toFixed(0)} ms)`, 'info');
    report('  installed one-shot chat, minor page faults / node -e 0\'s', `${(median(faults.pkg) / median(faults.node)).toFixed(2)}x (${median(faults.pkg)} vs ${median(faults.node)})`, 'info');
    report('  installed one-shot chat logged (the default), HOME alone / node -e 0', `${(median(pkgLogged) / median(node)).toFixed(2)}x (${median(pkgLogged).toFixed(0)} ms; ${spread(pkgLogged.map((p, i) => p / node[i]))}; CPU ${(median(cpu.pkgLogged) / median(cpu.node)).toFixed(2)}x; page faults ${median(faults.pkgLogged)})`, 'info');
    report('  installed router models / node -e 0', `${(median(pkgModels) / median(node)).toFixed(2)}x (${spread(pkgModels.map((m, i) => m / node[i]))}; CPU ${(median(cpu.pkgModels) / median(cpu.node)).toFixed(2)}x)`, 'info');
    if (before) {
      const r = median(pkg) / median(beforeChat);
      report('  installed one-shot chat / BENCH_BEFORE_INSTALLED_BIN\'s', `${r.toFixed(2)}x (${spread(pkg.map((p, i) => p / beforeChat[i]))}; CPU ${(median(cpu.pkg) / median(cpu.before)).toFixed(2)}x; page faults ${median(faults.pkg)} vs ${median(faults.before)})`, 'info');
      report('  BENCH_BEFORE_INSTALLED_BIN\'s one-shot chat / node -e 0', `${(median(beforeChat) / median(node)).toFixed(2)}x (${spread(beforeChat.map((b, i) => b / node[i]))}; CPU ${(median(cpu.before) / median(cpu.node)).toFixed(2)}x)`, 'info');
    }
    const vsOther = median(otherChat) / median(checkout);
    report('installed package on a node the build made no code cache for: one-shot chat / the checkout', `${vsOther.toFixed(2)}x (${median(otherChat).toFixed(0)} ms; ${spread(otherChat.map((o, i) => o / checkout[i]))}; its first call, making the cache: ${otherFirst.toFixed(0)} ms)`, '<= 1.1x', vsOther <= 1.1);
    const helpRatio = median(pkgHelp) / median(help);
    report('installed package: router chat --help / the checkout', `${helpRatio.toFixed(2)}x (${median(pkgHelp).toFixed(0)} vs ${median(help).toFixed(0)} ms; ${spread(pkgHelp.map((p, i) => p / help[i]))})`, '<= 1.1x', helpRatio <= 1.1);
  },
};
