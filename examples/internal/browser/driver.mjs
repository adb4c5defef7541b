// The browser side of package browser: drives Debian's headless Chromium with
// playwright-core for Go tests. It reads one JSON command a line on stdin and answers
// each with one JSON line on stdout, {"id", "value"} or {"id", "error"}, in order.
//
// usage: node driver.mjs <node_modules folder> <fresh user data dir> [JSON array of extra Chromium arguments]
// (either folder absolute or relative to the working directory)
//
// Commands: open {url} -> page number; click, fill {page, selector[, value]};
// eval {page, expr} -> the expression's JSON value (a promise is awaited);
// viewport {page, width, height}; screenshot {page, path}; logs {page} -> the page's console lines and errors;
// requests {page} -> every request the page made ({url, type, referer}); close.

import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';

const [modulesArg, userDataDirArg, extraArgs] = process.argv.slice(2);
if (!modulesArg || !userDataDirArg) {
  console.error('usage: node driver.mjs <node_modules> <user-data-dir>');
  process.exit(2);
}
// Either folder may be given relative to the working directory: createRequire takes only
// an absolute path (or a file: URL), so both are resolved first.
const modules = path.resolve(modulesArg);
const userDataDir = path.resolve(userDataDirArg);
const { chromium } = createRequire(path.join(modules, 'driver.cjs'))('playwright-core');

// Everything stays on this machine: no background or component traffic, no STUN from
// mDNS host names, loopback allowed as an ICE candidate, and fake camera and microphone
// that need no prompt.
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  viewport: { width: 1100, height: 760 },
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--use-fake-ui-for-media-stream',
    '--use-fake-device-for-media-stream',
    '--disable-quic',
    '--no-first-run',
    '--disable-component-update',
    '--disable-sync',
    '--allow-loopback-in-peer-connection',
    '--disable-features=WebRtcHideLocalIpsWithMdns',
    ...(extraArgs ? JSON.parse(extraArgs) : []),
  ],
});

const pages = [];
const logs = [];
const requests = [];
function page(n) {
  const p = pages[n];
  if (!p) throw new Error(`no page ${n}`);
  return p;
}

const ops = {
  async open({ url }) {
    const p = await context.newPage();
    const n = pages.push(p) - 1;
    logs[n] = [];
    requests[n] = [];
    p.on('console', (m) => logs[n].push(`${m.type()}: ${m.text()}`));
    p.on('request', (r) => requests[n].push({ url: r.url(), type: r.resourceType(), referer: r.headers()['referer'] || '' }));
    p.on('pageerror', (e) => logs[n].push(`pageerror: ${e.message}`));
    await p.goto(url, { waitUntil: 'load', timeout: 15000 });
    return n;
  },
  async click({ page: n, selector }) {
    await page(n).click(selector, { timeout: 10000 });
    return null;
  },
  async fill({ page: n, selector, value }) {
    await page(n).fill(selector, value, { timeout: 10000 });
    return null;
  },
  async eval({ page: n, expr }) {
    return await page(n).evaluate(expr);
  },
  async viewport({ page: n, width, height }) {
    await page(n).setViewportSize({ width, height });
    return null;
  },
  async screenshot({ page: n, path: file }) {
    await page(n).screenshot({ path: file });
    return null;
  },
  async logs({ page: n }) {
    return logs[n] || [];
  },
  async requests({ page: n }) {
    return requests[n] || [];
  },
  async close() {
    await context.close();
    return null;
  },
};

const out = (obj) => process.stdout.write(JSON.stringify(obj) + '\n');
out({ id: 0, value: 'ready' });

const lines = readline.createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (e) {
    out({ id: -1, error: `bad command: ${e.message}` });
    continue;
  }
  const op = ops[cmd.op];
  if (!op) {
    out({ id: cmd.id, error: `unknown op ${cmd.op}` });
    continue;
  }
  try {
    const value = await op(cmd);
    out({ id: cmd.id, value: value === undefined ? null : value });
  } catch (e) {
    out({ id: cmd.id, error: String(e && e.message ? e.message : e) });
  }
  if (cmd.op === 'close') break;
}
// stdin closed (the test ended): close the browser so no Chromium outlives the test.
await context.close().catch(() => {});
process.exit(0);
