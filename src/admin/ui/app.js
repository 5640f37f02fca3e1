// The topology page: renders /api/topology, live from /api/topology/stream (Server-Sent Events), polling
// /api/topology every second when the stream is refused or lost. No dependencies, no build step.

const POLL_MS = 1000;
const STREAM_RETRY_MS = 15000;
/** Seconds without an update before the header says the view is stale. */
const STALE_SECONDS = 5;

const $ = (id) => document.getElementById(id);
const state = {
  source: undefined,
  pollTimer: undefined,
  lastUpdate: 0,
  rendered: new Map(),
  listenersHtml: '',
};

function esc(value) {
  return String(value).replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c],
  );
}

function pct(share) {
  if (share === null || share === undefined) return '–';
  return `${(share * 100).toFixed(share > 0 && share < 0.1 ? 1 : 0)}%`;
}

function bar(share, kind) {
  const value = share === null || share === undefined ? 0 : Math.max(0, Math.min(1, share));
  return `<progress class="bar ${kind}" max="1" value="${value.toFixed(4)}"></progress> <span class="pct">${pct(share)}</span>`;
}

function label(name, missing) {
  return name === null || name === '' ? `<span class="empty">${missing}</span>` : esc(name);
}

function renderGateway(doc) {
  const g = doc.gateway;
  const parts = [`cluster <b>${esc(g.cluster)}</b>`];
  if (g.zone) parts.push(`zone <b>${esc(g.zone)}</b>`);
  if (g.node) parts.push(`node <b>${esc(g.node)}</b>`);
  if (g.region) parts.push(`region ${esc(g.region)}`);
  if (g.clusterset) parts.push(`clusterset ${esc(g.clusterset)}`);
  $('gateway').innerHTML = `<span class="here">★</span> gateway in ${parts.join(' · ')}`;
  $('notes').innerHTML = doc.notes.map((n) => `<div>${esc(n)}</div>`).join('');
}

function renderEndpoint(e) {
  const cls = e.health === 'unknown' ? 'unknown' : e.healthy ? 'healthy' : 'unhealthy';
  const why = [e.health, e.signal ? `by ${e.signal}` : '', e.since ? `since ${e.since}` : ''].filter(Boolean);
  const title = `${e.key} · tier ${e.tier} · weight ${e.weight}${e.ready ? '' : ' · terminating'} · ${why.join(' ')} · ${e.outstanding} in flight`;
  const signal = !e.healthy && e.signal ? ` (${esc(e.signal)})` : '';
  return `<span class="ep ${cls}" data-endpoint="${esc(e.key)}" data-health="${esc(e.health)}" data-healthy="${e.healthy}" title="${esc(title)}">${esc(e.pod ?? e.key)} · ${esc(e.health)}${signal}</span>`;
}

function counts(box) {
  const bad = box.endpointCount - box.healthyCount;
  return `<span class="count${bad > 0 ? ' bad' : ''}">${box.healthyCount}/${box.endpointCount} healthy</span>`;
}

function renderNode(node) {
  const more =
    node.aggregated && node.endpointCount > node.endpoints.length
      ? `<span class="count">${node.endpoints.length ? 'unhealthy shown; ' : ''}${node.endpointCount - node.endpoints.length} more not listed</span>`
      : '';
  return `<div class="box node${node.local ? ' local' : ''}${node.name === null ? ' missing' : ''}" data-node="${esc(node.name ?? '')}">
    <div class="label">node ${label(node.name, 'no node')}${node.local ? ' ★' : ''} ${counts(node)}</div>
    <div class="eps">${node.endpoints.map(renderEndpoint).join('')}${more}</div></div>`;
}

function renderZone(zone) {
  return `<div class="box zone${zone.local ? ' local' : ''}${zone.name === null ? ' missing' : ''}" data-zone="${esc(zone.name ?? '')}">
    <div class="label">zone ${label(zone.name, 'no zone')}${zone.local ? ' ★' : ''} ${counts(zone)}</div>
    <div class="nodes">${zone.nodes.map(renderNode).join('')}</div></div>`;
}

/** Fleet mode: member name -> its connection (state, reason, last sync), from the document's `members`. */
let memberConnections = new Map();

