// Records a HAR of a person using the test site in headless Chromium, over the DevTools
// protocol (puppeteer-core), turned into HAR by chrome-har as browser tools do; response
// bodies are fetched as each finishes, as the developer tools' own export keeps them.
// Usage: node record.mjs CHROMIUM BASE_URL OUT.har
import puppeteer from 'puppeteer-core';
import { harFromMessages } from 'chrome-har';
import { writeFileSync } from 'node:fs';

const [chromium, base, out] = process.argv.slice(2);
const watched = [
  'Page.loadEventFired', 'Page.domContentEventFired', 'Page.frameStartedLoading',
  'Page.frameAttached', 'Page.frameRequestedNavigation', 'Page.navigatedWithinDocument',
  'Network.requestWillBeSent', 'Network.requestServedFromCache', 'Network.dataReceived',
  'Network.responseReceived', 'Network.resourceChangedPriority', 'Network.loadingFinished',
  'Network.loadingFailed', 'Network.requestWillBeSentExtraInfo', 'Network.responseReceivedExtraInfo',
];
// A person reading the page before going on: the recording's think time.
const pause = ms => new Promise(r => setTimeout(r, ms));

const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  pipe: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--disable-quic'],
});
try {
  const page = await browser.newPage();
  const cdp = await page.createCDPSession();
  const events = [];
  const pending = [];
  for (const method of watched) {
    cdp.on(method, params => {
      events.push({ method, params });
      if (method === 'Network.requestWillBeSent' && params.request.hasPostData && !params.request.postData) {
        pending.push(cdp.send('Network.getRequestPostData', { requestId: params.requestId })
          .then(p => { params.request.postData = p.postData; }, () => {}));
      }
      if (method === 'Network.loadingFinished') {
        const got = events.find(e => e.method === 'Network.responseReceived' && e.params.requestId === params.requestId);
        pending.push(cdp.send('Network.getResponseBody', { requestId: params.requestId })
          .then(b => {
            if (got) got.params.response.body = b.base64Encoded ? Buffer.from(b.body, 'base64').toString() : b.body;
          }, () => {}));
      }
    });
  }
  await cdp.send('Page.enable');
  await cdp.send('Network.enable');

  await page.goto(`${base}/login`, { waitUntil: 'load' });
  await pause(200);
  await page.type('input[name=user]', 'alice');
  await page.type('input[name=password]', 's3cret');
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('button[type=submit]')]);
  await page.waitForSelector('body[data-ready="1"]');
  await pause(200);
  await Promise.all([page.waitForNavigation({ waitUntil: 'load' }), page.click('#order')]);
  const text = await page.evaluate(() => document.body.textContent);
  if (!text.includes('order ')) throw new Error(`the order page did not open: ${text}`);
  await Promise.all(pending);
  const har = harFromMessages(events, { includeTextFromResponseBody: true });
  writeFileSync(out, JSON.stringify(har, null, 2));
} finally {
  await browser.close();
}
