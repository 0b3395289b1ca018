// Opens tadpole-hq's live page while examples/java/Shop.java runs under
// the JVM agent, and prints what it saw as one JSON line on stdout; the Go
// test checks it.
//   node java.mjs URL CHROMIUM SERVE-METHOD [SCREENSHOT.png]
import { chromium } from 'playwright-core';

const [url, executablePath, serve, shot] = process.argv.slice(2);
const out = { errors: [] };
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('pageerror', (e) => out.errors.push('pageerror: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push('console: ' + m.text()); });
  page.on('requestfailed', (r) => out.errors.push('request failed: ' + r.url()));
  page.on('request', (r) => { if (!r.url().startsWith(url)) out.errors.push('request elsewhere: ' + r.url()); });
  await page.goto(url);

  // The JVM's run shows, and its event count grows.
  const row = page.locator('#runs tbody tr').first();
  await row.waitFor({ timeout: 30000 });
  out.agent = await row.locator('td').nth(1).textContent();
  const events = async () => Number((await row.getAttribute('data-events')) || 0);
  out.events = [];
  for (let i = 0; i < 4; i++) {
    out.events.push(await events());
    await page.waitForTimeout(700);
  }
  out.mode = await row.locator('td').nth(2).textContent();

  // The flame graph has the example's methods. Sized by calls, it shows
  // the cashiers' whole call tree (by time, the waits between orders take
  // nearly all the width and the shortest calls are too narrow to draw).
  await page.selectOption('#sizeby', 'calls');
  await page.waitForFunction(() => document.querySelector('#flameinfo').textContent.startsWith('widths by calls'), null, { timeout: 20000 });
  await page.waitForSelector(`#flame g[data-name="${serve}"]`, { timeout: 30000 });
  out.flameinfo = await page.textContent('#flameinfo');
  out.flame = await page.$$eval('#flame g', (gs) => gs.map((g) => g.dataset.name));

  // The caught OutOfStock with its bubble path, and the JUL records.
  await page.waitForSelector('#bubbles li', { timeout: 30000 });
  out.bubbles = await page.$$eval('#bubbles li', (ls) => ls.map((l) => l.textContent));
  out.exceptions = await page.$$eval('#exctable tbody tr td:first-child', (ts) => ts.map((t) => t.textContent));
  await page.waitForSelector('#markers tbody tr', { timeout: 30000 });
  out.markers = await page.$$eval('#markers tbody tr td:nth-child(4)', (ts) => ts.map((t) => t.textContent));

  if (shot) {
    await page.waitForTimeout(1500);
    await page.screenshot({ path: shot, fullPage: true });
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