function connection(name) {
  const m = memberConnections.get(name);
  if (!m) return '';
  const title = [m.server, m.reason, m.lastSyncTime ? `last sync ${m.lastSyncTime}` : '']
    .filter(Boolean)
    .join(' · ');
  return ` <span class="conn ${esc(m.state)}" data-connection="${esc(m.state)}" title="${esc(title)}">${esc(m.state)}${m.reason ? `: ${esc(m.reason)}` : ''}</span>`;
}

function renderCluster(cluster) {
  return `<div class="box cluster${cluster.local ? ' local' : ''}${cluster.name === '' ? ' missing' : ''}" data-cluster="${esc(cluster.name)}">
    <div class="label">cluster ${label(cluster.name, 'no cluster')}${cluster.local ? ' ★ gateway' : ''}${connection(cluster.name)} ${counts(cluster)}</div>
    <div class="zones">${cluster.zones.map(renderZone).join('')}</div></div>`;
}

function renderTier(tier) {
  const shared = tier.served.sharedWith
    ? ` <span class="count">(counted with tier ${tier.served.sharedWith.join(', ')})</span>`
    : '';
  return `<tr data-tier="${tier.index}" data-tier-name="${esc(tier.name)}" data-configured-share="${tier.configuredShare}" data-served-share="${tier.served.share ?? ''}">
    <td>${tier.index} · ${esc(tier.name)}${tier.panic ? ' <span class="badge bad">panic</span>' : ''}</td>
    <td class="${tier.healthy < tier.endpoints ? 'count bad' : ''}">${tier.healthy}/${tier.endpoints}</td>
    <td>${bar(tier.configuredShare, 'configured')}</td>
    <td>${bar(tier.served.share, 'served')} <span class="count">${tier.served.answered} answered${tier.served.failed ? `, ${tier.served.failed} failed` : ''}</span>${shared}</td></tr>`;
}

function renderBackend(b, doc) {
  const usedBy = b.usedBy.length
    ? b.usedBy
        .map(
          (u) =>
            `${esc(u.route || 'east-west default')} rule ${u.ruleIndex}: weight ${u.weight} (${pct(u.share)})`,
        )
        .join(' · ')
    : 'no route';
  const health = b.healthyCount < b.endpointCount ? 'bad' : '';
  const tiers = b.tiers.length
    ? `<table class="tiers"><thead><tr><th>tier</th><th>healthy</th><th>configured share</th><th>served, last ${doc.windowSeconds}s</th></tr></thead><tbody>${b.tiers.map(renderTier).join('')}</tbody></table>`
    : '<p class="empty">no endpoints: requests get 503</p>';
  return `<h2>${esc(b.kind)} ${esc(b.namespace)}/${esc(b.name)}:${b.port}
      <span class="badge" title="trafficDistribution in force">${esc(b.trafficDistribution)}</span>
      <span class="badge">${esc(b.protocol)}</span>
      <span class="badge ${health}">${b.healthyCount}/${b.endpointCount} healthy</span></h2>
    <div class="meta">backendRefs: ${usedBy}</div>${renderSelection(b.clusterSelection)}${tiers}
    <div class="clusters${bounded(b.clusterSelection) ? ' bounded' : ''}">${b.clusters.map(renderCluster).join('')}</div>`;
}

/** A fallback-None policy draws a boundary around the clusters it allows. */
function bounded(selection) {
  return selection !== undefined && selection.fallback === 'None';
}

function renderSelection(selection) {
  if (selection === undefined) return '';
  const tiers = selection.tiers
    .map((t) => `<b>${esc(t.name)}</b> [${t.clusters.map(esc).join(', ') || 'no cluster'}]`)
    .join(' → ');
  const boundary = bounded(selection)
    ? `boundary: fallback None, ${selection.outsideEndpoints} endpoint${selection.outsideEndpoints === 1 ? '' : 's'} outside never used`
    : 'fallback Any: clusters outside the tiers are the last tier';
  return `<div class="policy">ClusterSelectionPolicy <code>${esc(selection.policy)}</code>: ${tiers}; ${boundary}</div>`;
}

