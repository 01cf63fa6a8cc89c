// Settle's admin console: lists transactions with filters (status, type, stuck, and the search:
// gid prefix, creation time, participant host; kept in the URL's hash with the transaction
// shown, so that a reload or a shared link keeps them) and counts per status, refreshing on its
// own; finds one by gid; shows one with its branches and attempt history; lets an
// operator with admin access retry it now or force-stop it (with a reason). It only calls the
// coordinator's own API; every value from the server is shown with textContent, never parsed
// as HTML (gids, URLs, errors and token names come from clients, participants and operators).
'use strict';

const api = '/api/settle';
// Pages of a transaction's detail the console reads at most (each at most --max-answer-bytes).
const maxDetailPages = 16;
const listRefreshMs = 5000;
const detailRefreshMs = 2000;
const levels = ['none', 'read', 'client', 'admin'];

let nextPosition = '';
let olderPagesShown = false;
let selectedGid = '';
let shownGid = '';
let listRequest = 0;
// What this session may do, from /api/admin/whoami; nothing until it answers.
let access = '';
// Settles once the session's access is known (loadWhoAmI), or could not be learnt.
let sessionKnown = Promise.resolve();

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

// The session cookie authenticates; the header tells the coordinator this request comes from
// the console page itself (a page on another site cannot send it).
async function call(method, path, body) {
  const response = await fetch(path, {
    method,
    credentials: 'same-origin',
    headers: Object.assign({ 'X-Settle-Console': '1' },
                           body ? { 'Content-Type': 'application/json' } : {}),
    body: body ? JSON.stringify(body) : undefined,
  });
  if (response.status === 401) {
    window.location.assign('/admin');
    throw new Error('signed out');
  }
  let json = null;
  try { json = await response.json(); } catch (e) { json = null; }
  return { status: response.status, json };
}

function messageOf(status, json) {
  return (json && json.message) || 'HTTP ' + status;
}

