// The admin console in a real headless browser (Debian's Chromium through playwright-core),
// against a real settled with tokens and a real participant on 127.0.0.1:
// sign-in, the list and its filters, a transaction's branches and attempt history, retry now,
// force stop with its confirmation, and a read-only session refused a change.
// Usage: node admin_console_test.mjs <settled binary>
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';

const settledBinary = process.argv[2];
const chromiumPath = process.env.SETTLE_CHROMIUM || '/usr/bin/chromium';
const tokens = {
  read: 'browser-read-token-0123456789',
  client: 'browser-client-token-0123456789',
  admin: 'browser-admin-token-0123456789',
};
const deadline = setTimeout(() => fail(new Error('the test took longer than 120 s')), 120_000);

// A participant whose action fails with 500 until told otherwise.
let actionFails = true;
const participant = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  req.resume();
  req.on('end', () => {
    const failing = url.pathname === '/action' && actionFails;
    res.writeHead(failing ? 500 : 200, { 'Content-Type': 'application/json' });
    res.end(failing ? '{"message":"ledger offline"}' : '{"dtm_result":"SUCCESS"}');
  });
});

let settled;
let browser;
const workDir = mkdtempSync(path.join(tmpdir(), 'settle-console-'));

function fail(error) {
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

// Starts settled on a free port; resolves with its base URL once it listens.
function startSettled() {
  return new Promise((resolve, reject) => {
    settled = spawn(settledBinary, [
      '--port', '0', '--db', path.join(workDir, 'settle.db'), '--log-level', 'warn',
      '--read-token', tokens.read, '--client-token', tokens.client, '--admin-token', tokens.admin,
      // Failed calls are retried only an hour later, or when the operator asks.
      '--retry-interval', '1h', '--retry-max', '1h',
    ], { stdio: ['ignore', 'pipe', 'inherit'] });
    settled.on('error', reject);
    settled.on('exit', (code) => reject(new Error('settled exited with ' + code)));
    let out = '';
    settled.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/[0-9.]+:\d+)/.exec(out);
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

async function signIn(page, base, token) {
  await page.goto(base + '/admin');
  await page.fill('#token', token);
  await Promise.all([page.waitForURL(base + '/admin'), page.click('#sign-in')]);
}

async function main() {
  const participantBase = 'http://127.0.0.1:' + (await listen(participant));
  const base = await startSettled();

  // A saga whose action keeps failing, and two TCCs left prepared, created through the API
  // as a service would.
  const saga = {
    gid: 'console-saga-1', trans_type: 'saga',
    steps: [{ action: participantBase + '/action', compensate: participantBase + '/compensate' }],
    payloads: ['{"amount":30}'],
  };
  assert.equal((await api(base, tokens.client, 'POST', '/api/settle/submit', saga)).status, 200);
  for (const gid of ['console-tcc-1', 'console-tcc-2']) {
    const prepared = await api(base, tokens.client, 'POST', '/api/settle/prepare', { gid, trans_type: 'tcc' });
    assert.equal(prepared.status, 200);
  }
  for (let i = 0; ; ++i) {  // the first action call fails
    const q = await api(base, tokens.read, 'GET', '/api/settle/query?gid=console-saga-1');
    if (q.json.branches.some((b) => b.failures > 0)) break;
    assert.ok(i < 200, 'the saga\'s first action never failed');
    await new Promise((r) => setTimeout(r, 25));
  }

  browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
  const page = await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  // Chromium logs every 401 and 403 answer as an error: the sign-in page and a refused change
  // are expected here. Anything else (a script error, a blocked resource) fails the test.
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    if (/Failed to load resource: .* status of 40[13] /.test(m.text())) return;
    pageErrors.push(m.text());
  });

  // Without a session: the sign-in form; an unknown token is refused.
  await page.goto(base + '/admin');
  await page.fill('#token', 'not-a-token-of-this-coordinator');
  await page.click('#sign-in');
  await page.waitForSelector('text=That token is not accepted.');

  await signIn(page, base, tokens.admin);
  assert.match(await page.textContent('#access'), /admin access/);

  // The list shows what the test created; the status filter narrows it.
  const row = (gid) => page.locator(`#transactions tbody tr[data-gid="${gid}"]`);
  await row('console-saga-1').waitFor();
  await row('console-tcc-1').waitFor();
  await page.selectOption('#filter-status', 'submitted');
  await page.waitForFunction(() => document.querySelectorAll('#transactions tbody tr').length === 1);
  await row('console-saga-1').waitFor();
  await page.selectOption('#filter-status', '');
  await row('console-tcc-1').waitFor();

  // The saga's detail: its branches and the failed attempt.
  await row('console-saga-1').click();
  await page.waitForSelector('#detail-fields[data-status="submitted"]');
  assert.equal(await page.textContent('#detail-gid'), 'console-saga-1');
  const action = page.locator('#branches tbody tr[data-branch="01:action"]');
  await action.waitFor();
  assert.match(await action.textContent(), /prepared/);
  assert.match(await action.textContent(), /HTTP 500/);
  await page.locator('#branches tbody tr[data-branch="01:compensate"]').waitFor();
  assert.ok(await page.locator('#attempts tbody tr').count() >= 1);
  assert.match(await page.textContent('#attempts tbody'), /ledger offline/);

  // Retry now: the participant is back, and the saga completes without waiting an hour.
  actionFails = false;
  await page.click('#retry-now');
  await page.waitForSelector('text=Retry requested');
  await page.waitForSelector('#detail-fields[data-status="succeed"]', { timeout: 15_000 });
  assert.ok(await page.isDisabled('#retry-now'));

  // Force stop asks first; keeping it running sends nothing.
  await page.goto(base + '/admin#gid=console-tcc-1');
  await page.waitForSelector('#detail-fields[data-status="prepared"]');
  await page.click('#force-stop');
  await page.click('#confirm-cancel');
  const kept = await api(base, tokens.read, 'GET', '/api/settle/query?gid=console-tcc-1');
  assert.equal(kept.json.transaction.status, 'prepared');
  await page.click('#force-stop');
  assert.match(await page.textContent('#confirm-gid'), /console-tcc-1/);
  await page.click('#confirm-ok');
  await page.waitForSelector('#detail-fields[data-status="failed"]');
  const stopped = await api(base, tokens.read, 'GET', '/api/settle/query?gid=console-tcc-1');
  assert.equal(stopped.json.transaction.status, 'failed');
  assert.match(stopped.json.transaction.rollback_reason, /forceStop/);

  // A read-only session sees everything but may not act.
  await page.click('#logout');
  await page.waitForSelector('#token');
  await signIn(page, base, tokens.read);
  assert.match(await page.textContent('#access'), /read access/);
  await page.goto(base + '/admin#gid=console-tcc-2');
  await page.waitForSelector('#detail-fields[data-status="prepared"]');
  await page.click('#retry-now');
  await page.waitForSelector('#action-result.error');
  assert.match(await page.textContent('#action-result'), /needs admin/);

  assert.deepEqual(pageErrors, [], 'the console logged errors');
  clearTimeout(deadline);
  await cleanup();
  console.log('admin console: every check passed');
}

main().catch(fail);
