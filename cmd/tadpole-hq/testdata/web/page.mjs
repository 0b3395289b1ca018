// Drives tadpole-hq's live page in the system's Chromium, headless, and
// prints what it saw as one JSON line on stdout; the Go test checks it.
//   node page.mjs URL CHROMIUM [SCREENSHOT.png]
import { chromium } from 'playwright-core';

const [url, executablePath, shot] = process.argv.slice(2);
const out = { errors: [] };
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('pageerror', (e) => out.errors.push('pageerror: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push('console: ' + m.text()); });
  page.on('requestfailed', (r) => out.errors.push('request failed: ' + r.url()));
  page.on('request', (r) => { if (!r.url().startsWith(url)) out.errors.push('request elsewhere: ' + r.url()); });
  await page.goto(url);

  // The agent's run shows, and its event count grows.
  const row = page.locator('#runs tbody tr').first();
  await row.waitFor({ timeout: 20000 });
  out.agent = await row.locator('td').nth(1).textContent();
  const events = async () => Number((await row.getAttribute('data-events')) || 0);
  out.events = [];
  out.rates = [];
  for (let i = 0; i < 6; i++) {
    out.events.push(await events());
    out.rates.push(Number(await row.locator('td.rate').getAttribute('data-rate')));
    await page.waitForTimeout(700);
  }
  out.mode = await row.locator('td').nth(2).textContent();

  // The flame graph has the example's methods, and keeps changing.
  await page.waitForSelector('#flame g[data-name="example.Payments.charge(J)V"]', { timeout: 20000 });
  out.flame = await page.$$eval('#flame g', (gs) => gs.map((g) => g.dataset.name));
  const title = async (name) => page.$eval(`#flame g[data-name="${name}"] title`, (t) => t.textContent);
  out.serveBefore = await title('example.Shop.serve(I)V');
  await page.waitForTimeout(2500);
  out.serveAfter = await title('example.Shop.serve(I)V');

  // Responsiveness: how long the page takes to give a frame, while it
  // keeps polling and drawing.
  out.frameMs = [];
  for (let i = 0; i < 8; i++) {
    const t0 = Date.now();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    out.frameMs.push(Date.now() - t0);
    await page.waitForTimeout(150);
  }

  // Search colours the matching frames.
  await page.fill('#search', 'Payments');
  out.matches = await page.$$eval('#flame g.match', (gs) => gs.map((g) => g.dataset.name));
  out.matched = await page.textContent('#matched');
  await page.fill('#search', '');

  // Click to zoom: serve becomes the full width.
  await page.click('#flame g[data-name="example.Shop.serve(I)V"] rect');
  out.zoomWidth = await page.$eval('#flame g[data-name="example.Shop.serve(I)V"] rect', (r) => Number(r.getAttribute('width')));
  out.svgWidth = await page.$eval('#flame svg', (s) => Number(s.viewBox.baseVal.width));
  out.unzoomEnabled = await page.$eval('#unzoom', (b) => !b.disabled);
  await page.click('#unzoom');

  // The timeline has drawn bars; exceptions and log records are listed.
  await page.waitForFunction(() => document.querySelector('#tlinfo').textContent.match(/; [1-9]\d* bars/), null, { timeout: 20000 });
  out.timeline = await page.textContent('#tlinfo');
  await page.waitForSelector('#bubbles li', { timeout: 20000 });
  out.bubbles = await page.$$eval('#bubbles li', (ls) => ls.map((l) => l.textContent));
  out.exceptions = await page.$$eval('#exctable tbody tr td:first-child', (ts) => ts.map((t) => t.textContent));
  await page.waitForSelector('#markers tbody tr', { timeout: 20000 });
  await page.fill('#filter', 'out of stock');
  await page.waitForTimeout(1500);
  out.filtered = await page.$$eval('#markers tbody tr td:nth-child(5)', (ts) => ts.map((t) => t.textContent));
  await page.fill('#filter', '');

  if (shot) {
    await page.waitForTimeout(1200);
    await page.screenshot({ path: shot, fullPage: true });
  }

  // Pause: the run's mode becomes Paused and the control log shows it.
  await row.locator('button[data-action="pause"]').click();
  await page.waitForFunction(() => document.querySelector('#runs tbody tr td:nth-child(3)').textContent === 'Paused', null, { timeout: 20000 });
  out.pausedMode = await row.locator('td').nth(2).textContent();
  out.ctllog = await page.textContent('#ctllog');
  // Events the agent had buffered before it paused may still arrive: let
  // them, then count.
  await page.waitForTimeout(1500);
  const p1 = await events();
  await page.waitForTimeout(1500);
  out.pausedEvents = [p1, await events()];
  out.pausedRate = Number(await row.locator('td.rate').getAttribute('data-rate'));

  // Unpause, then stop.
  await row.locator('button[data-action="unpause"]').click();
  await page.waitForFunction(() => document.querySelector('#runs tbody tr td:nth-child(3)').textContent === 'Tracing', null, { timeout: 20000 });
  await row.locator('button[data-action="stop"]').click();
  await page.waitForFunction(() => document.querySelector('#ctllog').textContent.includes('Stop@'), null, { timeout: 20000 });
  out.finalLog = await page.textContent('#ctllog');
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
