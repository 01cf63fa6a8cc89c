// The admin console in a real headless browser (Debian's Chromium through playwright-core),
// against a real settled with named tokens and a real participant on 127.0.0.1:
// GET / leading to the sign-in, the list refreshing on its own with counts per status, the
// search by gid prefix, creation time and host kept across a reload, the gid search, a failed saga's branches readable at 1280 and 1920 px with long errors wrapped in
// their cell, fields that do not contradict each other, retry now, force stop asking for a
// reason that is stored and logged with the token's name, an error cleared when another
// transaction is opened, pause and resume with a reason and the paused filter, a read-only
// session shown no action button, disabled buttons that look it, and a bulk redirect of a host's sagas run as
// a job.
// Usage: node admin_console_test.mjs <settled binary>
// With SETTLE_CONSOLE_SCREENSHOTS=<dir>, also saves console-1280.png and console-1920.png
// there (docs/ keeps the ones shown in docs/operations.md); nothing is compared with them.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const settledBinary = process.argv[2];
const chromiumPath = process.env.SETTLE_CHROMIUM || '/usr/bin/chromium';
const screenshotDir = process.env.SETTLE_CONSOLE_SCREENSHOTS || '';
const tokens = {
  read: 'browser-read-token-0123456789',
  client: 'browser-client-token-0123456789',
  admin: 'browser-admin-token-0123456789',
};
const viewports = [1280, 1920];
const deadline = setTimeout(() => fail(new Error('the test took longer than 150 s')), 150_000);

// What a declined card says: long, and without a blank to break it at.
const declined = 'card-declined:' + '0123456789abcdef'.repeat(12);

// A participant whose /action fails with 500 until told otherwise and whose /refuse answers
// FAILURE with a long message; everything else succeeds.
let actionFails = true;
const participant = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  req.resume();
  req.on('end', () => {
    let status = 200;
    let body = '{"dtm_result":"SUCCESS"}';
    if (url.pathname === '/action' && actionFails) {
      status = 500;
      body = '{"message":"ledger offline"}';
    } else if (url.pathname === '/refuse') {
      status = 409;
      body = JSON.stringify({ dtm_result: 'FAILURE', message: declined });
    }
    res.writeHead(status, { 'Content-Type': 'application/json' });
    res.end(body);
  });
});

let settled;
let settledOutput = '';
let settledLog = '';
let browser;
const workDir = mkdtempSync(path.join(tmpdir(), 'settle-console-'));

function fail(error) {
  console.error('settled logged:\n' + settledLog);
  console.error('FAILED:', error && error.stack ? error.stack : error);
  cleanup().finally(() => process.exit(1));
}

async function cleanup() {
  if (browser) await browser.close().catch(() => {});
  if (settled && settled.exitCode === null) settled.kill('SIGTERM');
  participant.close();
  rmSync(workDir, { recursive: true, force: true });
}

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

// Starts settled on a free port with a token file naming two of the tokens; resolves with its
// base URL once it listens. Its log (stderr) is kept in settledLog.
function startSettled() {
  const tokenFile = path.join(workDir, 'tokens');
  writeFileSync(tokenFile, `read ${tokens.read}\nclient ${tokens.client}  # checkout service\n` +
                           `admin ${tokens.admin}  # on-call\n`, { mode: 0o600 });
  return new Promise((resolve, reject) => {
    settled = spawn(settledBinary, [
      '--port', '0', '--grpc-port', '0', '--db', path.join(workDir, 'settle.db'), '--log-level', 'warn',
      '--token-file', tokenFile,
      // Failed calls are retried only an hour later, or when the operator asks.
      '--retry-interval', '1h', '--retry-max', '1h',
    ], { stdio: ['ignore', 'pipe', 'pipe'] });
    settled.stderr.on('data', (chunk) => { settledLog += chunk; });
    settled.on('error', reject);
    settled.on('exit', (code) => reject(new Error('settled exited with ' + code)));
    settled.stdout.on('data', (chunk) => {
      settledOutput += chunk;
      const match = /listening on (http:\/\/[0-9.]+:\d+)/.exec(settledOutput);
      if (match) resolve(match[1]);
    });
  });
}

