// How long the explorer page takes to render in headless Chromium.
//   node bench/explore/render.mjs PAGE_DIR [RUNS]
// Prints, per run, the page script's own time (parse the data, draw every
// map, table and plot: body[data-render-ms]) and the wall time from
// navigation to ready; then the median of each. Uses the playwright-core
// that tools/install-deps.sh installs in test/Explore.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
const here = path.dirname(fileURLToPath(import.meta.url));
const { chromium } = await import(path.join(here, '../../test/Explore/node_modules/playwright-core/index.mjs'));
const [dir, runsArg] = process.argv.slice(2);
if (!dir) { console.error('usage: render.mjs PAGE_DIR [RUNS]'); process.exit(2); }
const runs = Number(runsArg || 5);
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
const script = [], wall = [];
for (let i = 0; i < runs; i++) {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const t0 = performance.now();
  await page.goto('file://' + path.resolve(dir, 'index.html'));
  await page.waitForSelector('body[data-ready="1"]', { state: 'attached' });
  wall.push(performance.now() - t0);
  script.push(Number(await page.evaluate(() => document.body.dataset.renderMs)));
  await page.close();
}
await browser.close();
const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log('runs ' + runs + ': script ' + script.map((v) => v.toFixed(1)).join(' ') + ' ms; navigation to ready ' + wall.map((v) => v.toFixed(0)).join(' ') + ' ms');
console.log('median: script ' + med(script).toFixed(1) + ' ms, navigation to ready ' + med(wall).toFixed(0) + ' ms');
