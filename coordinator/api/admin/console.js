// Settle's admin console: lists transactions with filters, shows one with its branches and
// attempt history, and lets an operator retry it now or force-stop it. It only calls the
// coordinator's own API; every value from the server is shown with textContent, never parsed
// as HTML (gids, URLs and errors come from clients and participants).
'use strict';

const api = '/api/settle';
let nextPosition = '';
let selectedGid = '';

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

function shortTime(text) {
  if (!text) return '';
  return text.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function statusCell(tx) {
  const td = el('td', tx.status, 'status-' + tx.status);
  if (tx.stuck) td.appendChild(el('span', 'stuck', 'stuck'));
  return td;
}

function listQuery(position) {
  const params = new URLSearchParams();
  const status = document.getElementById('filter-status').value;
  const type = document.getElementById('filter-type').value;
  if (status) params.set('status', status);
  if (type) params.set('trans_type', type);
  if (document.getElementById('filter-stuck').checked) params.set('stuck', 'true');
  params.set('limit', '50');
  if (position) params.set('position', position);
  return api + '/all?' + params.toString();
}

async function loadList(append) {
  const { status, json } = await call('GET', listQuery(append ? nextPosition : ''));
  const body = document.querySelector('#transactions tbody');
  if (!append) body.replaceChildren();
  if (status !== 200) {
    body.appendChild(el('tr')).appendChild(el('td', (json && json.message) || 'HTTP ' + status, 'error'));
    return;
  }
  for (const tx of json.transactions) {
    const row = el('tr', null, 'selectable');
    row.dataset.gid = tx.gid;
    if (tx.gid === selectedGid) row.classList.add('selected');
    row.append(el('td', tx.gid), el('td', tx.trans_type), statusCell(tx),
               el('td', shortTime(tx.create_time)), el('td', shortTime(tx.update_time)),
               el('td', shortTime(tx.next_cron_time)));
    row.addEventListener('click', () => { window.location.hash = 'gid=' + encodeURIComponent(tx.gid); });
    body.appendChild(row);
  }
  nextPosition = json.next_position || '';
  document.getElementById('more').hidden = !nextPosition;
  document.getElementById('list-empty').hidden = body.children.length > 0;
}

function showFields(tx) {
  const fields = document.getElementById('detail-fields');
  fields.replaceChildren();
  const add = (name, value) => {
    fields.append(el('dt', name), el('dd', value === null || value === undefined ? '' : value));
  };
  add('type', tx.trans_type);
  add('status', tx.status + (tx.stuck ? ' (stuck)' : ''));
  add('created', shortTime(tx.create_time));
  add('updated', shortTime(tx.update_time));
  add('finished', shortTime(tx.finish_time));
  add('next check', shortTime(tx.next_cron_time));
  add('rollback reason', tx.rollback_reason);
  document.getElementById('detail-fields').dataset.status = tx.status;
}

function showBranches(branches) {
  const body = document.querySelector('#branches tbody');
  const attempts = document.querySelector('#attempts tbody');
  body.replaceChildren();
  attempts.replaceChildren();
  for (const b of branches) {
    const row = el('tr');
    row.dataset.branch = b.branch_id + ':' + b.op;
    row.append(el('td', b.branch_id), el('td', b.op), el('td', b.status, 'status-' + b.status),
               el('td', b.attempts), el('td', b.failures), el('td', shortTime(b.next_retry_at)),
               el('td', b.url), el('td', b.last_error, 'error'));
    body.appendChild(row);
    for (const a of b.failed_attempts || []) {
      attempts.appendChild(el('tr')).append(el('td', shortTime(a.at)), el('td', b.branch_id),
                                            el('td', b.op), el('td', a.error, 'error'));
    }
  }
}

async function loadDetail() {
  const match = /^#gid=(.+)$/.exec(window.location.hash);
  selectedGid = match ? decodeURIComponent(match[1]) : '';
  for (const row of document.querySelectorAll('#transactions tbody tr')) {
    row.classList.toggle('selected', row.dataset.gid === selectedGid);
  }
  const pane = document.getElementById('detail-pane');
  if (!selectedGid) { pane.hidden = true; return; }
  const { status, json } = await call('GET', api + '/query?gid=' + encodeURIComponent(selectedGid));
  pane.hidden = false;
  document.getElementById('detail-gid').textContent = selectedGid;
  if (status !== 200 || !json.transaction) {
    document.getElementById('detail-fields').replaceChildren(el('dd', status === 200 ? 'No such transaction (deleted by retention?)' : (json && json.message) || 'HTTP ' + status, 'error'));
    showBranches([]);
    return;
  }
  showFields(json.transaction);
  showBranches(json.branches);
  const finished = json.transaction.status === 'succeed' || json.transaction.status === 'failed';
  document.getElementById('retry-now').disabled = finished;
  document.getElementById('force-stop').disabled = finished;
}

async function act(path, doneText) {
  const result = document.getElementById('action-result');
  result.textContent = '';
  result.className = '';
  const { status, json } = await call('POST', api + path, { gid: selectedGid });
  if (status === 200) {
    result.textContent = doneText;
  } else {
    result.textContent = (json && json.message) || 'HTTP ' + status;
    result.className = 'error';
  }
  await Promise.all([loadDetail(), loadList(false)]);
}

document.addEventListener('DOMContentLoaded', () => {
  // Without tokens there is no session to end.
  if (document.getElementById('access').textContent === 'authentication is off') {
    document.getElementById('logout-form').hidden = true;
  }
  document.getElementById('filters').addEventListener('submit', (event) => {
    event.preventDefault();
    loadList(false);
  });
  for (const id of ['filter-status', 'filter-type', 'filter-stuck']) {
    document.getElementById(id).addEventListener('change', () => loadList(false));
  }
  document.getElementById('more').addEventListener('click', () => loadList(true));
  document.getElementById('retry-now').addEventListener('click', () => act('/resetNextCronTime', 'Retry requested: due now.'));
  const dialog = document.getElementById('confirm-stop');
  document.getElementById('force-stop').addEventListener('click', () => {
    document.getElementById('confirm-gid').textContent = selectedGid;
    dialog.showModal();
  });
  dialog.addEventListener('close', () => {
    if (dialog.returnValue === 'stop') act('/forceStop', 'Force-stopped.');
  });
  window.addEventListener('hashchange', loadDetail);
  // An unfinished transaction shown is refreshed every two seconds, so that a retry or a
  // participant coming back is seen without reloading.
  setInterval(() => {
    const status = document.getElementById('detail-fields').dataset.status;
    if (selectedGid && status !== 'succeed' && status !== 'failed') loadDetail();
  }, 2000);
  loadList(false);
  loadDetail();
});
