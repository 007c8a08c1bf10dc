// Runs one Lighthouse audit on an existing page of a running browser and prints
// {"json": <JSON report>, "html": <HTML report>} on stdout. Started by devtools-mcp with a
// single argument, a JSON object: lighthouseDir, wsEndpoint, targetId, mode, device.
// The flags mirror chrome-devtools-mcp 1.11.0's lighthouse_audit.
import path from 'node:path';
import {createRequire} from 'node:module';
import {pathToFileURL} from 'node:url';

const MOBILE_USER_AGENT =
  'Mozilla/5.0 (Linux; Android 11; moto g power (2022)) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Mobile Safari/537.36';
const DESKTOP_USER_AGENT =
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/136.0.0.0 Safari/537.36';

const config = JSON.parse(process.argv[1]);
const lighthouse = await import(
  pathToFileURL(path.join(config.lighthouseDir, 'core', 'index.js')).href
);
// The puppeteer-core Lighthouse itself imports (its ES module build), so pages are shared.
const require = createRequire(path.join(config.lighthouseDir, 'package.json'));
const puppeteerMain = require.resolve('puppeteer-core');
const esmEntry = puppeteerMain.replace(`${path.sep}cjs${path.sep}`, `${path.sep}esm${path.sep}`);
const puppeteerModule = await import(pathToFileURL(esmEntry).href);
const puppeteer = puppeteerModule.default ?? puppeteerModule;

const flags = {
  onlyCategories: ['accessibility', 'seo', 'best-practices', 'agentic-browsing'],
  output: ['json', 'html'],
  maxWaitForLoad: 30_000,
  logLevel: 'error',
};
if (config.device === 'desktop') {
  flags.formFactor = 'desktop';
  flags.screenEmulation = {mobile: false, width: 1350, height: 940, deviceScaleFactor: 1, disabled: false};
  flags.emulatedUserAgent = DESKTOP_USER_AGENT;
} else {
  flags.formFactor = 'mobile';
  flags.screenEmulation = {mobile: true, width: 412, height: 823, deviceScaleFactor: 1.75, disabled: false};
  flags.emulatedUserAgent = MOBILE_USER_AGENT;
}

const browser = await puppeteer.connect({browserWSEndpoint: config.wsEndpoint, defaultViewport: null});
try {
  const target = browser.targets().find(candidate => candidate._targetId === config.targetId);
  const page = target ? await target.page() : null;
  if (!page) {
    throw new Error('The page to audit was not found in the browser.');
  }
  const result =
    config.mode === 'navigation'
      ? await lighthouse.navigation(page, page.url(), {flags})
      : await lighthouse.snapshot(page, {flags});
  if (!result) {
    throw new Error('Lighthouse audit failed.');
  }
  const json = lighthouse.generateReport(result.lhr, 'json');
  const html = lighthouse.generateReport(result.lhr, 'html');
  await new Promise((resolve, reject) =>
    process.stdout.write(JSON.stringify({json, html}), error => (error ? reject(error) : resolve())),
  );
} finally {
  await browser.disconnect();
}
