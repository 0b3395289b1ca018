// Opens tadpole-hq's live page on a run with hundreds of thousands of call
// paths while it grows, and prints what it saw as one JSON line: how long
// the page took to give frames, what the flame graph says, whether search
// and zoom still answer.
//   node large.mjs URL CHROMIUM
import { chromium } from 'playwright-core';

const [url, executablePath] = process.argv.slice(2);
const out = { errors: [], frameMs: [] };
const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.on('pageerror', (e) => out.errors.push('pageerror: ' + e.message));
  page.on('console', (m) => { if (m.type() === 'error') out.errors.push('console: ' + m.text()); });
  await page.goto(url);
  await page.waitForSelector('#flame svg g', { timeout: 60000 });
  // Sample frame latency while the run grows and the page keeps up.
  const until = Date.now() + 8000;
  while (Date.now() < until) {
    const t0 = Date.now();
    await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
    out.frameMs.push(Date.now() - t0);
    await page.waitForTimeout(200);
  }
  await page.waitForFunction(() => /\d+ call paths/.test(document.querySelector('#flameinfo').textContent), null, { timeout: 30000 });
  out.flameinfo = await page.textContent('#flameinfo');
  out.frames = await page.$$eval('#flame g', (gs) => gs.length);
  let t0 = Date.now();
  await page.fill('#search', 'C1\\.');
  out.matched = await page.textContent('#matched');
  out.searchMs = Date.now() - t0;
  t0 = Date.now();
  await page.click('#flame g[data-node]:not([data-node="0"]) rect');
  out.zoomMs = Date.now() - t0;
  out.unzoomEnabled = await page.$eval('#unzoom', (b) => !b.disabled);
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