function renderBackends(doc) {
  const root = $('backends');
  const seen = new Set();
  for (const b of doc.backends) {
    seen.add(b.id);
    const html = renderBackend(b, doc);
    let el = root.querySelector(`[data-backend="${CSS.escape(b.id)}"]`);
    if (!el) {
      el = document.createElement('section');
      el.className = 'backend';
      el.dataset.backend = b.id;
      root.appendChild(el);
    }
    // Unchanged backends keep their DOM: no relayout, no lost selection.
    if (state.rendered.get(b.id) !== html) {
      el.innerHTML = html;
      state.rendered.set(b.id, html);
    }
  }
  for (const el of [...root.querySelectorAll('[data-backend]')]) {
    if (!seen.has(el.dataset.backend)) {
      state.rendered.delete(el.dataset.backend);
      el.remove();
    }
  }
  if (doc.backends.length === 0 && !root.querySelector('.empty'))
    root.innerHTML = '<p class="empty">no backends</p>';
  else if (doc.backends.length > 0) root.querySelector(':scope > .empty')?.remove();
}

function conditions(match) {
  if (!match) return 'every connection';
  const parts = [`${esc(match.path.kind)} <code>${esc(match.path.value)}</code>`];
  if (match.method) parts.push(`method <code>${esc(match.method)}</code>`);
  for (const h of match.headers)
    parts.push(
      `header <code>${esc(h.name)}</code> ${h.kind === 'Exact' ? '=' : '~'} <code>${esc(h.value)}</code>`,
    );
  for (const q of match.queryParams)
    parts.push(
      `query <code>${esc(q.name)}</code> ${q.kind === 'Exact' ? '=' : '~'} <code>${esc(q.value)}</code>`,
    );
  return parts.join(' and ');
}

function backendsOf(entry) {
  if (entry.filters.includes('RequestRedirect')) return 'redirect';
  if (entry.backends.length === 0) return '<span class="empty">no usable backend (500)</span>';
  return entry.backends
    .map((r) =>
      r.backend
        ? `${esc(r.backend)} ${pct(r.share)}`
        : `<span class="empty">invalid: ${esc(r.invalid)}</span> ${pct(r.share)}`,
    )
    .join('<br>');
}

function entryRow(entry) {
  return `<tr><td>${esc(entry.route || 'east-west default')} #${entry.ruleIndex}${entry.ruleName ? ` (${esc(entry.ruleName)})` : ''}${entry.standby ? ' <span class="empty">standby: an older route serves</span>' : ''}</td>
    <td>${conditions(entry.match)}</td><td>${entry.filters.map(esc).join(', ') || '–'}</td><td>${backendsOf(entry)}</td></tr>`;
}

function renderListeners(doc) {
  const html = doc.listeners
    .map((l) => {
      const vhosts = l.virtualHosts
        .map(
          (v) =>
            `${l.protocol === 'TCP' || l.protocol === 'UDP' ? '' : `<tr><th colspan="4">host <code>${esc(v.hostname)}</code></th></tr>`}${v.routes.map(entryRow).join('')}`,
        )
        .join('');
      return `<div class="listener" data-listener="${esc(l.id)}"><h2>${esc(l.id)} <span class="badge">${esc(l.protocol)} ${l.port}</span>${l.hostname ? ` <code>${esc(l.hostname)}</code>` : ''}</h2>
        <table><thead><tr><th>route, rule</th><th>conditions</th><th>filters</th><th>backendRefs (weight share)</th></tr></thead><tbody>${vhosts}</tbody></table></div>`;
    })
    .join('');
  if (html !== state.listenersHtml) {
    $('listeners').innerHTML = html || '<p class="empty">no listeners</p>';
    state.listenersHtml = html;
  }
}

function renderMembers(doc) {
  memberConnections = new Map((doc.members ?? []).map((m) => [m.name, m]));
  const el = $('members');
  if (!el) return;
  el.innerHTML = doc.members?.length
    ? `member clusters: ${doc.members.map((m) => `<span class="member" data-member="${esc(m.name)}">${esc(m.name)}${connection(m.name)}</span>`).join(' ')}`
    : '';
}

