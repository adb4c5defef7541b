// The command loop both browser drivers share (driver.mjs: Chromium through
// playwright-core; firefox.mjs: Firefox through puppeteer-core and WebDriver BiDi). It
// reads one JSON command a line on stdin and answers each with one JSON line on stdout,
// {"id", "value"} or {"id", "error"}, in order.
//
// Commands: open {url} -> page number; click, fill {page, selector[, value]};
// eval {page, expr} -> the expression's JSON value (a promise is awaited);
// viewport {page, width, height}; screenshot {page, path}; logs {page} -> the page's console lines and errors;
// requests {page} -> every request the page made ({url, type, referer}); close.
//
// engine gives what differs between the two libraries: newPage() -> a page with goto,
// evaluate, screenshot and on('console' | 'request' | 'pageerror'); click(page, selector),
// fill(page, selector, value), viewport(page, width, height); resourceType(request);
// close().

import readline from 'node:readline';

export async function serve(engine) {
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
      const p = await engine.newPage();
      const n = pages.push(p) - 1;
      logs[n] = [];
      requests[n] = [];
      p.on('console', (m) => logs[n].push(`${m.type()}: ${m.text()}`));
      p.on('request', (r) => requests[n].push({ url: r.url(), type: engine.resourceType(r), referer: r.headers()['referer'] || '' }));
      p.on('pageerror', (e) => logs[n].push(`pageerror: ${e.message}`));
      await p.goto(url, { waitUntil: 'load', timeout: 15000 });
      return n;
    },
    async click({ page: n, selector }) {
      await engine.click(page(n), selector);
      return null;
    },
    async fill({ page: n, selector, value }) {
      await engine.fill(page(n), selector, value);
      return null;
    },
    async eval({ page: n, expr }) {
      return await page(n).evaluate(expr);
    },
    async viewport({ page: n, width, height }) {
      await engine.viewport(page(n), width, height);
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
      await engine.close();
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
  // stdin closed (the test ended): close the browser so none outlives the test.
  await engine.close().catch(() => {});
  process.exit(0);
}
