// The live page of tadpole-hq -http. It polls the HQ's JSON API: the runs
// every second, and for the selected run the flame graph's changed call
// paths (a version cursor), the timeline's new spans (a span cursor), the
// markers (a marker cursor) and the exceptions. No other site is contacted.
'use strict';

const POLL_MS = 1000;
const SVGNS = 'http://www.w3.org/2000/svg';
const FRAME_H = 16;
const MAX_SPANS = 100000;  // timeline bars kept in the page
const MAX_MARKER_ROWS = 300;
const MARKERS_PER_POLL = 100;

const $ = (id) => document.getElementById(id);

function el(tag, attrs, text) {
  const e = document.createElement(tag);
  if (attrs) for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function human(v) {
  if (v >= 1e6) return (v / 1e6).toFixed(2) + 'M';
  if (v >= 1e3) return (v / 1e3).toFixed(1) + 'k';
  return Math.round(v).toString();
}

async function getJSON(url) {
  const r = await fetch(url, { cache: 'no-store' });
  if (!r.ok) throw new Error(url + ': ' + r.status + ' ' + (await r.text()));
  return r.json();
}

// ---- state of the selected run ----

let selected = 0;      // run key
let run = null;        // its state, see newRun

function newRun(key) {
  return {
    key,
    // flame graph: nodes by index
    version: 0, names: new Map(), nameCount: 0,
    parent: [], method: [], calls: [], total: [], self: [], thrown: [], bubbled: [],
    kids: [], paths: 0, shown: 0, now: 0,
    zoom: 0,
    // timeline
    spanNext: 0, spans: [], pending: [], open: [], threads: new Map(), tlNow: 0, skipped: 0,
    // markers
    markNext: 0, filterKey: '',
    excAt: 0,
  };
}

// ---- runs ----

const buttons = [
  ['pause', 'pause'], ['unpause', 'unpause'], ['suspend', 'suspend'], ['unsuspend', 'unsuspend'], ['stop', 'stop'],
];

function drawSpark(canvas, rates) {
  const ctx = canvas.getContext('2d');
  const w = canvas.width, h = canvas.height;
  ctx.clearRect(0, 0, w, h);
  if (!rates || rates.length < 2) return;
  const mx = Math.max(...rates, 1);
  ctx.strokeStyle = '#2a5db0';
  ctx.beginPath();
  rates.forEach((r, i) => {
    const x = (i / (rates.length - 1)) * (w - 1);
    const y = h - 1 - (r / mx) * (h - 2);
    if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
  });
  ctx.stroke();
}

async function control(key, action) {
  const r = await fetch('/api/runs/' + key + '/control?action=' + encodeURIComponent(action),
    { method: 'POST', headers: { 'X-Tadpole-Control': '1' } });
  const body = await r.text();
  note = r.ok ? action + ' sent to run ' + key : action + ': ' + body.trim();
  noteAt = Date.now();
  $('conn').textContent = note;
}

let note = '', noteAt = 0;  // the last control answer, shown for a while

let listed = new Set();  // run keys HQ still shows

function renderRuns(list) {
  listed = new Set(list.runs.map((ri) => ri.key));
  const tb = $('runs').tBodies[0];
  $('noruns').hidden = list.runs.length > 0;
  const rows = new Map();
  for (const tr of tb.rows) rows.set(tr.dataset.key, tr);
  for (const ri of list.runs) {
    const key = String(ri.key);
    let tr = rows.get(key);
    if (!tr) {
      tr = el('tr', { 'data-key': key });
      for (let i = 0; i < 9; i++) tr.appendChild(el('td'));
      tr.cells[4].className = tr.cells[5].className = tr.cells[7].className = 'num';
      tr.cells[5].classList.add('rate');
      const sp = el('canvas', { width: '120', height: '20', class: 'spark' });
      tr.cells[6].appendChild(sp);
      for (const [action, label] of buttons) {
        const b = el('button', { type: 'button', 'data-action': action }, label);
        b.addEventListener('click', (ev) => { ev.stopPropagation(); control(ri.key, action); });
        tr.cells[8].appendChild(b);
      }
      tr.addEventListener('click', () => select(ri.key));
      tb.appendChild(tr);
    }
    rows.delete(key);
    tr.classList.toggle('ended', ri.ended);
    tr.classList.toggle('selected', ri.key === selected);
    tr.cells[0].textContent = '#' + ri.id + (ri.ended ? ' (' + ri.result + ')' : '');
    tr.cells[1].textContent = ri.agent + ' v' + ri.version;
    tr.cells[2].textContent = ri.mode;
    tr.cells[2].className = 'mode';
    tr.cells[3].textContent = ri.health;
    tr.cells[3].className = 'health-' + ri.health;
    tr.cells[4].textContent = human(ri.events);
    tr.dataset.events = ri.events;
    tr.cells[5].textContent = human(ri.rate);
    tr.cells[5].dataset.rate = ri.rate;
    tr.cells[7].textContent = ri.threads;
    drawSpark(tr.cells[6].firstChild, ri.rates);
    for (const b of tr.cells[8].querySelectorAll('button')) b.disabled = ri.ended;
    if (ri.key === selected) renderFacts(ri);
  }
  for (const tr of rows.values()) tr.remove();
  if (!selected && list.runs.length > 0) select(list.runs[list.runs.length - 1].key);
}

function renderFacts(ri) {
  $('runtitle').textContent = 'Run #' + ri.id + ' of ' + ri.agent;
  $('runfacts').textContent = 'mode ' + ri.mode + ', health ' + ri.health + ', ' + ri.events + ' events (' +
    human(ri.rate) + '/s), ' + human(ri.bytes) + 'B, ' + ri.dataConns + ' data connection(s), ' +
    ri.heartbeats + ' heartbeats, ' + ri.calls + ' calls on ' + ri.paths + ' call paths, ' + ri.threads + ' threads' +
    (ri.ended ? '; ended: ' + ri.result : '');
  $('ctllog').textContent = ri.commands.map((c) => c.type + '@' + c.at).join(', ') || '-';
  const w = $('warnings');
  w.textContent = '';
  for (const s of ri.warnings || []) w.appendChild(el('div', { class: 'warn' }, s));
  if (ri.pageDropped || ri.pageDroppedMarkers) {
    w.appendChild(el('div', { class: 'warn' }, 'The page fell behind the run: ' + ri.pageDropped + ' calls and ' +
      ri.pageDroppedMarkers + ' markers left out of the page (' + ri.pageBreaks + ' breaks); HQ\'s counts and trace file are complete.'));
  }
}

function select(key) {
  if (key === selected) return;
  selected = key;
  run = newRun(key);
  $('run').hidden = false;
  $('bubbles').textContent = '';
  $('markers').tBodies[0].textContent = '';
  $('exctable').tBodies[0].textContent = '';
  for (const tr of $('runs').tBodies[0].rows) tr.classList.toggle('selected', tr.dataset.key === String(key));
  pollRun(true);
}

// ---- flame graph ----

// pollFlame takes in the call paths changed since the page's version, at
// most FLAME_PAGES answers a poll: a run whose paths change faster than
// that is caught up over the next polls (the cursor is kept).
const FLAME_PAGES = 3;

async function pollFlame(r) {
  if (!r.cursor) r.cursor = { since: r.version, after: 0, first: null };
  const c = r.cursor;
  let changed = false;
  for (let pages = 0; pages < FLAME_PAGES; pages++) {
    const d = await getJSON('/api/runs/' + r.key + '/flame?since=' + c.since + '&after=' + c.after + '&names=' + r.nameCount);
    if (r !== run) return false;
    if (c.first === null) c.first = d.version;
    for (const [id, name] of d.names) r.names.set(id, name);
    r.nameCount += d.names.length;
    for (const n of d.nodes) {
      const i = n[0];
      if (r.parent[i] === undefined && i > 0) {
        (r.kids[n[1]] || (r.kids[n[1]] = [])).push(i);
      }
      r.parent[i] = n[1]; r.method[i] = n[2]; r.calls[i] = n[3]; r.total[i] = n[4];
      r.self[i] = n[5]; r.thrown[i] = n[6]; r.bubbled[i] = n[7];
    }
    changed = changed || d.nodes.length > 0 || d.names.length > 0;
    r.paths = d.paths; r.shown = d.shown; r.now = d.now;
    if (!d.more) {
      r.version = c.first;
      r.cursor = null;
      return changed;
    }
    c.after = d.resume;
  }
  return changed;  // more next time
}

function methodName(r, i) {
  if (i === 0) return 'all';
  const m = r.method[i];
  return r.names.get(m) || ('method#' + m);
}

let searchRe = null;

function weight(r, i, byCalls) {
  return byCalls ? (r.calls[i] || 0) : (r.total[i] || 0);
}

function renderFlame(r) {
  const box = $('flame');
  if (r.parent[0] === undefined) { box.textContent = 'no calls yet'; return; }
  let byCalls = $('sizeby').value === 'calls';
  if (!byCalls && (r.total[0] || 0) === 0) byCalls = true;  // every call took 0 ms so far
  const W = Math.max(box.clientWidth, 300);
  // Frames to draw: the zoomed node's callers (full width), then its subtree.
  const zoom = r.zoom;
  const chain = [];
  for (let p = zoom; p > 0; p = r.parent[p]) chain.unshift(p);
  chain.unshift(0);
  const frames = [];  // [index, depth, x, w]
  chain.forEach((i, d) => frames.push([i, d, 0, W]));
  const zw = weight(r, zoom, byCalls);
  let maxDepth = chain.length - 1;
  let matchedW = 0;
  const walk = (i, d, x, w) => {
    const kids = r.kids[i];
    if (!kids || w < 1) return;
    // By calls, callees may add up to more than their caller: scale them into it.
    let tw = weight(r, i, byCalls), sum = 0;
    for (const k of kids) sum += weight(r, k, byCalls);
    tw = Math.max(tw, sum);
    if (tw <= 0) return;
    let cx = x;
    for (const k of kids) {
      const kw = (weight(r, k, byCalls) / tw) * w;
      if (kw >= 0.5) {
        frames.push([k, d + 1, cx, kw]);
        maxDepth = Math.max(maxDepth, d + 1);
        walk(k, d + 1, cx, kw);
      }
      cx += kw;
    }
  };
  if (zw > 0) walk(zoom, chain.length - 1, 0, W);
  const H = (maxDepth + 1) * FRAME_H + 2;
  const svg = document.createElementNS(SVGNS, 'svg');
  svg.setAttribute('viewBox', '0 0 ' + W + ' ' + H);
  svg.setAttribute('height', H);
  const rootW = weight(r, 0, byCalls) || 1;
  const matched = new Set();
  for (const [i, d, x, w] of frames) {
    const g = document.createElementNS(SVGNS, 'g');
    const name = methodName(r, i);
    g.dataset.node = i;
    g.dataset.name = name;
    const y = H - (d + 1) * FRAME_H;  // the root at the bottom
    const rect = document.createElementNS(SVGNS, 'rect');
    rect.setAttribute('x', x.toFixed(1)); rect.setAttribute('y', y);
    rect.setAttribute('width', Math.max(w, 0.5).toFixed(1)); rect.setAttribute('height', FRAME_H - 1);
    rect.setAttribute('fill', i === 0 ? '#c8c8c8' : colour(name, r.bubbled[i] > 0));
    g.appendChild(rect);
    if (w > 30) {
      const t = document.createElementNS(SVGNS, 'text');
      t.setAttribute('x', (x + 3).toFixed(1)); t.setAttribute('y', y + FRAME_H - 4);
      const chars = Math.floor((w - 6) / 6.6);
      t.textContent = name.length > chars ? name.slice(0, Math.max(chars - 1, 0)) + '…' : name;
      g.appendChild(t);
    }
    const title = document.createElementNS(SVGNS, 'title');
    title.textContent = frameText(r, i, rootW, byCalls);
    g.appendChild(title);
    if (searchRe && i > 0) {
      const under = matched.has(r.parent[i]);  // below a match: counted with it
      if (searchRe.test(name)) {
        g.classList.add('match');
        if (!under) matchedW += weight(r, i, byCalls);
        matched.add(i);
      } else if (under) {
        matched.add(i);
      }
    }
    svg.appendChild(g);
  }
  svg.addEventListener('click', (ev) => {
    const g = ev.target.closest('g');
    if (!g) return;
    r.zoom = Number(g.dataset.node);
    $('unzoom').disabled = r.zoom === 0;
    renderFlame(r);
  });
  svg.addEventListener('mousemove', (ev) => {
    const g = ev.target.closest('g');
    if (g) $('frameinfo').textContent = frameText(r, Number(g.dataset.node), rootW, byCalls);
  });
  box.replaceChildren(svg);
  $('matched').textContent = searchRe ? 'matched: ' + (100 * matchedW / rootW).toFixed(1) + '%' : '';
  $('flameinfo').textContent = (byCalls ? 'widths by calls' : 'widths by total time') + '; ' + r.paths + ' call paths' +
    (r.shown < r.paths ? ' (' + (r.paths - r.shown) + ' not shown: page cap)' : '') + '; at ' + r.now + ' ms';
}

function frameText(r, i, rootW, byCalls) {
  const pct = (100 * weight(r, i, byCalls) / rootW).toFixed(2);
  return methodName(r, i) + ': total ' + (r.total[i] || 0) + ' ms, self ' + (r.self[i] || 0) + ' ms, ' +
    (r.calls[i] || 0) + ' calls (' + pct + '%)' +
    (r.thrown[i] ? ', ' + r.thrown[i] + ' thrown' : '') + (r.bubbled[i] ? ', ' + r.bubbled[i] + ' ended by an exception' : '');
}

function hash(s) {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h >>> 0;
}

function colour(name, bubbled) {
  const h = hash(name);
  if (bubbled) return 'rgb(230,' + (90 + h % 60) + ',' + (60 + (h >> 8) % 40) + ')';
  return 'rgb(' + (205 + h % 50) + ',' + (110 + (h >> 8) % 110) + ',' + (30 + (h >> 16) % 50) + ')';
}

function renderSelf(r) {
  const by = new Map();
  for (let i = 1; i < r.parent.length; i++) {
    if (r.parent[i] === undefined) continue;
    const m = r.method[i];
    let s = by.get(m);
    if (!s) by.set(m, s = { self: 0, total: 0, calls: 0, exc: 0, m });
    s.self += r.self[i]; s.calls += r.calls[i]; s.exc += r.bubbled[i];
    // a method's total counts only its outermost frames on each path
    let rec = false;
    for (let p = r.parent[i]; p > 0; p = r.parent[p]) if (r.method[p] === m) { rec = true; break; }
    if (!rec) s.total += r.total[i];
  }
  const top = [...by.values()].sort((a, b) => b.self - a.self || b.calls - a.calls).slice(0, 15);
  const tb = $('selftable').tBodies[0];
  tb.textContent = '';
  for (const s of top) {
    const tr = el('tr');
    tr.appendChild(el('td', null, r.names.get(s.m) || ('method#' + s.m)));
    for (const v of [s.self, s.total, s.calls, s.exc]) tr.appendChild(el('td', { class: 'num' }, String(v)));
    tb.appendChild(tr);
  }
}

// ---- timeline ----

async function pollTimeline(r) {
  const d = await getJSON('/api/runs/' + r.key + '/timeline?since=' + r.spanNext);
  if (r !== run) return;
  r.spanNext = d.next;
  r.skipped += d.skipped;
  for (const [tid, name] of d.threads) r.threads.set(tid, name);
  for (const s of d.spans) r.spans.push(s);
  if (r.spans.length > MAX_SPANS) r.spans.splice(0, r.spans.length - MAX_SPANS);
  r.open = d.open;
  r.pending = d.pending;
  r.tlNow = Math.max(r.tlNow, d.now);
}

let tlLayout = null;

function renderTimeline(r) {
  const c = $('timeline');
  const tids = [...r.threads.keys()].sort((a, b) => a - b);
  const depthOf = new Map();
  for (const s of r.spans) depthOf.set(s[0], Math.max(depthOf.get(s[0]) || 0, s[1] + 1));
  for (const o of r.open) depthOf.set(o[0], Math.max(depthOf.get(o[0]) || 0, o[1] + 1));
  for (const s of r.pending) depthOf.set(s[0], Math.max(depthOf.get(s[0]) || 0, s[1] + 1));
  const LANE = 12, LABEL = 130;
  let y = 0;
  const rows = new Map();
  for (const tid of tids) {
    const lanes = Math.max(depthOf.get(tid) || 1, 1);
    rows.set(tid, { y, lanes });
    y += lanes * LANE + 6;
  }
  const W = Math.max(c.clientWidth, 400);
  const H = Math.max(y, 20);
  if (c.width !== W) c.width = W;
  if (c.height !== H) c.height = H;
  const ctx = c.getContext('2d');
  ctx.clearRect(0, 0, W, H);
  const win = Number($('window').value);
  const end = r.tlNow + 1;
  let start = win > 0 ? end - win : 0;
  if (win === 0) {
    start = end;
    for (const s of r.spans) start = Math.min(start, s[3]);
    for (const s of r.pending) start = Math.min(start, s[3]);
    for (const o of r.open) start = Math.min(start, o[3]);
  }
  const span = Math.max(end - start, 1);
  const px = (W - LABEL) / span;
  ctx.font = '11px sans-serif';
  for (const [tid, row] of rows) {
    ctx.fillStyle = '#f6f6f6';
    ctx.fillRect(0, row.y, W, row.lanes * LANE);
    ctx.fillStyle = '#333';
    ctx.fillText((r.threads.get(tid) || 'thread-' + tid).slice(0, 20), 2, row.y + 10);
  }
  const boxes = [];
  const bar = (tid, depth, method, s, e, count, flags, open) => {
    const bubbled = (flags & 1) !== 0, mixed = (flags & 2) !== 0;
    const row = rows.get(tid);
    if (!row || e < start) return;
    const x0 = LABEL + Math.max(s - start, 0) * px;
    const x1 = LABEL + (Math.min(e, end) - start + 1) * px;
    const by = row.y + depth * LANE;
    const name = (r.names.get(method) || ('method#' + method)) + (mixed ? ' and others' : '');
    ctx.fillStyle = open ? '#8fb3e8' : colour(name, bubbled);
    ctx.fillRect(x0, by, Math.max(x1 - x0 - 0.5, 1), LANE - 1);
    if (x1 - x0 > 40) {
      ctx.fillStyle = '#000';
      ctx.save();
      ctx.beginPath(); ctx.rect(x0, by, x1 - x0, LANE); ctx.clip();
      ctx.fillText(name + (count > 1 ? ' ×' + count : ''), x0 + 2, by + 9);
      ctx.restore();
    }
    boxes.push([x0, by, x1, by + LANE, name, s, e, count, bubbled, open]);
  };
  for (const s of r.spans) bar(s[0], s[1], s[2], s[3], s[4], s[5], s[6], false);
  for (const s of r.pending) bar(s[0], s[1], s[2], s[3], s[4], s[5], s[6], false);
  for (const o of r.open) bar(o[0], o[1], o[2], o[3], r.tlNow, 1, 0, true);
  tlLayout = boxes;
  $('tlinfo').textContent = 'from ' + start + ' to ' + end + ' ms; ' + r.spans.length + ' bars' +
    (r.skipped ? ' (' + r.skipped + ' not received: cap)' : '') + '; calls of at most 1 ms in a row are merged (×n); light blue: still running';
}

$('timeline').addEventListener('mousemove', (ev) => {
  if (!tlLayout) return;
  const rect = ev.target.getBoundingClientRect();
  const x = (ev.clientX - rect.left) * (ev.target.width / rect.width);
  const y = (ev.clientY - rect.top) * (ev.target.height / rect.height);
  for (let i = tlLayout.length - 1; i >= 0; i--) {
    const b = tlLayout[i];
    if (x >= b[0] && x <= b[2] && y >= b[1] && y <= b[3]) {
      $('tltip').textContent = b[4] + ': ' + b[5] + '–' + b[6] + ' ms' + (b[7] > 1 ? ', ' + b[7] + ' calls' : '') +
        (b[8] ? ', ended by an exception' : '') + (b[9] ? ', still running' : '');
      return;
    }
  }
});

// ---- exceptions ----

async function pollExceptions(r) {
  const d = await getJSON('/api/runs/' + r.key + '/exceptions');
  if (r !== run) return;
  const tb = $('exctable').tBodies[0];
  tb.textContent = '';
  for (const e of d.exceptions) {
    const tr = el('tr');
    tr.appendChild(el('td', null, e.name));
    tr.appendChild(el('td', { class: 'num' }, String(e.thrown)));
    tr.appendChild(el('td', { class: 'num' }, String(e.bubbled)));
    tb.appendChild(tr);
  }
  const ol = $('bubbles');
  ol.textContent = '';
  for (const p of d.paths.slice(0, 50)) {
    const parts = [];
    if (p.thrower) parts.push('thrown in ' + p.thrower);
    for (const m of p.path) parts.push('ended ' + m);
    if (p.more) parts.push('…');
    parts.push(p.caught ? 'caught in ' + p.caught : 'caught outside the traced calls');
    ol.appendChild(el('li', null, p.exception + ' ×' + p.count + ': ' + parts.join(' → ')));
  }
  if (d.pathsNotKept) ol.appendChild(el('li', { class: 'hint' }, d.pathsNotKept + ' more paths not kept'));
}

// ---- markers ----

async function pollMarkers(r) {
  const q = $('filter').value, kind = $('kind').value;
  const fk = q + '\u0000' + kind;
  if (fk !== r.filterKey) {
    r.filterKey = fk;
    r.markNext = 0;
    r.markSkipped = 0;
    $('markers').tBodies[0].textContent = '';
  }
  const d = await getJSON('/api/runs/' + r.key + '/markers?limit=' + MARKERS_PER_POLL + '&since=' + r.markNext + '&kind=' + encodeURIComponent(kind) +
    '&q=' + encodeURIComponent(q));
  if (r !== run || fk !== r.filterKey) return;
  r.markNext = d.next;
  const tb = $('markers').tBodies[0];
  for (const m of d.markers) {
    const tr = el('tr', { class: m.log ? 'log' : 'marker' });
    tr.appendChild(el('td', { class: 'num' }, String(m.at)));
    tr.appendChild(el('td', { class: 'num' }, String(m.seq)));
    tr.appendChild(el('td', { class: 'kind' }, m.log ? 'log' : 'marker'));
    tr.appendChild(el('td', null, m.log ? m.key.slice(4) : m.key));
    tr.appendChild(el('td', null, m.value));
    tb.insertBefore(tr, tb.firstChild);  // newest first
  }
  while (tb.rows.length > MAX_MARKER_ROWS) tb.deleteRow(-1);
  r.markSkipped = (r.markSkipped || 0) + d.skipped;
  $('markinfo').textContent = d.total + ' markers and log records in the run; the newest shown' +
    (r.markSkipped ? ' (' + r.markSkipped + ' passed over)' : '');
}

// ---- polling ----

let busy = false;

async function pollRun(force) {
  const r = run;
  if (!r || (busy && !force) || !listed.has(r.key)) return;  // a run HQ dropped keeps what it showed
  busy = true;
  try {
    const changed = await pollFlame(r);
    if (r !== run) return;
    if (changed || force) {
      renderFlame(r);
      // The table walks every call path: on a large tree, every 5 s.
      if (force || r.parent.length < 20000 || Date.now() - (r.selfAt || 0) > 5000) {
        r.selfAt = Date.now();
        renderSelf(r);
      }
    }
    await pollTimeline(r);
    if (r !== run) return;
    renderTimeline(r);
    await pollMarkers(r);
    if (Date.now() - r.excAt > 2 * POLL_MS) {
      r.excAt = Date.now();
      await pollExceptions(r);
    }
  } finally {
    busy = false;
  }
}

async function tick() {
  try {
    const list = await getJSON('/api/runs');
    $('conn').className = 'conn ok';
    $('conn').textContent = Date.now() - noteAt < 5000 ? note : 'connected';
    renderRuns(list);
    await pollRun(false);
  } catch (e) {
    $('conn').className = 'conn bad';
    $('conn').textContent = 'HQ unreachable: ' + e.message;
  }
  setTimeout(tick, POLL_MS);
}

$('search').addEventListener('input', () => {
  const v = $('search').value;
  try { searchRe = v ? new RegExp(v, 'i') : null; } catch (e) { searchRe = null; }
  if (run) renderFlame(run);
});
$('sizeby').addEventListener('change', () => run && renderFlame(run));
$('unzoom').addEventListener('click', () => {
  if (!run) return;
  run.zoom = 0;
  $('unzoom').disabled = true;
  renderFlame(run);
});
$('window').addEventListener('change', () => run && renderTimeline(run));
$('filter').addEventListener('input', () => run && pollMarkers(run));
$('kind').addEventListener('change', () => run && pollMarkers(run));
window.addEventListener('resize', () => { if (run) { renderFlame(run); renderTimeline(run); } });

// Ctrl-F (or Cmd-F) searches the flame graph once a run is shown.
window.addEventListener('keydown', (ev) => {
  if ((ev.ctrlKey || ev.metaKey) && ev.key === 'f' && run) {
    ev.preventDefault();
    $('search').focus();
    $('search').select();
  }
});

tick();
