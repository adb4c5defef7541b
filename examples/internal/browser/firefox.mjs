// The browser side of package browser for Firefox: drives Debian's stock firefox-esr,
// headless, with puppeteer-core over WebDriver BiDi (no patched browser build), through
// the command loop of serve.mjs (the commands are listed there).
//
// usage: node firefox.mjs <node_modules folder> <fresh profile dir> [JSON object of Firefox preferences]
// (either folder absolute or relative to the working directory; the preferences are
// added to, and override, the ones below)

import { createRequire } from 'node:module';
import path from 'node:path';
import { serve } from './serve.mjs';

const [modulesArg, profileArg, extraPrefs] = process.argv.slice(2);
if (!modulesArg || !profileArg) {
  console.error('usage: node firefox.mjs <node_modules> <profile-dir> [prefs JSON]');
  process.exit(2);
}
const modules = path.resolve(modulesArg);
const profile = path.resolve(profileArg);
const puppeteer = createRequire(path.join(modules, 'driver.cjs'))('puppeteer-core');

// Everything stays on this machine (puppeteer's own preferences already turn off
// updates, telemetry and the other background traffic), with a fake camera and
// microphone (Firefox's fake devices: a moving test picture and a 1 kHz tone) that need
// no prompt, loopback and real host addresses (no mDNS names) as ICE candidates, and
// sound allowed to play without a click.
const browser = await puppeteer.launch({
  browser: 'firefox',
  protocol: 'webDriverBiDi',
  executablePath: '/usr/bin/firefox-esr',
  headless: true,
  userDataDir: profile,
  defaultViewport: { width: 1100, height: 760 },
  extraPrefsFirefox: {
    'media.navigator.streams.fake': true,
    'media.navigator.permission.disabled': true,
    'media.peerconnection.ice.loopback': true,
    'media.peerconnection.ice.obfuscate_host_addresses': false,
    'media.autoplay.default': 0,
    'media.autoplay.blocking_policy': 0,
    'network.dns.disableIPv6': true,
    ...(extraPrefs ? JSON.parse(extraPrefs) : {}),
  },
});

await serve({
  newPage: () => browser.newPage(),
  click: (p, selector) => p.locator(selector).setTimeout(10000).click(),
  fill: (p, selector, value) => p.locator(selector).setTimeout(10000).fill(value),
  viewport: (p, width, height) => p.setViewport({ width, height }),
  // WebDriver BiDi names no resource type: a navigation is the document, the rest other.
  resourceType: (r) => (r.isNavigationRequest() ? 'document' : 'other'),
  close: () => browser.close(),
});