async function api(base, token, method, route, body) {
  const response = await fetch(base + route, {
    method,
    headers: { Authorization: 'Bearer ' + token, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: response.status, json: await response.json() };
}

// Resolves once `check` returns something truthy, polling; fails after `ms`.
async function eventually(what, check, ms = 10_000) {
  const until = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value) return value;
    assert.ok(Date.now() < until, what + ' did not happen within ' + ms + ' ms');
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function query(base, gid) {
  return (await api(base, tokens.read, 'GET', '/api/settle/query?gid=' + gid)).json;
}

async function signIn(page, base, token) {
  await page.goto(base + '/admin');
  await page.fill('#token', token);
  await Promise.all([page.waitForURL(base + '/admin'), page.click('#sign-in')]);
}

// Every header of the branch table readable, the long error wrapped inside its cell, nothing
// wider than the window.
async function checkLayout(page, width) {
  const m = await page.evaluate(() => {
    const headers = (selector) => [...document.querySelectorAll(selector + ' thead th')].map((th) => ({
      text: th.textContent, width: th.getBoundingClientRect().width, clipped: th.scrollWidth > th.clientWidth,
    }));
    const error = document.querySelector('#branches tbody tr[data-branch="02:action"] td.error');
    const box = error.getBoundingClientRect();
    return {
      branchHeaders: headers('#branches'), listHeaders: headers('#transactions'),
      errorText: error.textContent, errorWidth: box.width, errorLeft: box.left, errorRight: box.right,
      errorHeight: box.height, lineHeight: parseFloat(getComputedStyle(error).lineHeight),
      pageWidth: document.documentElement.scrollWidth, windowWidth: window.innerWidth,
    };
  });
  const at = ' at ' + width + ' px: ' + JSON.stringify(m);
  for (const h of [...m.branchHeaders, ...m.listHeaders]) {
    assert.ok(h.width >= 48, `the "${h.text}" column is ${h.width} px wide${at}`);
    assert.ok(!h.clipped, `the "${h.text}" header is cut${at}`);
  }
  assert.match(m.errorText, /card-declined/);
  assert.ok(m.errorWidth >= 220, `the last error column is only ${m.errorWidth} px wide${at}`);
  assert.ok(m.errorLeft >= 0 && m.errorRight <= m.windowWidth, `the last error leaves the window${at}`);
  assert.ok(m.errorHeight >= 2 * m.lineHeight, `the long error is not wrapped in its cell${at}`);
  assert.ok(m.pageWidth <= m.windowWidth, `the page scrolls sideways (${m.pageWidth} px)${at}`);
}

async function main() {
  const participantBase = 'http://127.0.0.1:' + (await listen(participant));
  const base = await startSettled();
  const step = (action) => ({ action: participantBase + action, compensate: participantBase + '/compensate' });

  // A saga whose action keeps failing, a saga whose second step answers FAILURE, and two TCCs
  // left prepared, created through the API as a service would.
  const saga = { gid: 'console-saga-1', trans_type: 'saga', steps: [step('/action')], payloads: ['{"amount":30}'] };
  assert.equal((await api(base, tokens.client, 'POST', '/api/settle/submit', saga)).status, 200);
  const refused = {
    gid: 'console-saga-refused', trans_type: 'saga', steps: [step('/ok'), step('/refuse'), step('/ok')],
    payloads: ['{}', '{}', '{}'],
  };
  assert.equal((await api(base, tokens.client, 'POST', '/api/settle/submit', refused)).status, 200);
  for (const gid of ['console-tcc-1', 'console-tcc-2']) {
    const prepared = await api(base, tokens.client, 'POST', '/api/settle/prepare', { gid, trans_type: 'tcc' });
    assert.equal(prepared.status, 200);
  }
  await eventually('the saga\'s first action failing',
                   async () => (await query(base, 'console-saga-1')).branches.some((b) => b.failures > 0));
  await eventually('the refused saga failing',
                   async () => (await query(base, 'console-saga-refused')).transaction.status === 'failed');

  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // Chromium logs every 401 answer as an error: the sign-in page is expected here, and the
  // 503 this test fakes. Anything else (a script error, a blocked resource) fails the test.
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (/Failed to load resource: .* status of (401|503) /.test(m.text())) return;
    // The 400 of the search this test makes with a bad gid prefix.
    if (/status of 400 /.test(m.text()) && /\/api\/settle\/all\?.*gid_prefix=a%2Fb/.test(m.location().url)) return;
    pageErrors.push(m.text());
  });

  // GET / leads to the console, which asks to sign in; an unknown token is refused.
  await page.goto(base + '/');
  assert.equal(page.url(), base + '/admin');
  await page.fill('#token', 'not-a-token-of-this-coordinator');
  await page.click('#sign-in');
  await page.waitForSelector('text=That token is not accepted.');

  await signIn(page, base, tokens.admin);
  assert.match(await page.textContent('#access'), /admin access/);
  await page.waitForSelector('#who:has-text("as on-call")');

  // The list with counts per status (the unfinished ones: two TCCs prepared, a saga submitted).
  const row = (gid) => page.locator(`#transactions tbody tr[data-gid="${gid}"]`);
  const count = (status) => page.locator(`#counts button[data-status="${status}"] b`);
  await row('console-saga-1').waitFor();
  await row('console-saga-refused').waitFor();
  await page.waitForFunction(() => document.querySelector('#counts button[data-status="prepared"] b').textContent === '2');
  assert.equal(await count('submitted').textContent(), '1');
  assert.equal(await count('aborting').textContent(), '0');
  // And the finished ones this settled saw since it started: the refused saga failed.
  await page.waitForFunction(() => document.querySelector('#finished-counts button[data-status="failed"] b').textContent === '1');
  assert.equal(await page.textContent('#finished-counts button[data-status="succeed"] b'), '0');
  assert.match(await page.textContent('#updated'), /^updated \d\d:\d\d:\d\d UTC/);

  // It refreshes on its own: a transaction created meanwhile appears, and is counted.
  const prepared3 = await api(base, tokens.client, 'POST', '/api/settle/prepare', { gid: 'console-tcc-3', trans_type: 'tcc' });
  assert.equal(prepared3.status, 200);
  await row('console-tcc-3').waitFor({ timeout: 15_000 });
  await page.waitForFunction(() => document.querySelector('#counts button[data-status="prepared"] b').textContent === '3');

  // The status filter narrows it; a count filters by its status.
  await page.selectOption('#filter-status', 'submitted');
  await page.waitForFunction(() => document.querySelectorAll('#transactions tbody tr').length === 1);
  await row('console-saga-1').waitFor();
  await page.click('#counts button[data-status="prepared"]');
  await page.waitForFunction(() => document.querySelectorAll('#transactions tbody tr').length === 3);
  assert.equal(await page.inputValue('#filter-status'), 'prepared');
  await page.selectOption('#filter-status', '');
  await row('console-saga-refused').waitFor();

  // The search: a gid prefix, a time range and a participant host, kept in the page's address
  // so that a reload shows the same list.
  const rowCount = (n) => page.waitForFunction(
    (n) => document.querySelectorAll('#transactions tbody tr.selectable').length === n &&
           document.querySelectorAll('#transactions tbody tr').length === n, n);
  const listedGids = () => page.locator('#transactions tbody tr').evaluateAll(
    (rows) => rows.map((r) => r.dataset.gid));
  await page.fill('#filter-gid-prefix', 'console-tcc-');
  await page.press('#filter-gid-prefix', 'Enter');
  await rowCount(3);
  assert.deepEqual(await listedGids(), ['console-tcc-3', 'console-tcc-2', 'console-tcc-1']);
  assert.match(page.url(), /#gid_prefix=console-tcc-$/);
  await page.reload();
  await rowCount(3);
  assert.equal(await page.inputValue('#filter-gid-prefix'), 'console-tcc-');
  // Created in a range (UTC, both ends included): none after the year 2998, all of them in
  // this millennium.
  await page.fill('#filter-from', '2998-01-01T00:00');
  await page.locator('#list-empty').waitFor();
  assert.equal(await page.locator('#transactions tbody tr').count(), 0);
  await page.fill('#filter-from', '2000-01-01T00:00');
  await page.fill('#filter-to', '2998-01-01T00:00');
  await rowCount(3);
  assert.match(page.url(), /from=2000-01-01T00%3A00&to=2998-01-01T00%3A00/);
  await page.reload();
  await rowCount(3);
  assert.equal(await page.inputValue('#filter-to'), '2998-01-01T00:00');
  // A host: the unfinished transactions with a call still to make to it. The retrying saga
  // waits on the participant; the refused one failed and the TCCs have no branch yet.
  await page.click('#clear-filters');
  await row('console-saga-refused').waitFor();
  assert.equal(await page.inputValue('#filter-from'), '');
  await page.fill('#filter-host', participantBase.replace('http', 'HTTP'));
  await page.press('#filter-host', 'Enter');
  await rowCount(1);
  assert.deepEqual(await listedGids(), ['console-saga-1']);
  await page.reload();
  await rowCount(1);
  assert.equal(await page.inputValue('#filter-host'), participantBase.replace('http', 'HTTP'));
  // With the other filters: no prepared transaction waits on it.
  await page.selectOption('#filter-status', 'prepared');
  await page.locator('#list-empty').waitFor();
  // A bad value is refused by name, in the list.
  await page.click('#clear-filters');
  await page.fill('#filter-gid-prefix', 'a/b');
  await page.press('#filter-gid-prefix', 'Enter');
  await page.waitForSelector('#transactions tbody td.error:has-text("gid_prefix:")');
  await page.click('#clear-filters');
  await row('console-saga-refused').waitFor();
  assert.equal(new URL(page.url()).hash, '');

  // The gid search: an unknown gid is said so; a known one opens.
  await page.fill('#search-gid', 'no-such-gid');
  await page.click('#search-go');
  await page.waitForSelector('#search-result:has-text("no transaction with gid no-such-gid")');
  await page.fill('#search-gid', 'console-saga-refused');
  await page.click('#search-go');
  await page.waitForSelector('#detail-fields[data-status="failed"]');
  assert.equal(await page.textContent('#detail-gid'), 'console-saga-refused');

  // The failed saga: the reason and the table name the branch alike, the FAILURE is counted,
  // and rows that will never be called show no next retry.
  const branch = (id) => page.locator(`#branches tbody tr[data-branch="${id}"]`);
  const cells = async (id) => branch(id).locator('td').allTextContents();
  assert.match(await page.textContent('#detail-fields'), /branch 02 action failed: FAILURE/);
  const failedAction = await cells('02:action');
  assert.equal(failedAction[2], 'failed');
  // What the branch is called with, its encoding named.
  assert.deepEqual(
    await page.locator('#payloads tbody tr[data-branch="02:action"] td').allTextContents(),
    ['02', 'action', 'utf-8', '{}']);
  assert.equal(failedAction[4], '1 (FAILURE)');
  assert.equal(failedAction[5], '—');
  for (const id of ['03:action', '03:compensate', '01:compensate', '02:compensate']) {
    assert.equal((await cells(id))[5], '—', id + ' shows a next retry');
  }
  assert.equal((await cells('03:compensate'))[3], '0');

  for (const width of viewports) {
    await page.setViewportSize({ width, height: 900 });
    await checkLayout(page, width);
    if (screenshotDir) {
      await page.screenshot({ path: path.join(screenshotDir, `console-${width}.png`), fullPage: true });
    }
  }
  await page.setViewportSize({ width: 1280, height: 900 });

  // The retrying saga's detail: its branches and the failed attempt, with a next retry.
  await row('console-saga-1').click();
  await page.waitForSelector('#detail-fields[data-status="submitted"]');
  assert.equal(await page.textContent('#detail-gid'), 'console-saga-1');
  const action = branch('01:action');
  assert.match(await action.textContent(), /prepared/);
  assert.match(await action.textContent(), /HTTP 500/);
  assert.match((await cells('01:action'))[5], /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
  assert.equal((await cells('01:compensate'))[5], '—');
  assert.ok(await page.locator('#attempts tbody tr').count() >= 1);
  assert.match(await page.textContent('#attempts tbody'), /ledger offline/);

  // Retry now: the participant is back, and the saga completes without waiting an hour.
  actionFails = false;
  assert.ok(await page.isEnabled('#retry-now'));
  await page.click('#retry-now');
  await page.waitForSelector('text=Retry requested');
  await page.waitForSelector('#detail-fields[data-status="succeed"]', { timeout: 15_000 });
  assert.ok(await page.isDisabled('#retry-now'));
  assert.match(await page.getAttribute('#retry-now', 'title'), /has finished/);

  // An error about one transaction goes away when another is opened.
  await page.goto(base + '/admin#gid=console-tcc-2');
  await page.waitForSelector('#detail-fields[data-status="prepared"]');
  await page.route('**/api/settle/resetNextCronTime', (route) => route.fulfill({
    status: 503, contentType: 'application/json', body: '{"message":"store: unavailable (test)"}',
  }));
  await page.click('#retry-now');
  await page.waitForSelector('#action-result.error:has-text("store: unavailable (test)")');
  await page.unroute('**/api/settle/resetNextCronTime');
  await row('console-tcc-1').click();
  await page.waitForSelector('#detail-gid:has-text("console-tcc-1")');
  await page.waitForSelector('#detail-fields[data-status="prepared"]');
  assert.equal(await page.textContent('#action-result'), '');

  // Force stop asks first; keeping it running sends nothing, and a reason is required.
  await page.click('#force-stop');
  await page.click('#confirm-cancel');
  assert.equal((await query(base, 'console-tcc-1')).transaction.status, 'prepared');
  await page.click('#force-stop');
  assert.match(await page.textContent('#confirm-gid'), /console-tcc-1/);
  await page.click('#confirm-ok');
  assert.ok(await page.locator('#confirm-stop').evaluate((d) => d.open), 'the dialog closed without a reason');
  await page.fill('#stop-reason', 'refunded by hand, ticket OPS-7');
  await page.click('#confirm-ok');
  await page.waitForSelector('#detail-fields[data-status="failed"]');
  const stopped = await query(base, 'console-tcc-1');
  assert.equal(stopped.transaction.status, 'failed');
  assert.equal(stopped.transaction.rollback_reason,
               'stopped by an operator (forceStop by on-call): refunded by hand, ticket OPS-7');
  assert.match(await page.textContent('#detail-fields'), /forceStop by on-call\): refunded by hand/);
  // The audit trail shows it with the transaction: who, what and why.
  await page.waitForSelector('#audit tbody tr');
  assert.deepEqual((await page.locator('#audit tbody tr').first().locator('td').allTextContents()).slice(1),
                   ['on-call', 'force_stop', 'refunded by hand, ticket OPS-7']);
  await eventually('the force stop logged with the token\'s name',
                   () => /gid=console-tcc-1 force-stopped by actor=on-call/.test(settledLog));
  assert.ok(!settledLog.includes(tokens.admin), 'the log holds the admin token');

  // Pause asks what it does and why; the transaction then shows who paused it, the list marks
  // it, and "paused only" lists it alone. Resume asks the same way and clears it.
  await page.goto(base + '/admin#gid=console-tcc-2');
  await page.waitForSelector('#detail-fields[data-status="prepared"][data-paused="false"]');
  assert.ok(await page.isHidden('#resume'), 'Resume shows for a transaction that is not paused');
  await page.click('#pause');
  assert.match(await page.textContent('#pause-what'), /Pause console-tcc-2\? No branch is called/);
  await page.click('#pause-ok');
  assert.ok(await page.locator('#confirm-pause').evaluate((d) => d.open), 'paused without a reason');
  await page.fill('#pause-reason', 'ledger bug, ticket OPS-9');
  await page.click('#pause-ok');
  await page.waitForSelector('#detail-fields[data-paused="true"]');
  assert.match(await page.textContent('#detail-fields'), /paused by on-call at .*: ledger bug, ticket OPS-9/);
  assert.equal((await query(base, 'console-tcc-2')).transaction.paused.reason, 'ledger bug, ticket OPS-9');
  assert.ok(await page.isHidden('#pause'));
  await row('console-tcc-2').locator('.paused').waitFor({ timeout: 15_000 });
  await page.check('#filter-paused');
  await rowCount(1);
  assert.deepEqual(await listedGids(), ['console-tcc-2']);
  assert.match(page.url(), /paused=true/);
  await page.click('#resume');
  assert.match(await page.textContent('#pause-what'), /Resume console-tcc-2\?/);
  await page.fill('#pause-reason', 'fixed in 2.3.1');
  await page.click('#pause-ok');
  await page.waitForSelector('#detail-fields[data-paused="false"]');
  assert.equal((await query(base, 'console-tcc-2')).transaction.paused, undefined);
  await page.locator('#list-empty').waitFor();
  await page.click('#clear-filters');
  await row('console-tcc-2').waitFor();
  assert.deepEqual((await page.locator('#audit tbody tr').first().locator('td').allTextContents()).slice(1),
                   ['on-call', 'resume', 'fixed in 2.3.1']);

  // A read-only session sees everything but is shown no action button, and told why.
  await page.click('#logout');
  await page.waitForSelector('#token');
  await signIn(page, base, tokens.read);
  assert.match(await page.textContent('#access'), /read access/);
  await page.goto(base + '/admin#gid=console-tcc-2');
  await page.waitForSelector('#detail-fields[data-status="prepared"]');
  await page.waitForSelector('#who:has-text("as read-token-1")');
  // What clients sent for their participants is not for a read-only session.
  assert.match(await page.textContent('#payloads-note'), /shown to admin sessions; this session has read access/);
  assert.equal(await page.locator('#payloads tbody tr').count(), 0);
  for (const id of ['#retry-now', '#pause', '#resume', '#branch-action', '#force-stop', '#resend', '#bulk']) {
    assert.ok(await page.isHidden(id), id + ' is shown to a read-only session');
  }
  assert.equal(await page.textContent('#actions-note'),
               "Operators' actions need admin access; this session has read access.");

  // A participant host that is down (nothing listens on its port): its circuit opens after
  // five failed calls, and the console shows it with the sagas waiting on it, which open.
  assert.ok(await page.locator('#hosts').isHidden(), 'the hosts panel shows with every host up');
  const gone = http.createServer();
  const downPort = await listen(gone);
  await new Promise((resolve) => gone.close(resolve));
  const downHost = 'http://127.0.0.1:' + downPort;
  for (let i = 0; i < 6; i++) {
    const down = {
      gid: 'console-down-' + i, trans_type: 'saga', payloads: ['{}'],
      steps: [{ action: downHost + '/action', compensate: downHost + '/compensate' }],
    };
    assert.equal((await api(base, tokens.client, 'POST', '/api/settle/submit', down)).status, 200);
  }
  const hostRow = page.locator(`#host-table tbody tr[data-host="${downHost}"]`);
  await hostRow.waitFor({ timeout: 15_000 });
  const hostCells = await hostRow.locator('td').allTextContents();
  assert.match(hostCells[1], /^(open|probing)$/);
  assert.ok(Number(hostCells[2]) >= 1, 'no saga waits on the down host');
  const waitingGid = await hostRow.locator('a').first().textContent();
  assert.match(waitingGid, /^console-down-\d$/);
  await hostRow.locator('a').first().click();
  await page.waitForSelector(`#detail-gid:has-text("${waitingGid}")`);
  await page.waitForSelector('#detail-fields[data-status="submitted"]');
  // It says what it waits for (and is stuck: its host is down, though it made no call), and
  // the list marks it too.
  await page.waitForFunction((host) => document.querySelector('#detail-fields').textContent
    .includes('waiting on ' + host + ': '), downHost, { timeout: 15_000 });
  await page.locator('#transactions tbody tr .waiting-host').first().waitFor({ timeout: 15_000 });

  // Retry now for the host needs admin access: a read-only session has no such button.
  assert.equal(await hostRow.locator('button.host-retry').count(), 0, 'a read-only session may retry a host');
  await page.click('#logout');
  await page.waitForSelector('#token');
  await signIn(page, base, tokens.admin);
  await hostRow.waitFor({ timeout: 15_000 });
  await page.waitForFunction((host) => {
    const button = document.querySelector(`#host-table tbody tr[data-host="${host}"] button.host-retry`);
    return button && !button.disabled;
  }, downHost, { timeout: 15_000 });
  await hostRow.locator('button.host-retry').click();
  await page.waitForSelector('#host-result.ok', { timeout: 15_000 });
  assert.match(await page.locator('#host-result').textContent(),
               /^Retry requested: console-down-\d calls http:\/\/127\.0\.0\.1:\d+ now\.$/);

  // The participant moved: the waiting saga's call is redirected, the dialog saying what will
  // change, and it finishes at the new address.
  await page.goto(base + '/admin#gid=' + waitingGid);
  await page.waitForSelector(`#detail-gid:has-text("${waitingGid}")`);
  await page.waitForSelector('#detail-fields[data-status="submitted"]');
  await page.waitForFunction(() => !document.querySelector('#branch-action').disabled);
  await page.click('#branch-action');
  assert.equal(await page.textContent('#branch-gid'), waitingGid);
  assert.equal(await page.locator('#branch-row option').first().textContent(), '01 action — ' + downHost + '/action');
  assert.match(await page.textContent('#branch-effect'), /is marked succeed without being called again/);
  await page.selectOption('#branch-what', 'redirect');
  await page.fill('#branch-url', participantBase + '/ok');
  assert.equal(await page.textContent('#branch-effect'),
               'branch 01 action will call ' + participantBase + '/ok instead of ' + downHost + '/action, at once.');
  await page.click('#branch-ok');
  assert.ok(await page.locator('#confirm-branch').evaluate((d) => d.open), 'redirected without a reason');
  await page.fill('#branch-reason', 'moved to the new cluster');
  await page.click('#branch-ok');
  await page.waitForSelector('#detail-fields[data-status="succeed"]', { timeout: 15_000 });
  const redirected = await api(base, tokens.admin, 'GET', '/api/settle/query?gid=' + waitingGid);
  assert.equal(redirected.json.branches.find((b) => b.op === 'action').url, participantBase + '/ok');
  await page.waitForSelector('#audit tbody tr');
  assert.deepEqual((await page.locator('#audit tbody tr').first().locator('td').allTextContents()).slice(1),
                   ['on-call', 'redirect', 'moved to the new cluster']);

  // The other sagas waiting on the down host move all at once: the host filter, "Act on all
  // these…" counting what a redirect would touch before it starts, and a job whose progress
  // the Bulk jobs table shows.
  await page.fill('#filter-host', downHost);
  await page.press('#filter-host', 'Enter');
  await page.waitForSelector('#bulk:not([hidden])');
  await page.click('#bulk');
  assert.equal(await page.textContent('#bulk-filter'), 'Filters: host = ' + downHost + '.');
  await page.selectOption('#bulk-action', 'redirect');
  assert.equal(await page.inputValue('#bulk-from'), downHost);
  await page.fill('#bulk-to', participantBase);
  await page.click('#bulk-count');
  await page.waitForFunction(() => /^5 transactions match \(the latest: console-down-/.test(
    document.querySelector('#bulk-plan').textContent), null, { timeout: 15_000 });
  await page.waitForFunction(() => !document.querySelector('#bulk-ok').disabled);
  await page.click('#bulk-ok');
  assert.ok(await page.locator('#confirm-bulk').evaluate((d) => d.open), 'started without a reason');
  await page.fill('#bulk-reason', 'the whole cluster moved, CHG-7');
  await page.click('#bulk-ok');
  await page.waitForSelector('#job-result.ok');
  assert.match(await page.textContent('#job-result'), /^Started job-[0-9a-f]+ on 5 transactions\.$/);
  const jobRow = page.locator('#job-table tbody tr[data-state="done"]').first();
  await jobRow.waitFor({ timeout: 15_000 });
  assert.equal(await jobRow.locator('.job-progress').textContent(), '5 of 5 (5 acted on, 0 skipped)');
  for (let i = 0; i < 6; i++) {
    await eventually('console-down-' + i + ' finishing at the new host',
                     async () => (await query(base, 'console-down-' + i)).transaction.status === 'succeed', 15_000);
  }
  const bulkAudit = await api(base, tokens.admin, 'GET', '/api/admin/audit?action=redirect&limit=10');
  assert.equal(bulkAudit.json.entries.filter((e) => e.parameters.job).length, 5);
  await page.click('#clear-filters');

  // A message that gave up delivering can be sent again, and says what that does.
  const note = { gid: 'console-note-1', trans_type: 'msg', retry_limit: 1, steps: [{ action: participantBase + '/refuse' }],
                 payloads: ['{}'] };
  assert.equal((await api(base, tokens.client, 'POST', '/api/settle/submit', note)).status, 200);
  await eventually('the message giving up', async () => (await query(base, 'console-note-1')).transaction.status === 'failed');
  await page.goto(base + '/admin#gid=console-note-1');
  await page.waitForSelector('#detail-fields[data-status="failed"]');
  await page.waitForSelector('#resend:not([hidden])');
  assert.ok(await page.isDisabled('#pause'), 'Pause is enabled for a finished transaction');
  // A disabled button looks it, Force stop's red included.
  assert.ok(await page.isDisabled('#force-stop'));
  const look = await page.locator('#force-stop').evaluate((b) => {
    const s = getComputedStyle(b);
    return { background: s.backgroundColor, cursor: s.cursor };
  });
  assert.notEqual(look.background, 'rgb(164, 22, 26)', 'a disabled Force stop still looks active');
  assert.equal(look.cursor, 'not-allowed');
  await page.click('#resend');
  assert.match(await page.textContent('#pause-what'), /^Send console-note-1 again\? It becomes submitted/);
  await page.fill('#pause-reason', 'receiver fixed, OPS-21');
  await page.click('#pause-ok');
  await page.waitForSelector('#action-result.ok');
  await page.waitForSelector('#audit tbody tr');
  assert.deepEqual((await page.locator('#audit tbody tr').first().locator('td').allTextContents()).slice(1),
                   ['on-call', 'resend', 'receiver fixed, OPS-21']);

  assert.deepEqual(pageErrors, [], 'the console logged errors');
  clearTimeout(deadline);
  await cleanup();
  console.log('admin console: every check passed');
}

main().catch(fail);
