// The browser side of package browser: drives Debian's headless Chromium with
// playwright-core for Go tests, through the command loop of serve.mjs (the commands are
// listed there).
//
// usage: node driver.mjs <node_modules folder> <fresh user data dir> [JSON array of extra Chromium arguments]
// (either folder absolute or relative to the working directory)

import { createRequire } from 'node:module';
import path from 'node:path';
import { serve } from './serve.mjs';

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

await serve({
  newPage: () => context.newPage(),
  click: (p, selector) => p.click(selector, { timeout: 10000 }),
  fill: (p, selector, value) => p.fill(selector, value, { timeout: 10000 }),
  viewport: (p, width, height) => p.setViewportSize({ width, height }),
  resourceType: (r) => r.resourceType(),
  close: () => context.close(),
});
