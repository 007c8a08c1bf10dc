// Where a big snapshot's time goes in Chromium: `node bench/probes/ax-tree.cjs URL [CHROMIUM]`
// (after `npm install --prefix bench`, which brings playwright-core with Playwright MCP).
// Times Accessibility.getFullAXTree cold, warm, with the domain enabled and limited in depth,
// Playwright's in-page ariaSnapshot for comparison, and counts the Accessibility.nodesUpdated
// events Chromium sends after a text change and a value change (what a prepared snapshot
// would need to know it is still current).
const path = require('path');
const { chromium } = require(path.join(__dirname, '..', 'node_modules', 'playwright-core'));

const [url, executablePath = '/usr/bin/chromium'] = process.argv.slice(2);
if (!url) {
  console.error('usage: node bench/probes/ax-tree.cjs URL [CHROMIUM]');
  process.exit(2);
}

(async () => {
  const browser = await chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] });
  try {
    const page = await browser.newPage();
    const cdp = await page.context().newCDPSession(page);
    const timed = async (label, work) => {
      const started = Date.now();
      const result = await work();
      console.log(`${label}: ${Date.now() - started} ms${result === undefined ? '' : ` (${result})`}`);
    };
    const nodes = async params => `${(await cdp.send('Accessibility.getFullAXTree', params)).nodes.length} nodes`;
    await page.goto(url);
    await timed('getFullAXTree, cold', () => nodes({}));
    await timed('getFullAXTree, again', () => nodes({}));
    await timed('getFullAXTree, depth 8', () => nodes({ depth: 8 }));
    let updated = 0;
    cdp.on('Accessibility.nodesUpdated', event => { updated += event.nodes.length; });
    await cdp.send('Accessibility.enable');
    await timed('getFullAXTree, domain enabled', () => nodes({}));
    await timed('getFullAXTree, enabled, again', () => nodes({}));
    await timed('ariaSnapshot (Playwright, in the page)', async () => `${(await page.locator('body').ariaSnapshot()).length} characters`);
    await page.evaluate(() => {
      const heading = document.querySelector('h1');
      if (heading) heading.textContent = 'changed heading';
      const input = document.querySelector('input');
      if (input) input.value = 'typed';
    });
    await new Promise(done => setTimeout(done, 500));
    console.log(`Accessibility.nodesUpdated after a text and a value change: ${updated} nodes`);
  } finally {
    await browser.close();
  }
})();
