/**
 * The operators' status page: a static shell with no data of its own. It asks for a personal API
 * key (or takes one from `#key=...`, which browsers never send to a server), keeps it in the
 * tab's sessionStorage, and polls `/api/status/` with it every few seconds. Everything it shows
 * is built with textContent, so nothing a store returns is ever read as markup.
 * `body[data-state]` is `ok` or `error`, for people and for the browser test alike.
 */
export const STATUS_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Tributary status</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 60rem; padding: 0 1rem; color: #1d2433; }
  h1 { font-size: 1.4rem; margin: 0 0 .25rem; }
  h2 { font-size: 1rem; margin: 1.5rem 0 .5rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .3rem .6rem; border-bottom: 1px solid #e3e6ec; }
  th { font-weight: 600; color: #535c6e; }
  .figures { display: flex; gap: 1rem; flex-wrap: wrap; }
  .figure { border: 1px solid #e3e6ec; border-radius: 6px; padding: .6rem .9rem; min-width: 9rem; }
  .figure b { display: block; font-size: 1.4rem; }
  .ok { color: #137333; } .bad { color: #b3261e; font-weight: 600; }
  .error { background: #fdecea; color: #8c1d18; border: 1px solid #f5c2bd; border-radius: 6px; padding: .6rem .9rem; margin: .5rem 0; }
  #meta { color: #535c6e; }
  form { display: flex; gap: .5rem; margin: 1rem 0; } input { flex: 1; padding: .4rem; }
  [hidden] { display: none !important; }
</style>
</head>
<body data-state="loading">
<h1>Tributary status</h1>
<div id="meta">Loading…</div>
<form id="login" hidden>
  <input id="key" type="password" autocomplete="off" placeholder="Personal API key (phx_…) with all scopes and all projects">
  <button type="submit">Show status</button>
</form>
<div id="problems"></div>
<main id="report" hidden>
  <h2>Services</h2>
  <table><thead><tr><th>service</th><th>health</th><th>ready</th><th>address</th><th>detail</th></tr></thead><tbody id="services"></tbody></table>
  <h2>Throughput</h2>
  <div class="figures" id="figures"></div>
  <h2>Ingest consumer lag</h2>
  <div id="lag"></div>
  <h2>Ingestion warnings, last day</h2>
  <div id="warnings"></div>
</main>
<script>
(() => {
  const REFRESH_MS = 5000;
  const $ = (id) => document.getElementById(id);
  const el = (tag, text, className) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = String(text); if (className) e.className = className; return e; };
  const row = (cells) => { const tr = el('tr'); for (const c of cells) tr.append(c instanceof Node ? (() => { const td = el('td'); td.append(c); return td; })() : el('td', c)); return tr; };
  const yesNo = (v) => el('span', v ? 'yes' : 'no', v ? 'ok' : 'bad');
  const number = (n) => Number(n).toLocaleString('en');

  const fromHash = new URLSearchParams(location.hash.slice(1)).get('key');
  if (fromHash) { sessionStorage.setItem('tributary-key', fromHash); history.replaceState(null, '', location.pathname); }
  let timer = null;

  function showLogin(message) {
    $('login').hidden = false;
    $('report').hidden = true;
    document.body.dataset.state = message ? 'error' : 'login';
    $('meta').textContent = 'Status needs a personal API key with all scopes and no project restriction.';
    $('problems').replaceChildren(...(message ? [el('div', message, 'error')] : []));
  }

  $('login').addEventListener('submit', (event) => {
    event.preventDefault();
    sessionStorage.setItem('tributary-key', $('key').value.trim());
    $('key').value = '';
    refresh();
  });

  function figure(label, value) { const d = el('div', undefined, 'figure'); d.append(el('b', value), el('span', label)); return d; }

  function render(report) {
    const problems = [];
    const part = (name, p, draw) => { if (p.ok) return draw(p.value); problems.push(name + ' unavailable: ' + p.error); return 'unavailable'; };

    $('services').replaceChildren(...report.services.map((s) => {
      if (!s.healthy || !s.ready) problems.push(s.name + ' is ' + (s.healthy ? 'not ready' : 'down') + (s.detail ? ' (' + s.detail + ')' : ''));
      return row([el('b', s.name), yesNo(s.healthy), yesNo(s.ready), s.url, s.detail || '']);
    }));

    const events = report.events.ok ? report.events.value : null;
    const deletions = report.deletions.ok ? report.deletions.value : null;
    $('figures').replaceChildren(
      figure('events, last minute', part('event counts', report.events, (v) => number(v.lastMinute))),
      figure('events, last hour', events ? number(events.lastHour) : 'unavailable'),
      figure('consumer lag (messages)', part('consumer lag', report.consumerLag, (v) => number(v.total))),
      figure('ingestion warnings, last hour', part('ingestion warnings', report.ingestionWarnings, (v) => number(v.lastHour))),
      figure('dead letters', part('dead-letter count', report.deadLetters, (v) => number(v.messages))),
      figure('deletions queued', part('deletion queue', report.deletions, (v) => number(v.queued))),
      figure('next deletion batch', deletions ? (deletions.nextRun ? new Date(deletions.nextRun).toUTCString() : 'not scheduled: no worker has started') : 'unavailable'),
    );

    if (report.consumerLag.ok) {
      const t = el('table');
      t.append(row([el('b', 'topic'), el('b', 'partition'), el('b', 'committed'), el('b', 'end'), el('b', 'lag')]));
      for (const p of report.consumerLag.value.partitions) t.append(row([p.topic, p.partition, p.committed === null ? 'none yet' : number(p.committed), number(p.high), number(p.lag)]));
      $('lag').replaceChildren(el('div', 'group ' + report.consumerLag.value.group), t);
    } else $('lag').replaceChildren(el('span', 'unavailable', 'bad'));

    if (report.ingestionWarnings.ok && report.ingestionWarnings.value.byType.length > 0) {
      const t = el('table');
      for (const w of report.ingestionWarnings.value.byType) t.append(row([w.type, number(w.lastDay)]));
      $('warnings').replaceChildren(t);
    } else $('warnings').replaceChildren(el('span', report.ingestionWarnings.ok ? 'none' : 'unavailable'));

    $('problems').replaceChildren(...problems.map((p) => el('div', p, 'error')));
    $('login').hidden = true;
    $('report').hidden = false;
    $('meta').textContent = 'Updated ' + new Date(report.generatedAt).toUTCString() + '; refreshes every ' + REFRESH_MS / 1000 + ' s.';
    document.body.dataset.state = problems.length ? 'error' : 'ok';
  }

  async function refresh() {
    clearTimeout(timer);
    const key = sessionStorage.getItem('tributary-key');
    if (!key) return showLogin();
    try {
      const response = await fetch('/api/status/', { headers: { Authorization: 'Bearer ' + key }, cache: 'no-store' });
      const body = await response.json().catch(() => ({}));
      if (response.status === 401 || response.status === 403) { sessionStorage.removeItem('tributary-key'); return showLogin(body.detail || 'The key was refused.'); }
      if (!response.ok) throw new Error(body.detail || 'status answered ' + response.status);
      render(body);
    } catch (error) {
      document.body.dataset.state = 'error';
      $('problems').replaceChildren(el('div', 'Could not read the status: ' + error.message, 'error'));
    }
    timer = setTimeout(refresh, REFRESH_MS);
  }
  refresh();
})();
</script>
</body>
</html>
`;