// "2026-11-25 18:23:48Z" from RFC 3339 with milliseconds.
function shortTime(text) {
  if (!text) return '';
  return text.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

// "11-25 18:23:48" for the list's narrow columns; the full time is the cell's title.
function listTime(text) {
  if (!text) return el('td', '—', 'none');
  const td = el('td', shortTime(text).slice(5, 19));
  td.title = shortTime(text) + ' (UTC)';
  return td;
}

// A time, or a dash for none (a branch that will not be called again has no next retry).
function timeCell(text) {
  return text ? el('td', shortTime(text)) : el('td', '—', 'none');
}

// Why a participant host's gate holds a transaction, in words.
const heldReasons = {
  circuit_open: 'its circuit is open',
  probe_out: 'a probe of it is out',
  releasing: 'its turn in the release after the host came back',
  cap: 'the calls in flight to it are at their cap',
};

function heldText(held) {
  return 'waiting on ' + held.host + ': ' + (heldReasons[held.reason] || held.reason);
}

function pausedText(paused) {
  return 'paused by ' + (paused.by || 'an operator') + ' at ' + shortTime(paused.at) + ': ' + paused.reason;
}

function statusCell(tx) {
  const td = el('td', tx.status, 'status-' + tx.status);
  if (tx.stuck) td.appendChild(el('span', 'stuck', 'stuck'));
  if (tx.paused) {
    const badge = el('span', 'paused', 'paused');
    badge.title = pausedText(tx.paused);
    td.appendChild(badge);
  }
  if (tx.waiting_on_host) {
    const badge = el('span', 'waiting on host', 'waiting-host');
    badge.title = heldText(tx.waiting_on_host);
    td.appendChild(badge);
  }
  return td;
}

// When the transaction is next looked at: for one a host's open circuit holds, the host's next
// probe (its stored next_cron_time may be past), else its stored time.
function nextCheck(tx) {
  const held = tx.waiting_on_host;
  return held && held.next_try_at ? held.next_try_at : tx.next_cron_time;
}

// The list's filters: the hash's key and the field that holds it.
const filterFields = [
  ['status', 'filter-status'], ['trans_type', 'filter-type'], ['gid_prefix', 'filter-gid-prefix'],
  ['from', 'filter-from'], ['to', 'filter-to'], ['host', 'filter-host'],
];

function hashParams() {
  return new URLSearchParams(window.location.hash.slice(1));
}

// The filters as the form holds them, in the hash's words.
function currentFilters() {
  const params = new URLSearchParams();
  for (const [key, id] of filterFields) {
    const value = document.getElementById(id).value.trim();
    if (value) params.set(key, value);
  }
  if (document.getElementById('filter-stuck').checked) params.set('stuck', 'true');
  if (document.getElementById('filter-paused').checked) params.set('paused', 'true');
  return params;
}

// Keeps the filters in the hash, with the transaction shown, without opening anything.
function saveFilters() {
  const params = currentFilters();
  if (selectedGid) params.set('gid', selectedGid);
  const hash = params.toString();
  history.replaceState(null, '', window.location.pathname + window.location.search +
                                 (hash ? '#' + hash : ''));
}

// The form from the hash: what a reload or a link brings back.
function restoreFilters() {
  const params = hashParams();
  for (const [key, id] of filterFields) document.getElementById(id).value = params.get(key) || '';
  document.getElementById('filter-stuck').checked = params.get('stuck') === 'true';
  document.getElementById('filter-paused').checked = params.get('paused') === 'true';
}

// Opens a transaction, the filters kept.
function openGid(gid) {
  const params = currentFilters();
  params.set('gid', gid);
  window.location.hash = params.toString();
}

function hashOf(gid) {
  const params = currentFilters();
  params.set('gid', gid);
  return '#' + params.toString();
}

// A datetime-local value ("2026-11-22T10:00" or with seconds), read as UTC, as RFC 3339; the end
// of a range takes in its whole second.
function utcTime(value, end) {
  if (!value) return '';
  const seconds = value.length === 16 ? value + ':00' : value.slice(0, 19);
  return seconds + (end ? '.999Z' : 'Z');
}

function listQuery(position) {
  const params = new URLSearchParams();
  const filters = currentFilters();
  for (const key of ['status', 'trans_type', 'stuck', 'paused', 'gid_prefix', 'host']) {
    if (filters.get(key)) params.set(key, filters.get(key));
  }
  if (filters.get('from')) params.set('create_time_start', utcTime(filters.get('from'), false));
  if (filters.get('to')) params.set('create_time_end', utcTime(filters.get('to'), true));
  params.set('limit', '50');
  if (position) params.set('position', position);
  return api + '/all?' + params.toString();
}

function searching() {
  const filters = currentFilters();
  return ['gid_prefix', 'from', 'to', 'host'].some((key) => filters.get(key));
}

function showUpdated() {
  const now = new Date().toISOString();
  document.getElementById('updated').textContent =
      'updated ' + now.slice(11, 19) + ' UTC' + (olderPagesShown ? ' (list paused: older pages shown)' : '');
}

async function loadList(append) {
  const request = ++listRequest;
  const { status, json } = await call('GET', listQuery(append ? nextPosition : ''));
  // A filter changed while this was on its way: a newer answer follows.
  if (request !== listRequest) return;
  const body = document.querySelector('#transactions tbody');
  if (!append) body.replaceChildren();
  olderPagesShown = append;
  if (status !== 200) {
    body.appendChild(el('tr')).appendChild(el('td', messageOf(status, json), 'error'));
    return;
  }
  for (const tx of json.transactions) {
    const row = el('tr', null, 'selectable');
    row.dataset.gid = tx.gid;
    if (tx.gid === selectedGid) row.classList.add('selected');
    row.append(el('td', tx.gid, 'long'), el('td', tx.trans_type), statusCell(tx),
               listTime(tx.create_time), listTime(tx.update_time), listTime(nextCheck(tx)));
    row.addEventListener('click', () => openGid(tx.gid));
    body.appendChild(row);
  }
  nextPosition = json.next_position || '';
  const more = document.getElementById('more');
  more.hidden = !nextPosition;
  // A search reads a bounded number of transactions a page: it may find none in one and
  // still go on.
  more.textContent = searching() ? 'Search older transactions' : 'Older transactions';
  document.getElementById('list-partial').hidden = !(nextPosition && searching());
  document.getElementById('list-empty').hidden = body.children.length > 0;
  showUpdated();
}

async function loadCounts() {
  const { status, json } = await call('GET', '/api/admin/counts');
  if (status !== 200) return;
  const values = Object.assign({ stuck: json.stuck }, json.unfinished, json.finished_since_start);
  for (const button of document.querySelectorAll('#counts button, #finished-counts button')) {
    const count = values[button.dataset.status] || 0;
    button.querySelector('b').textContent = String(count);
    button.classList.toggle('nonzero', count > 0);
  }
}

// A duration in milliseconds as people read it: "800 ms", "8 s", "2 min 5 s".
function approx(ms) {
  if (ms < 1000) return ms + ' ms';
  const s = Math.round(ms / 1000);
  return s < 120 ? s + ' s' : Math.floor(s / 60) + ' min' + (s % 60 ? ' ' + (s % 60) + ' s' : '');
}

// The participant hosts something waits on: an open circuit, a release under way, calls
// held at the cap. Hidden while every host answers and nothing waits.
async function loadHosts() {
  const { status, json } = await call('GET', '/api/admin/hosts');
  if (status !== 200) return;
  // Every host a branch was called on, offered to the host filter.
  const known = document.getElementById('known-hosts');
  known.replaceChildren(...json.hosts.filter((h) => h.host.includes('://'))
                                     .map((h) => { const o = el('option'); o.value = h.host; return o; }));
  const shown = json.hosts.filter((h) => h.circuit !== 'closed' || h.waiting > 0 || h.releasing);
  const body = document.querySelector('#host-table tbody');
  body.replaceChildren();
  for (const h of shown) {
    const row = el('tr');
    row.dataset.host = h.host;
    const circuit = h.releasing ? 'closed, releasing' : h.circuit;
    const gids = el('td', null, 'long');
    for (const gid of h.oldest_waiting) {
      const link = el('a', gid);
      link.href = hashOf(gid);
      gids.append(link, ' ');
    }
    if (h.waiting > h.oldest_waiting.length) gids.append(el('span', '…', 'muted'));
    // The host's name lists its transactions: those with a call still to make to it.
    const hostCell = el('td', h.host + ' ', 'long');
    if (h.host.includes('://')) {
      const list = el('button', 'list', 'host-filter');
      list.type = 'button';
      list.title = 'List the transactions with a call still to make to this host';
      list.addEventListener('click', () => {
        document.getElementById('filter-host').value = h.host;
        applyFilters();
      });
      hostCell.appendChild(list);
    }
    row.append(hostCell, el('td', circuit, 'circuit-' + h.circuit), el('td', h.waiting),
               el('td', h.in_flight), el('td', h.circuit === 'closed' ? '—' : approx(h.open_for_ms)),
               el('td', h.circuit === 'open' ? 'in ' + approx(h.next_probe_in_ms) : '—'), gids,
               hostRetryCell(h));
    body.appendChild(row);
  }
  document.getElementById('hosts').hidden = shown.length === 0;
}

// Retry now for a host: its oldest waiting transaction calls it at once, through its circuit.
function hostRetryCell(h) {
  const td = el('td');
  const allowed = levels.indexOf(access) >= levels.indexOf('admin');
  if (access && !allowed) return td;  // no action for a session without admin access
  const button = el('button', 'Retry now', 'host-retry');
  button.type = 'button';
  button.disabled = !allowed || h.waiting === 0;
  if (h.waiting === 0) {
    button.title = 'No transaction waits for this host.';
  } else {
    button.title = 'Calls the host now with its oldest waiting transaction, without waiting for the probe.';
  }
  button.addEventListener('click', () => retryHost(h.host));
  td.appendChild(button);
  return td;
}

async function retryHost(host) {
  const result = document.getElementById('host-result');
  const { status, json } = await call('POST', '/api/admin/hosts/retryNow', { host });
  if (status === 200) {
    result.textContent = 'Retry requested: ' + json.gid + ' calls ' + json.host + ' now.';
    result.className = 'ok';
  } else {
    result.textContent = messageOf(status, json);
    result.className = 'error';
  }
  await refresh();
}

// The list, the counts and the hosts; the list is left alone while older pages are shown, so
// that a refresh does not take away what the operator is reading.
// The filters as a bulk action's filter (POST /api/admin/bulk): /all's names and values.
function bulkFilter() {
  const filters = currentFilters();
  const filter = {};
  for (const key of ['status', 'trans_type', 'gid_prefix', 'host']) {
    if (filters.get(key)) filter[key] = filters.get(key);
  }
  if (filters.get('stuck')) filter.stuck = true;
  if (filters.get('paused')) filter.paused = true;
  if (filters.get('from')) filter.create_time_start = utcTime(filters.get('from'), false);
  if (filters.get('to')) filter.create_time_end = utcTime(filters.get('to'), true);
  return filter;
}

function describeFilter(filter) {
  const parts = Object.entries(filter).map(([key, value]) => key + ' = ' + value);
  return parts.length ? 'Filters: ' + parts.join(', ') + '.' : 'No filter is set.';
}

// The bulk jobs, newest first, with their progress; a running one can be cancelled.
async function loadJobs() {
  const { status, json } = await call('GET', '/api/admin/jobs');
  if (status !== 200) return;
  const body = document.querySelector('#job-table tbody');
  body.replaceChildren();
  const allowed = levels.indexOf(access) >= levels.indexOf('admin');
  for (const job of json.jobs) {
    const row = el('tr');
    row.dataset.job = job.id;
    row.dataset.state = job.state;
    const done = job.acted + job.skipped;
    const progress = done + ' of ' + job.matched + ' (' + job.acted + ' acted on, ' + job.skipped + ' skipped)';
    const what = job.action + (job.action === 'redirect' && job.parameters.from
      ? ' ' + job.parameters.from + ' → ' + job.parameters.to : '');
    const cell = el('td');
    if (job.state === 'running' && allowed) {
      const cancel = el('button', 'Cancel…', 'job-cancel');
      cancel.type = 'button';
      cancel.addEventListener('click', () => cancelJob(job.id));
      cell.appendChild(cancel);
    }
    row.append(el('td', job.id, 'long'), el('td', what, 'long'), el('td', job.state, 'job-' + job.state),
               el('td', progress, 'job-progress'), el('td', job.actor), el('td', job.reason, 'long'),
               el('td', job.last_skip, 'long'), cell);
    body.appendChild(row);
  }
  document.getElementById('jobs').hidden = json.jobs.length === 0;
}

async function cancelJob(id) {
  const reason = window.prompt('Cancel ' + id + '? It takes no further step; what it did stays done. Reason:');
  if (!reason || !reason.trim()) return;
  const result = document.getElementById('job-result');
  const { status, json } = await call('POST', '/api/admin/jobs/cancel', { id, reason: reason.trim() });
  result.textContent = status === 200 ? 'Cancelled ' + id + '.' : messageOf(status, json);
  result.className = status === 200 ? 'ok' : 'error';
  await loadJobs();
}

async function refresh() {
  await Promise.all([olderPagesShown ? Promise.resolve() : loadList(false), loadCounts(),
                     loadHosts(), loadJobs()]);
  if (olderPagesShown) showUpdated();
}

function showFields(tx) {
  const fields = document.getElementById('detail-fields');
  fields.replaceChildren();
  const add = (name, value) => {
    const empty = value === null || value === undefined || value === '';
    fields.append(el('dt', name), el('dd', empty ? '—' : value, empty ? 'none' : undefined));
  };
  add('type', tx.trans_type);
  add('status', tx.status + (tx.stuck ? ' (stuck)' : ''));
  add('created', shortTime(tx.create_time));
  add('updated', shortTime(tx.update_time));
  add('finished', shortTime(tx.finish_time));
  if (tx.paused) add('paused', pausedText(tx.paused));
  const held = tx.waiting_on_host;
  if (held) add('waiting on host', heldText(held));
  if (held && !held.next_try_at) {
    add('next check', 'when the host lets it (' + (heldReasons[held.reason] || held.reason) + ')');
  } else {
    add('next check', shortTime(nextCheck(tx)) + (held ? ' (the host\'s next probe)' : ''));
  }
  add('rollback reason', tx.rollback_reason);
  fields.dataset.status = tx.status;
  fields.dataset.paused = tx.paused ? 'true' : 'false';
}

// A row that answered FAILURE is failed for good: its count says so in words too.
function failuresCell(b) {
  if (b.status !== 'failed') return el('td', b.failures);
  const td = el('td', b.failures + ' (FAILURE)');
  td.title = 'The participant answered FAILURE: this branch failed for good.';
  return td;
}

// The calls an operator may resolve or redirect: pending ones the coordinator makes.
let pendingCalls = [];
let currentType = '';  // the shown transaction's trans_type
let resendable = false;  // the shown transaction is a message that gave up delivering

function showBranches(branches) {
  pendingCalls = branches.filter((b) => b.status === 'prepared' && b.op !== 'try' && b.op !== 'msg');
  const body = document.querySelector('#branches tbody');
  const attempts = document.querySelector('#attempts tbody');
  const payloads = document.querySelector('#payloads tbody');
  body.replaceChildren();
  attempts.replaceChildren();
  payloads.replaceChildren();
  for (const b of branches) {
    const row = el('tr');
    row.dataset.branch = b.branch_id + ':' + b.op;
    row.append(el('td', b.branch_id), el('td', b.op), el('td', b.status, 'status-' + b.status),
               el('td', b.attempts), failuresCell(b), timeCell(b.next_retry_at),
               el('td', b.url, 'long'), el('td', b.last_error, 'error'));
    body.appendChild(row);
    // Identical failures in a row are one line: when, how many times, what.
    const runs = [];
    for (const a of b.failed_attempts || []) {
      const last = runs[runs.length - 1];
      if (last && last.error === a.error) { last.to = a.at; last.count++; } else runs.push({ from: a.at, to: a.at, count: 1, error: a.error });
    }
    for (const r of runs) {
      const when = r.count === 1 ? shortTime(r.from) : shortTime(r.from) + ' … ' + shortTime(r.to);
      const what = r.count === 1 ? r.error : r.error + ' (×' + r.count + ')';
      attempts.appendChild(el('tr')).append(el('td', when), el('td', b.branch_id),
                                            el('td', b.op), el('td', what, 'error'));
    }
    if (b.data) {
      const row = payloads.appendChild(el('tr'));
      row.dataset.branch = b.branch_id + ':' + b.op;
      row.append(el('td', b.branch_id), el('td', b.op), el('td', b.data_encoding),
                 el('td', b.data, 'payload'));
    }
  }
}

// Enables what this session may do with the transaction shown; a disabled button says why. A
// session without admin access is shown no action, and why.
function updateActions(txStatus, paused) {
  const finished = txStatus === 'succeed' || txStatus === 'failed' || !txStatus;
  const allowed = levels.indexOf(access) >= levels.indexOf('admin');
  const readOnly = !!access && !allowed;
  document.getElementById('detail-actions').hidden = readOnly;
  const note = document.getElementById('actions-note');
  note.hidden = !readOnly;
  note.textContent = readOnly ? 'Operators\' actions need admin access; this session has ' + access + ' access.' : '';
  // A message that gave up delivering can be sent again, finished as it is.
  const resend = document.getElementById('resend');
  resend.hidden = !resendable || !txStatus;
  resend.disabled = !allowed;
  // Pause or Resume, whichever applies: the other is hidden.
  document.getElementById('pause').hidden = !!paused;
  document.getElementById('resume').hidden = !paused;
  for (const id of ['retry-now', 'pause', 'resume', 'branch-action', 'force-stop']) {
    const button = document.getElementById(id);
    button.disabled = !allowed || finished || (id === 'branch-action' && pendingCalls.length === 0);
    button.title = allowed && finished && txStatus ? 'The transaction has finished (' + txStatus + ').' : '';
  }
}

function clearActionResult() {
  const result = document.getElementById('action-result');
  result.textContent = '';
  result.className = '';
}

// The audit trail's entries of the transaction shown (operators' sessions get them).
function showAudit(entries) {
  const body = document.querySelector('#audit tbody');
  body.replaceChildren();
  for (const e of entries) {
    body.appendChild(el('tr')).append(el('td', shortTime(e.at)), el('td', e.actor),
                                      el('td', e.action), el('td', e.reason || '(none)'));
  }
}

// Branch bodies are shown to admin and client sessions; a read-only one asks without them
// (settled refuses it payloads=true) and says so where they would be.
function bodiesParam() {
  const hidden = access === 'read';
  document.getElementById('payloads-note').textContent = hidden
    ? 'Bodies, header values and custom_data are shown to admin sessions; this session has read access.'
    : 'What each branch is called with: text as it is, other bytes (a protobuf message\'s) in base64.';
  return hidden ? '' : 'payloads=true&';
}

async function loadDetail() {
  // Whether bodies may be asked for depends on who the session is (bodiesParam): a detail
  // opened before that is known (a link followed at once) waits for it.
  await sessionKnown;
  selectedGid = hashParams().get('gid') || '';
  for (const row of document.querySelectorAll('#transactions tbody tr')) {
    row.classList.toggle('selected', row.dataset.gid === selectedGid);
  }
  // What was said about one transaction is not about the next.
  if (selectedGid !== shownGid) clearActionResult();
  shownGid = selectedGid;
  const pane = document.getElementById('detail-pane');
  if (!selectedGid) { pane.hidden = true; return; }
  const gid = selectedGid;
  const { status, json } = await call('GET', api + '/query?' + bodiesParam() + 'gid=' + encodeURIComponent(gid));
  if (gid !== selectedGid) return;  // another transaction was opened meanwhile
  pane.hidden = false;
  document.getElementById('detail-gid').textContent = gid;
  if (status !== 200 || !json.transaction) {
    const fields = document.getElementById('detail-fields');
    fields.replaceChildren(el('dd', status === 200 ? 'No such transaction (deleted by retention?)' : messageOf(status, json), 'error'));
    delete fields.dataset.status;
    resendable = false;
    showBranches([]);
    showAudit([]);
    updateActions('');
    return;
  }
  // A large transaction's answer comes in pages (--max-answer-bytes): the next ones, up to
  // maxDetailPages in all.
  let branches = json.branches;
  let next = json.next_position || '';
  for (let page = 1; next && page < maxDetailPages; page++) {
    const more = await call('GET', api + '/query?' + bodiesParam() + 'gid=' + encodeURIComponent(gid) +
                            '&position=' + encodeURIComponent(next));
    if (gid !== selectedGid) return;
    if (more.status !== 200 || !more.json.transaction) break;
    branches = branches.concat(more.json.branches);
    next = more.json.next_position || '';
  }
  currentType = json.transaction.trans_type;
  const t = json.transaction;
  resendable = t.trans_type === 'msg' && t.status === 'failed' && !t.force_stopped &&
    branches.some((b) => b.op === 'action' && b.status === 'prepared');
  showFields(json.transaction);
  showAudit(json.transaction.audit || []);
  showBranches(branches);
  updateActions(json.transaction.status, !!json.transaction.paused);
}

async function act(path, body, doneText, base = api) {
  clearActionResult();
  const result = document.getElementById('action-result');
  const { status, json } = await call('POST', base + path, Object.assign({ gid: selectedGid }, body));
  if (status === 200) {
    result.textContent = doneText;
    result.className = 'ok';
  } else {
    result.textContent = messageOf(status, json);
    result.className = 'error';
  }
  await Promise.all([loadDetail(), refresh()]);
}

async function search(gid) {
  const result = document.getElementById('search-result');
  result.textContent = '';
  result.className = '';
  const { status, json } = await call('GET', api + '/query?gid=' + encodeURIComponent(gid));
  if (status === 200 && json.transaction) {
    openGid(gid);
    if (gid === selectedGid) loadDetail();
    return;
  }
  result.textContent = status === 200 ? 'no transaction with gid ' + gid : messageOf(status, json);
  result.className = 'error';
}

async function loadWhoAmI() {
  const { status, json } = await call('GET', '/api/admin/whoami');
  if (status !== 200) return;
  access = json.access;
  if (json.authentication) document.getElementById('who').textContent = 'as ' + json.name;
  // Without tokens there is no session to end.
  document.getElementById('logout-form').hidden = !json.authentication;
  const fields = document.getElementById('detail-fields');
  updateActions(fields.dataset.status || '', fields.dataset.paused === 'true');
  const bulk = document.getElementById('bulk');
  bulk.hidden = levels.indexOf(access) < levels.indexOf('admin');
}

// The list anew from its first page, the filters kept in the hash.
function applyFilters() {
  saveFilters();
  loadList(false);
}

// A hash changed by hand, by a link or by going back: its filters, if they differ, then its
// transaction.
function onHashChange() {
  const before = currentFilters().toString();
  restoreFilters();
  if (currentFilters().toString() !== before) loadList(false);
  loadDetail();
}

document.addEventListener('DOMContentLoaded', () => {
  sessionKnown = loadWhoAmI().catch(() => {});
  if (document.getElementById('access').textContent === 'authentication is off') {
    document.getElementById('logout-form').hidden = true;
  }
  updateActions('');
  restoreFilters();
  document.getElementById('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    saveFilters();
    olderPagesShown = false;
    refresh();
  });
  for (const [, id] of filterFields.concat([['stuck', 'filter-stuck'], ['paused', 'filter-paused']])) {
    document.getElementById(id).addEventListener('change', applyFilters);
  }
  document.getElementById('clear-filters').addEventListener('click', () => {
    for (const [, id] of filterFields) document.getElementById(id).value = '';
    document.getElementById('filter-stuck').checked = false;
    document.getElementById('filter-paused').checked = false;
    applyFilters();
  });
  // A count filters the list by its status ("stuck": the stuck ones of any status).
  for (const button of document.querySelectorAll('#counts button, #finished-counts button')) {
    button.addEventListener('click', () => {
      const stuck = button.dataset.status === 'stuck';
      document.getElementById('filter-stuck').checked = stuck;
      document.getElementById('filter-status').value = stuck ? '' : button.dataset.status;
      applyFilters();
    });
  }
  document.getElementById('search').addEventListener('submit', (event) => {
    event.preventDefault();
    const gid = document.getElementById('search-gid').value.trim();
    if (gid) search(gid);
  });
  document.getElementById('more').addEventListener('click', () => loadList(true));
  document.getElementById('retry-now').addEventListener('click', () => act('/resetNextCronTime', {}, 'Retry requested: due now.'));
  // Pause and resume say what will change and ask for a reason first.
  const pauseDialog = document.getElementById('confirm-pause');
  const pauseReason = document.getElementById('pause-reason');
  let pausing = 'pause';
  const askPause = (mode) => {
    pausing = mode;
    document.getElementById('pause-what').textContent = {
      pause: 'Pause ' + selectedGid + '? No branch is called, no retry is made and its timeout does not fire ' +
        'until it is resumed; a call already out finishes and is recorded.',
      resume: 'Resume ' + selectedGid + '? Every pending call of it is made at once, then retried as before.',
      resend: 'Send ' + selectedGid + ' again? It becomes submitted and each delivery that gave up is made ' +
        'at once, its failures counted from zero (their history is kept); delivered steps are not sent again.',
    }[mode];
    document.getElementById('pause-ok').textContent = { pause: 'Pause', resume: 'Resume', resend: 'Send again' }[mode];
    pauseReason.value = '';
    pauseDialog.showModal();
  };
  document.getElementById('pause').addEventListener('click', () => askPause('pause'));
  document.getElementById('resume').addEventListener('click', () => askPause('resume'));
  document.getElementById('resend').addEventListener('click', () => askPause('resend'));
  pauseDialog.addEventListener('close', () => {
    if (pauseDialog.returnValue === 'go') {
      const body = { reason: pauseReason.value.trim() };
      const done = {
        pause: 'Paused: nothing is called until it is resumed.',
        resume: 'Resumed: its pending calls are due now.',
        resend: 'Sent again: its undelivered steps are due now.',
      }[pausing];
      act('/' + pausing, body, done, '/api/admin');
    }
    pauseDialog.returnValue = '';
  });
  // Resolve or redirect one pending call: the dialog says what will change.
  const branchDialog = document.getElementById('confirm-branch');
  const branchRow = document.getElementById('branch-row');
  const branchWhat = document.getElementById('branch-what');
  const branchUrl = document.getElementById('branch-url');
  const selectedCall = () => pendingCalls[Number(branchRow.value)];
  const describe = () => {
    const call = selectedCall();
    if (!call) return;
    const sagaAction = call.op === 'action' && currentType === 'saga';
    branchWhat.querySelector('option[value="failed"]').disabled = !sagaAction;
    if (!sagaAction && branchWhat.value === 'failed') branchWhat.value = 'succeed';
    const redirect = branchWhat.value === 'redirect';
    branchUrl.hidden = !redirect;
    document.getElementById('branch-url-label').hidden = !redirect;
    const name = 'branch ' + call.branch_id + ' ' + call.op;
    document.getElementById('branch-effect').textContent = redirect
      ? name + ' will call ' + (branchUrl.value || '…') + ' instead of ' + call.url + ', at once.'
      : branchWhat.value === 'succeed'
        ? name + ' is marked succeed without being called again; the transaction goes on as if its participant had answered SUCCESS.'
        : name + ' is marked failed without being called again; the saga compensates.';
  };
  document.getElementById('branch-action').addEventListener('click', () => {
    document.getElementById('branch-gid').textContent = selectedGid;
    branchRow.replaceChildren(...pendingCalls.map((b, i) => {
      const option = el('option', b.branch_id + ' ' + b.op + ' — ' + b.url);
      option.value = String(i);
      return option;
    }));
    branchWhat.value = 'succeed';
    branchUrl.value = selectedCall() ? selectedCall().url : '';
    document.getElementById('branch-reason').value = '';
    describe();
    branchDialog.showModal();
  });
  branchRow.addEventListener('change', () => {
    branchUrl.value = selectedCall() ? selectedCall().url : '';
    describe();
  });
  branchWhat.addEventListener('change', describe);
  branchUrl.addEventListener('input', describe);
  branchDialog.addEventListener('close', () => {
    const call = selectedCall();
    if (branchDialog.returnValue === 'go' && call) {
      const body = { branch_id: call.branch_id, op: call.op, reason: document.getElementById('branch-reason').value.trim() };
      if (branchWhat.value === 'redirect') {
        act('/redirect', Object.assign(body, { url: branchUrl.value.trim() }), 'Redirected: its next call goes to the new URL now.', '/api/admin');
      } else {
        act('/resolve', Object.assign(body, { outcome: branchWhat.value }), 'Resolved as ' + branchWhat.value + '.', '/api/admin');
      }
    }
    branchDialog.returnValue = '';
  });
  // A bulk action: what it applies to, counted first (a dry run), then started as a job.
  const bulkDialog = document.getElementById('confirm-bulk');
  const bulkAction = document.getElementById('bulk-action');
  const bulkPlan = document.getElementById('bulk-plan');
  const bulkOk = document.getElementById('bulk-ok');
  const bulkAsk = (dryRun) => {
    const ask = { action: bulkAction.value, filter: bulkFilter(), dry_run: dryRun,
                  reason: document.getElementById('bulk-reason').value.trim() };
    if (document.getElementById('bulk-all').checked) ask.all = true;
    if (ask.action === 'redirect') {
      ask.from = document.getElementById('bulk-from').value.trim();
      ask.to = document.getElementById('bulk-to').value.trim();
      delete ask.filter.host;  // the from host is the filter
    }
    return ask;
  };
  let bulkCounts = 0;  // the latest count asked for: an older answer is dropped
  const countBulk = async () => {
    const asked = ++bulkCounts;
    bulkOk.disabled = true;
    bulkPlan.className = '';
    const ask = bulkAsk(true);
    if (ask.action === 'redirect' && (!ask.from || !ask.to)) {
      bulkPlan.textContent = 'Name the host its calls go to now and the one to send them to.';
      return;
    }
    bulkPlan.textContent = 'Counting…';
    const { status, json } = await call('POST', '/api/admin/bulk', ask);
    if (asked !== bulkCounts) return;
    if (status !== 200) {
      bulkPlan.textContent = messageOf(status, json);
      bulkPlan.className = 'error';
      return;
    }
    const sample = json.sample.map((t) => t.gid).join(', ');
    bulkPlan.textContent = json.matched + (json.complete ? '' : '+') + ' transaction' +
      (json.matched === 1 ? '' : 's') + ' match' + (json.matched ? ' (the latest: ' + sample + ')' : '') + '.';
    bulkOk.disabled = json.matched === 0;
  };
  document.getElementById('bulk').addEventListener('click', () => {
    const filter = bulkFilter();
    document.getElementById('bulk-filter').textContent = describeFilter(filter);
    document.getElementById('bulk-all-label').hidden = Object.keys(filter).length > 0;
    document.getElementById('bulk-all').checked = false;
    document.getElementById('bulk-reason').value = '';
    document.getElementById('bulk-from').value = filter.host || '';
    document.getElementById('bulk-to').value = '';
    document.getElementById('bulk-hosts').hidden = bulkAction.value !== 'redirect';
    bulkDialog.showModal();
    countBulk();
  });
  for (const id of ['bulk-action', 'bulk-all', 'bulk-from', 'bulk-to']) {
    document.getElementById(id).addEventListener('change', () => {
      document.getElementById('bulk-hosts').hidden = bulkAction.value !== 'redirect';
      countBulk();
    });
  }
  document.getElementById('bulk-count').addEventListener('click', countBulk);
  bulkDialog.addEventListener('close', async () => {
    if (bulkDialog.returnValue === 'go') {
      const result = document.getElementById('job-result');
      const { status, json } = await call('POST', '/api/admin/bulk', bulkAsk(false));
      result.textContent = status === 202
        ? 'Started ' + json.job.id + ' on ' + json.job.matched + ' transactions.' : messageOf(status, json);
      result.className = status === 202 ? 'ok' : 'error';
      document.getElementById('jobs').hidden = false;
      await refresh();
    }
    bulkDialog.returnValue = '';
  });
  const dialog = document.getElementById('confirm-stop');
  const reason = document.getElementById('stop-reason');
  document.getElementById('force-stop').addEventListener('click', () => {
    document.getElementById('confirm-gid').textContent = selectedGid;
    reason.value = '';
    dialog.showModal();
  });
  dialog.addEventListener('close', () => {
    if (dialog.returnValue === 'stop') act('/forceStop', { reason: reason.value.trim() }, 'Force-stopped.');
    dialog.returnValue = '';
  });
  window.addEventListener('hashchange', onHashChange);
  // An unfinished transaction shown is refreshed every two seconds, so that a retry or a
  // participant coming back is seen without reloading; the list and counts every five.
  setInterval(() => {
    const status = document.getElementById('detail-fields').dataset.status;
    if (selectedGid && status !== 'succeed' && status !== 'failed') loadDetail();
  }, detailRefreshMs);
  setInterval(() => { if (!document.hidden) refresh(); }, listRefreshMs);
  refresh();
  // The detail asks for bodies only when the session may see them: who it is comes first.
  loadDetail();
});