/** Multi-network: each network, its clusters and their network gateways with health and open streams. */
function renderNetworks(doc) {
  const el = $('networks');
  if (!el) return;
  const networks = doc.networks?.networks ?? [];
  el.innerHTML = networks.length ? `networks: ${networks.map(networkHtml).join(' ')}` : '';
}

function networkHtml(network) {
  const clusters = network.clusters
    .map((c) => {
      const gateways = c.gateways
        .map(
          (g) =>
            `<span class="network-gateway" data-health="${esc(g.health)}" title="${esc(g.source)}">${esc(g.address)} ${esc(g.health)}, ${g.streams} streams</span>`,
        )
        .join(' ');
      return `${esc(c.name)}${gateways ? ` via ${gateways}` : ''}`;
    })
    .join(', ');
  const mine = network.local ? ' (this gateway)' : '';
  return `<span class="network" data-network="${esc(network.name)}">${esc(network.name)}${mine}: ${clusters}</span>`;
}

function render(doc) {
  state.lastUpdate = Date.now();
  renderMembers(doc);
  renderNetworks(doc);
  renderGateway(doc);
  renderBackends(doc);
  renderListeners(doc);
  document.body.dataset.generatedAt = doc.generatedAt;
}

function setStatus(text) {
  $('status').textContent = text;
}

function startPolling() {
  if (state.pollTimer) return;
  const poll = async () => {
    try {
      const response = await fetch('/api/topology', { cache: 'no-store' });
      if (response.ok) render(await response.json());
      setStatus(`polling every ${POLL_MS / 1000}s`);
    } catch {
      setStatus('admin server unreachable; retrying');
    }
  };
  void poll();
  state.pollTimer = setInterval(poll, POLL_MS);
  setTimeout(() => {
    clearInterval(state.pollTimer);
    state.pollTimer = undefined;
    startStream();
  }, STREAM_RETRY_MS);
}

function startStream() {
  if (typeof EventSource === 'undefined') return startPolling();
  const source = new EventSource('/api/topology/stream');
  state.source = source;
  source.onmessage = (event) => {
    render(JSON.parse(event.data));
    setStatus('live');
  };
  source.onerror = () => {
    // Refused (too many streams) or lost: poll for a while, then try the stream again.
    source.close();
    state.source = undefined;
    startPolling();
  };
}

$('lookup').addEventListener('submit', async (event) => {
  event.preventDefault();
  const form = new FormData(event.target);
  const params = new URLSearchParams();
  for (const name of ['host', 'path', 'method']) if (form.get(name)) params.set(name, String(form.get(name)));
  const out = $('lookup-result');
  try {
    const response = await fetch(`/api/route?${params}`);
    const body = await response.json();
    if (!response.ok) {
      out.innerHTML = `<span class="empty">${esc(body.error)}</span>`;
      return;
    }
    out.innerHTML = body.matches.length
      ? body.matches
          .map((m) => {
            const before = m.conditionalBefore.length
              ? `<div class="count">first, if their conditions hold: ${m.conditionalBefore.map((e) => `${esc(e.route)} #${e.ruleIndex} (${conditions(e.match)})`).join('; ')}</div>`
              : '';
            const hit = m.entry
              ? `route <b>${esc(m.entry.route || 'east-west default')}</b> rule ${m.entry.ruleIndex}: ${conditions(m.entry.match)} → ${backendsOf(m.entry)}`
              : '<span class="empty">no route matches: 404</span>';
            return `<div>port ${m.port} · listener <b>${esc(m.listener)}</b> · host <code>${esc(m.virtualHost)}</code>: ${hit}${before}</div>`;
          })
          .join('')
      : '<span class="empty">no listener serves this host: 404</span>';
  } catch {
    out.innerHTML = '<span class="empty">admin server unreachable</span>';
  }
});

setInterval(() => {
  const age = (Date.now() - state.lastUpdate) / 1000;
  const el = $('status');
  if (state.lastUpdate && age > STALE_SECONDS) {
    el.classList.add('stale');
    el.textContent = `no update for ${Math.round(age)}s`;
  } else el.classList.remove('stale');
}, 1000);

startStream();
