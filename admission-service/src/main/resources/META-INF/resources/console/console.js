// Gantry console: live refresh over Server-Sent Events, job submission and cancel through the REST API.
// The login cookie authenticates these same-origin calls; no token is ever visible to scripts.
(function () {
  'use strict';

  const liveState = document.getElementById('live-state');

  // The anti-forgery token (cookie gantry_csrf, readable by this origin only): sent with every request that
  // changes something, and put into the forms that post (log out), so a page of another site cannot act for us.
  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)gantry_csrf=([^;]*)/);
    return match ? decodeURIComponent(match[1]) : '';
  }
  document.querySelectorAll('form[method="post"] input[name="csrf"]').forEach(function (input) {
    if (!input.value) input.value = csrfToken();
  });

  function say(text) { if (liveState) liveState.textContent = text; }

  // Re-render the #live part of this page from the server, keeping focus where it was if possible.
  async function refresh() {
    const live = document.getElementById('live');
    if (!live) return;
    const response = await fetch(location.pathname + location.search, { credentials: 'same-origin', headers: { Accept: 'text/html' } });
    if (response.redirected && new URL(response.url).pathname === '/login') { location.assign('/login?expired=1'); return; }
    if (!response.ok) return;
    const next = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById('live');
    if (!next) return;
    const focused = document.activeElement && live.contains(document.activeElement) ? focusKey(document.activeElement) : null;
    live.replaceWith(next);
    if (focused) {
      const again = next.querySelector(focused);
      if (again) again.focus();
    }
    say('Live updates: on (updated ' + new Date().toLocaleTimeString() + ')');
    document.dispatchEvent(new CustomEvent('gantry:refreshed'));
  }

  function focusKey(el) {
    if (el.dataset.cancel) return '[data-cancel="' + el.dataset.cancel + '"]';
    if (el.dataset.node) return '[data-node="' + el.dataset.node + '"]';
    if (el.id) return '#' + el.id;
    return null;
  }

  function follow() {
    if (!liveState || !window.EventSource || !document.getElementById('live')) return;
    // a page brought back from the back/forward cache had its stream closed on pagehide
    window.addEventListener('pageshow', (event) => { if (event.persisted) refresh().then(follow); }, { once: true });
    const source = new EventSource(liveState.dataset.updates);
    let first = true;
    source.onopen = () => say('Live updates: on');
    source.onmessage = () => {
      // the first event is the state the page was rendered from
      if (first) { first = false; return; }
      refresh();
    };
    source.onerror = () => say('Live updates: reconnecting…');
    // Closed explicitly when the page goes: otherwise Chromium keeps the unfinished stream's
    // connection after a navigation, and after a few pages its six connections per host are all
    // held by dead streams, so the next request (a cancel, a refresh) waits forever.
    window.addEventListener('pagehide', () => source.close());
  }

  // problem+json (RFC 9457) as one line plus each wrong field
  async function problemText(response) {
    try {
      const p = await response.json();
      const fields = (p.errors || []).map(e => e.field + ': ' + e.message).join('; ');
      return (p.detail || p.title || response.statusText) + (fields && !String(p.detail).includes(fields) ? ' (' + fields + ')' : '');
    } catch (e) {
      return response.status + ' ' + response.statusText;
    }
  }

  function message(text, ok) {
    const el = document.getElementById('job-message');
    if (!el) return;
    el.textContent = text;
    el.className = 'message ' + (ok ? 'ok' : 'bad');
  }

  async function submit(body, contentType) {
    const response = await fetch('/v1/jobs', {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': contentType, Accept: 'application/json', 'X-Gantry-CSRF': csrfToken() }, body: body });
    if (response.ok) {
      const job = await response.json();
      message('Submitted ' + job.name + ' (' + job.id + ') to queue ' + job.queue + '.', true);
      refresh();
      return true;
    }
    message('Not submitted: ' + await problemText(response), false);
    return false;
  }

  function number(form, name) {
    const v = form.elements[name] && form.elements[name].value;
    return v === '' || v === undefined ? undefined : Number(v);
  }

  function wireForms() {
    const jobForm = document.getElementById('job-form');
    if (jobForm) {
      jobForm.addEventListener('submit', async (event) => {
        event.preventDefault();
        const f = jobForm;
        const replicas = number(f, 'replicas');
        const group = { name: 'worker', replicas: replicas, gpusPerReplica: number(f, 'gpusPerReplica') };
        if (number(f, 'gpuMilli') !== undefined) group.gpuMilli = number(f, 'gpuMilli');
        const job = { name: f.elements.name.value.trim(), queue: f.elements.queue.value.trim(), minAvailable: replicas, taskGroups: [group] };
        if (f.elements.team) job.team = f.elements.team.value;
        if (number(f, 'estimatedRuntimeSeconds') !== undefined) job.estimatedRuntimeSeconds = number(f, 'estimatedRuntimeSeconds');
        if (await submit(JSON.stringify(job), 'application/json')) f.reset();
      });
    }
    const yamlForm = document.getElementById('yaml-form');
    if (yamlForm) {
      yamlForm.addEventListener('submit', async (event) => {
        event.preventDefault();
        if (await submit(yamlForm.elements.yaml.value, 'application/yaml')) yamlForm.reset();
      });
    }
    // cancel buttons are re-rendered by refresh(): one listener on the document
    document.addEventListener('click', async (event) => {
      const button = event.target.closest('[data-cancel]');
      if (!button) return;
      const row = button.closest('tr');
      const name = row ? row.querySelector('.name').textContent : button.dataset.cancel;
      if (!window.confirm('Cancel job ' + name + '?')) return;
      button.disabled = true;
      const response = await fetch('/v1/jobs/' + encodeURIComponent(button.dataset.cancel), {
        method: 'DELETE', credentials: 'same-origin', headers: { Accept: 'application/json', 'X-Gantry-CSRF': csrfToken() } });
      if (response.ok) {
        message('Cancelled ' + name + '.', true);
      } else {
        button.disabled = false;
        message('Not cancelled: ' + await problemText(response), false);
      }
      refresh();
    });
  }

  wireForms();
  follow();
}());
