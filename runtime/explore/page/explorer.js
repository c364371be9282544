// pool-explore's page: draws the data pool-explore --html inlined. It is a
// viewer: every count, row and offset it shows comes from that data (the
// report and the region maps solved in C++); the script only places them on
// screen and adds an offset inside a region to that region's start.
(function () {
  'use strict';
  const t0 = performance.now();
  const data = JSON.parse(document.getElementById('poolc-data').textContent);
  const SVG = 'http://www.w3.org/2000/svg';
  const W = 1000, H = 64;
  const MAX_RECTS = 3000;

  function el(tag, attrs, parent, text) {
    const ns = ['svg', 'rect', 'line', 'text', 'circle', 'polyline', 'g', 'title', 'path'].includes(tag);
    const e = ns ? document.createElementNS(SVG, tag) : document.createElement(tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }
  function commas(v) {
    if (v === null || v === undefined) return '-';
    const s = String(v);
    const neg = s.startsWith('-');
    const d = neg ? s.slice(1) : s;
    if (!/^\d+$/.test(d)) return s;
    return (neg ? '-' : '') + d.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  }
  function gib(b) { return (b / 1073741824).toFixed(2) + ' GiB'; }
  function hex(big) { return '0x' + big.toString(16).padStart(12, '0'); }
  function pct(f) { return f === null || f === undefined ? '-' : (100 * f).toFixed(1) + '%'; }

  const COLORS = {
    blocks: '#4e79a7', gap: '#eeeeee', slots: '#f28e2b', arena: '#efe3cf', slack: '#d7d7d7',
    ring: '#dcebf7', padding: '#f3f3f3', envelope: '#e3ecf6', plane: '#edc948', entry: '#a0cbe8',
    pool: '#4e79a7'
  };
  const CLASS_COLORS = { dense: '#59a14f', hca: '#b07aa1', csa: '#76b7b2' };
  const FIELD_PALETTE = ['#e15759', '#ff9da7', '#9c755f', '#f1ce63', '#86bcb6', '#d37295', '#fabfd2', '#b6992d', '#499894', '#8cd17d'];
  function fieldColor(name) {
    let h = 0;
    for (const c of name) h = (h * 31 + c.charCodeAt(0)) >>> 0;
    return FIELD_PALETTE[h % FIELD_PALETTE.length];
  }
  function colorOf(r) {
    if (r.kind === 'field') return fieldColor(r.name);
    if (r.kind === 'window' || r.kind === 'compressed') return CLASS_COLORS[r.class] || '#79706e';
    if (r.kind === 'pool') return r.pool === 'state' ? '#f28e2b' : '#4e79a7';
    return COLORS[r.kind] || '#bab0ac';
  }

  // --- header and contents ---------------------------------------------------
  const rep = data.report;
  const head = document.getElementById('head');
  el('h1', {}, head, rep.model);
  const facts = [gib(rep.inputs.budget_bytes) + ' (' + commas(rep.inputs.budget_bytes) + ' B)',
    commas(rep.inputs.max_num_seqs) + ' sequences',
    'allocation ' + commas(rep.allocation_bytes) + ' B',
    'layout ' + (rep.layout_fingerprint || '')];
  if (data.artifact) facts.push('artifact ' + data.artifact);
  el('div', { class: 'facts' }, head, facts.join(' · '));
  const toc = document.getElementById('toc');
  for (const [id, name] of [['maps', 'Map'], ['tables', 'Tables'], ['sweep', 'Sweep'], ['vary', 'Vary'], ['diff', 'Diff'], ['ladder', 'Ladder'], ['textsec', 'Text']])
    el('a', { href: '#' + id }, toc, name);

  // --- the maps ---------------------------------------------------------------
  const tip = document.getElementById('tip');
  const explorer = { maps: [] };

  // The k-th copy of a region: [begin, end) and its label.
  function copyOf(r, k) {
    const p = r.repeat;
    const b = r.begin + k * p.stride;
    return { begin: b, end: b + (k === p.count - 1 ? p.last : p.length), label: p.first + k * p.step };
  }
  function regionAt(level, u) {
    for (let i = level.regions.length - 1; i >= 0; i--) {
      const r = level.regions[i];
      if (u < r.begin || u >= r.end) continue;
      if (!r.repeat) return { r, begin: r.begin, end: r.end };
      const k = Math.floor((u - r.begin) / r.repeat.stride);
      if (k < 0 || k >= r.repeat.count) continue;
      const c = copyOf(r, k);
      if (u < c.end) return { r, begin: c.begin, end: c.end, copy: c.label };
    }
    return null;
  }

  function buildMap(m, mi) {
    const box = el('div', { class: 'map', 'data-map': String(mi), 'data-name': m.name }, document.getElementById('maps'));
    el('h3', {}, box, m.name + (m.unit === 'row' ? ' — ' + commas(m.unit_bytes) + ' B per row, ' + m.dtype : ' — bytes'));
    const ctl = el('div', { class: 'controls' }, box);
    el('label', {}, ctl, 'level');
    const sel = el('select', { class: 'level' }, ctl);
    m.levels.forEach((lv, i) => el('option', { value: String(i) }, sel, lv.name + (lv.class ? ' of ' + lv.class : '')));
    const instLabel = el('label', {}, ctl, '');
    const inst = el('input', { type: 'number', class: 'instance', min: '0', value: '0' }, ctl);
    const zin = el('button', { class: 'zoom-in', title: 'zoom in' }, ctl, '+');
    const zout = el('button', { class: 'zoom-out', title: 'zoom out' }, ctl, '−');
    const reset = el('button', { class: 'reset' }, ctl, 'whole');
    const svg = el('svg', { class: 'bar', viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none' }, box);
    const range = el('div', { class: 'range' }, box);
    const lo_ = el('span', {}, range), mid_ = el('span', {}, range), hi_ = el('span', {}, range);
    const legend = el('div', { class: 'legend' }, box);
    const st = { level: 0, inst: 0, lo: 0, hi: m.levels[0].size };
    const base = BigInt(m.base);
    const unitBytes = BigInt(m.unit_bytes);

    function originOf(lv, k) {
      return lv.instances ? lv.instances.base + k * lv.instances.stride : 0;
    }
    function render() {
      const lv = m.levels[st.level];
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      const span = st.hi - st.lo;
      const x = (u) => (u - st.lo) / span * W;
      let drawn = 0;
      const kinds = new Map();
      for (const r of lv.regions) {
        if (r.end <= st.lo || r.begin >= st.hi) continue;
        const depth = ['arena', 'ring', 'envelope', 'blocks', 'slots', 'pool', 'plane'].includes(r.kind) && lv.regions.length > 1 ? 0 : 1;
        const y = depth ? 8 : 0, h = depth ? H - 16 : H;
        kinds.set(r.kind === 'field' ? r.name : r.kind === 'window' ? r.class + ' window rows' : r.kind === 'compressed' ? r.class + ' compressed rows' : r.kind, colorOf(r));
        const put = (b, e, label, agg) => {
          const x0 = Math.max(0, x(b)), x1 = Math.min(W, x(e));
          const a = { class: 'region kind-' + r.kind + (agg ? ' agg' : ''), x: x0.toFixed(3), y: String(y),
            width: Math.max(0.3, x1 - x0).toFixed(3), height: String(h), fill: colorOf(r),
            'data-kind': r.kind, 'data-name': r.name, 'data-begin': String(b), 'data-end': String(e) };
          if (r.field) a['data-field'] = r.field;
          if (r.layer !== undefined) a['data-layer'] = String(r.layer);
          if (r.class) a['data-class'] = r.class;
          if (label !== undefined) a['data-copy'] = String(label);
          if (agg) a['data-count'] = String(r.repeat.count);
          el('rect', a, svg);
          drawn++;
        };
        if (!r.repeat) { put(r.begin, r.end); continue; }
        const p = r.repeat;
        const kmin = Math.max(0, Math.floor((st.lo - r.begin) / p.stride) - 1);
        const kmax = Math.min(p.count - 1, Math.ceil((st.hi - r.begin) / p.stride));
        const n = kmax - kmin + 1;
        if (n > MAX_RECTS / 4 || (p.stride / span) * W < 1.5) { put(r.begin, r.end, undefined, true); continue; }
        for (let k = kmin; k <= kmax; k++) { const c = copyOf(r, k); if (c.end > st.lo && c.begin < st.hi) put(c.begin, c.end, c.label); }
      }
      const unit = m.unit === 'row' ? 'rows ' : 'bytes ';
      lo_.textContent = unit + commas(Math.floor(st.lo));
      mid_.textContent = commas(Math.ceil(st.hi - st.lo)) + ' of ' + commas(lv.size) + (lv.instances ? ' · ' + lv.instances.label + ' ' + (lv.instances.first + st.inst * lv.instances.step) : '');
      hi_.textContent = commas(Math.ceil(st.hi));
      instLabel.textContent = lv.instances ? lv.instances.label : '';
      inst.hidden = !lv.instances;
      inst.max = lv.instances ? String(Math.max(0, lv.instances.count - 1)) : '0';
      while (legend.firstChild) legend.removeChild(legend.firstChild);
      for (const [k, c] of kinds) { const s = el('span', {}, legend, k); s.style.setProperty('--c', c); }
      box.dataset.level = lv.name;
      box.dataset.drawn = String(drawn);
    }
    function setView(level, k, lo, hi) {
      const lv = m.levels[level];
      st.level = level;
      st.inst = Math.max(0, Math.min(k || 0, lv.instances ? lv.instances.count - 1 : 0));
      st.lo = lo === undefined ? 0 : Math.max(0, lo);
      st.hi = hi === undefined ? lv.size : Math.min(lv.size, hi);
      if (st.hi - st.lo < 1) st.hi = Math.min(lv.size, st.lo + 1);
      sel.value = String(level);
      inst.value = String(st.inst);
      render();
    }
    function zoom(f, at) {
      const lv = m.levels[st.level];
      const c = at === undefined ? (st.lo + st.hi) / 2 : at;
      let span = Math.max(1, Math.min(lv.size, (st.hi - st.lo) * f));
      let lo = Math.max(0, Math.min(lv.size - span, c - (c - st.lo) * f));
      setView(st.level, st.inst, lo, lo + span);
    }
    function unitAt(ev) {
      const b = svg.getBoundingClientRect();
      return st.lo + (ev.clientX - b.left) / b.width * (st.hi - st.lo);
    }
    function describe(hit, u) {
      const lv = m.levels[st.level];
      const r = hit.r;
      const lines = [r.name + '  (' + r.kind + ')'];
      if (r.class) lines.push('class   ' + r.class);
      if (r.layer !== undefined) lines.push('layer   ' + r.layer);
      if (r.field) lines.push('field   ' + r.field + (r.dtype ? ' ' + r.dtype : '') + (r.layers ? ', ' + r.layers + ' layers' : ''));
      if (m.plane) lines.push('plane   ' + m.plane);
      if (hit.copy !== undefined) lines.push(r.repeat.label + '   ' + commas(hit.copy) + ' of ' + commas(r.repeat.count));
      const where = lv.instances ? ' of ' + lv.instances.label + ' ' + (lv.instances.first + st.inst * lv.instances.step) : '';
      const un = m.unit === 'row' ? 'rows' : 'bytes';
      lines.push(un + '    ' + commas(hit.begin) + '..' + commas(hit.end) + where);
      const origin = originOf(lv, st.inst);
      const uu = Math.floor(u);
      if (m.unit === 'row') lines.push('row     ' + commas(origin + uu) + ' of the plane');
      const regionByte = r.byte_begin !== undefined ? r.byte_begin : hit.begin * m.unit_bytes;
      lines.push('offset  ' + commas(regionByte) + ' B' + (lv.instances ? ' in the ' + lv.instances.label : ''));
      const addr = base + (BigInt(origin) + BigInt(uu)) * unitBytes;
      const start = base + BigInt(origin + hit.begin) * unitBytes;
      lines.push('address ' + hex(addr) + '  (region at ' + hex(start) + ')');
      return lines.join('\n');
    }
    let drag = null;
    svg.addEventListener('mousemove', (ev) => {
      if (drag) {
        const b = svg.getBoundingClientRect();
        const du = (ev.clientX - drag.x) / b.width * (drag.hi - drag.lo);
        const lv = m.levels[st.level], span = drag.hi - drag.lo;
        const lo = Math.max(0, Math.min(lv.size - span, drag.lo - du));
        setView(st.level, st.inst, lo, lo + span);
        drag.moved = true;
      }
      const u = unitAt(ev);
      const hit = regionAt(m.levels[st.level], u);
      if (!hit) { tip.hidden = true; return; }
      tip.textContent = describe(hit, u);
      tip.dataset.name = hit.r.name;
      tip.hidden = false;
      tip.style.left = Math.min(window.innerWidth - 300, ev.clientX + 14) + 'px';
      tip.style.top = (ev.clientY + 16) + 'px';
    });
    svg.addEventListener('mouseleave', () => { tip.hidden = true; drag = null; });
    svg.addEventListener('mousedown', (ev) => { drag = { x: ev.clientX, lo: st.lo, hi: st.hi, moved: false }; });
    svg.addEventListener('mouseup', (ev) => {
      const moved = drag && drag.moved;
      drag = null;
      if (moved) return;
      const hit = regionAt(m.levels[st.level], unitAt(ev));
      if (!hit || hit.copy === undefined) return;
      // Open the block, the slot or the entry under the pointer.
      const want = hit.r.kind === 'blocks' ? 'block' : hit.r.kind === 'slots' ? 'slot' : hit.r.kind === 'pool' ? 'entry' : null;
      const i = m.levels.findIndex((lv) => lv.name === want && (want !== 'entry' || lv.class === hit.r.class));
      if (i < 0) return;
      const lv = m.levels[i];
      const k = Math.round((hit.copy - lv.instances.first) / lv.instances.step);
      setView(i, k);
    });
    svg.addEventListener('wheel', (ev) => { ev.preventDefault(); zoom(ev.deltaY < 0 ? 1 / 1.6 : 1.6, unitAt(ev)); }, { passive: false });
    zin.addEventListener('click', () => zoom(1 / 2));
    zout.addEventListener('click', () => zoom(2));
    reset.addEventListener('click', () => setView(st.level, st.inst));
    sel.addEventListener('change', () => setView(Number(sel.value), 0));
    inst.addEventListener('change', () => setView(st.level, Number(inst.value), st.lo, st.hi));
    setView(0, 0);
    explorer.maps.push({ name: m.name, setView: (level, k, lo, hi) => setView(typeof level === 'string' ? m.levels.findIndex((l) => l.name === level) : level, k, lo, hi), view: () => Object.assign({}, st) });
  }
  data.maps.forEach(buildMap);

  // --- tables -------------------------------------------------------------------
  function table(parent, id, cols, rows) {
    const t = el('table', { id }, parent);
    const tr = el('tr', {}, el('thead', {}, t));
    for (const c of cols) el('th', { class: c.l ? 'l' : '' }, tr, c.h);
    const tb = el('tbody', {}, t);
    for (const r of rows) {
      const row = el('tr', {}, tb);
      for (const c of cols) {
        const v = r[c.k];
        const td = el('td', { class: c.l ? 'l' : '', 'data-key': c.k }, row, c.l ? (v === null || v === undefined ? '-' : String(v)) : commas(v));
        if (v !== null && v !== undefined && typeof v !== 'object') td.dataset.value = String(v);
      }
    }
    return t;
  }
  const tables = document.getElementById('tables');
  table(tables, 'pools', [{ h: 'class', k: 'name', l: 1 }, { h: 'pool', k: 'pool', l: 1 }, { h: 'entries', k: 'entries' },
    { h: 'entry bytes', k: 'entry_bytes' }, { h: 'reserved', k: 'reserved_bytes' }, { h: 'per request', k: 'entries_per_req' },
    { h: 'request groups', k: 'request_groups' }, { h: 'transfer', k: 'transfer_kind', l: 1 }, { h: 'region offset', k: 'region_offset' }],
  rep.entry_classes.map((c) => Object.assign({}, c, { transfer_kind: c.transfer ? c.transfer.kind : '-' })));
  const n = data.numbers;
  el('p', { id: 'history' }, tables, 'history: ' + commas(rep.paged_entries) + ' blocks × ' + commas(rep.geometry.block_size) +
    ' tokens = ' + commas(n.tokens) + ' tokens (' + commas(n.tokens_per_seq) + ' per sequence); reserved ' +
    commas(rep.total_reserved_bytes) + ' B, unreserved ' + commas(rep.unreserved_bytes) + ' B');
  for (const a of rep.arenas) {
    el('h3', {}, tables, "arena of '" + a.class + "': " + commas(a.entry_bytes) + ' B, checkpoint ' + commas(a.checkpoint_bytes) + ' B');
    table(tables, 'arena-' + a.class, [{ h: 'field', k: 'name', l: 1 }, { h: 'plane', k: 'plane', l: 1 }, { h: 'offset', k: 'offset' },
      { h: 'end', k: 'end' }, { h: 'bytes', k: 'bytes' }, { h: 'layers', k: 'layers' }, { h: 'dtype', k: 'dtype', l: 1 }, { h: 'checkpoint', k: 'in_checkpoint', l: 1 }], a.fields);
  }
  const rs = rep.row_space;
  if (rs) {
    el('h3', {}, tables, 'planes');
    table(tables, 'planes', [{ h: 'plane', k: 'name', l: 1 }, { h: 'row bytes', k: 'row_bytes' }, { h: 'dtype', k: 'dtype', l: 1 },
      { h: 'slack bytes', k: 'slack_bytes' }, { h: 'block bytes', k: 'block_bytes' }, { h: 'slot bytes', k: 'slot_bytes' },
      { h: 'plane bytes', k: 'plane_bytes' }, { h: 'offset', k: 'offset' }, { h: 'fields', k: 'field_list', l: 1 }],
    rs.planes.map((p) => Object.assign({}, p, { field_list: p.fields.join(', ') || '-' })));
    el('h3', {}, tables, 'row space');
    table(tables, 'rowspace', ['num_blocks', 'num_slots', 'slot_positions', 'plane_rows', 'envelope_rows', 'slot_rows', 'arena_rows', 'entry_rows', 'ring_slots', 'row_bytes', 'image_bytes']
      .map((k) => ({ h: k.replace(/_/g, ' '), k })), [rs]);
    table(tables, 'rowclasses', [{ h: 'class', k: 'name', l: 1 }, { h: 'ratio', k: 'ratio' }, { h: 'layers', k: 'nlayers' }, { h: 'block rows', k: 'block_rows' },
      { h: 'envelope offset', k: 'envelope_offset' }, { h: 'envelope rows', k: 'envelope_rows' }, { h: 'entry offset', k: 'entry_offset' }, { h: 'entry rows', k: 'entry_rows' }],
    rs.classes.map((c) => Object.assign({}, c, { nlayers: c.layers.length })));
  }

  // --- plots ----------------------------------------------------------------------
  function plot(parent, id, points, xKey, xFmt, series, yLabel, bars) {
    const PW = 760, PH = 280, L = 80, R = 20, T = 16, B = 40;
    const svg = el('svg', { class: 'plot', id, width: String(PW), height: String(PH), viewBox: '0 0 ' + PW + ' ' + PH }, parent);
    const ok = points.filter((p) => !p.error);
    let ymax = 0;
    for (const s of series) for (const p of ok) ymax = Math.max(ymax, s.y(p) || 0);
    if (ymax <= 0) ymax = 1;
    const xs = points.map((p, i) => bars ? i : p[xKey]);
    const xmin = Math.min(...xs), xmax = Math.max(...xs);
    const xspan = bars ? points.length : (xmax - xmin || 1);
    const X = (p, i) => bars ? L + (i + 0.5) / xspan * (PW - L - R) : L + (p[xKey] - xmin) / xspan * (PW - L - R);
    const Y = (v) => T + (1 - v / ymax) * (PH - T - B);
    el('line', { class: 'axis', x1: L, y1: PH - B, x2: PW - R, y2: PH - B }, svg);
    el('line', { class: 'axis', x1: L, y1: T, x2: L, y2: PH - B }, svg);
    for (let g = 0; g <= 4; g++) {
      const v = ymax * g / 4;
      el('line', { class: 'grid', x1: L, y1: Y(v), x2: PW - R, y2: Y(v) }, svg);
      el('text', { x: L - 6, y: Y(v) + 4, 'text-anchor': 'end' }, svg, series[0].fmt(v));
    }
    el('text', { x: 8, y: T + 4 }, svg, yLabel);
    points.forEach((p, i) => {
      if (bars || i === 0 || i === points.length - 1 || points.length <= 8)
        el('text', { x: X(p, i), y: PH - B + 16, 'text-anchor': 'middle' }, svg, xFmt(p));
    });
    series.forEach((s, si) => {
      const color = s.color || FIELD_PALETTE[si % FIELD_PALETTE.length];
      if (bars) {
        const bw = (PW - L - R) / xspan / (series.length + 1);
        points.forEach((p, i) => {
          const v = p.error ? 0 : s.y(p);
          const x0 = X(p, i) - bw * series.length / 2 + si * bw;
          const r = el('rect', { class: 'vary-bar' + (p.error ? ' error' : ''), x: x0, y: Y(v), width: bw * 0.9, height: Math.max(0, PH - B - Y(v)), fill: p.error ? '#b00020' : color,
            'data-label': p.label, 'data-value': p.error ? '' : String(v) }, svg);
          el('title', {}, r, p.label + ': ' + (p.error ? p.error : s.name + ' ' + s.fmt(v)));
        });
        return;
      }
      const pts = [];
      points.forEach((p, i) => { if (!p.error) pts.push(X(p, i).toFixed(1) + ',' + Y(s.y(p)).toFixed(1)); });
      el('polyline', { points: pts.join(' '), fill: 'none', stroke: color, 'stroke-width': 2 }, svg);
      points.forEach((p, i) => {
        const v = p.error ? 0 : s.y(p);
        const c = el('circle', { class: s.cls + (p.error ? ' error' : ''), cx: X(p, i), cy: Y(v), r: 4, fill: p.error ? '#b00020' : color,
          'data-x': String(p[xKey]), 'data-value': p.error ? '' : String(v) }, svg);
        el('title', {}, c, xFmt(p) + ': ' + (p.error ? p.error : s.name + ' ' + s.fmt(v)));
      });
    });
    const lg = el('div', { class: 'legend' }, parent);
    series.forEach((s, si) => { const sp = el('span', {}, lg, s.name); sp.style.setProperty('--c', s.color || FIELD_PALETTE[si % FIELD_PALETTE.length]); });
    return svg;
  }
  function pointTable(parent, id, points) {
    table(parent, id, [{ h: '', k: 'label', l: 1 }, { h: 'PAGE B/entry', k: 'page_entry_bytes' }, { h: 'STATE B/req', k: 'state_bytes_per_req' },
      { h: 'blocks', k: 'blocks' }, { h: 'tokens', k: 'tokens' }, { h: 'tokens/seq', k: 'tokens_per_seq' }, { h: 'slack', k: 'slack', l: 1 }, { h: 'error', k: 'error', l: 1 }],
    points.map((p) => Object.assign({}, p, { slack: p.error ? '' : pct(p.slack_fraction) })));
  }
  function planeSeries(points) {
    const names = [];
    for (const p of points) for (const pl of p.planes || []) if (!names.includes(pl.name)) names.push(pl.name);
    return names.map((name) => ({ name: 'slack ' + name, cls: 'slack-point', fmt: (v) => (100 * v).toFixed(1) + '%',
      y: (p) => { const pl = (p.planes || []).find((q) => q.name === name); return pl ? pl.slack_fraction : 0; } }));
  }
  const tokSeries = [{ name: 'tokens of history per sequence', cls: 'sweep-point', color: '#4e79a7', fmt: (v) => commas(Math.round(v)), y: (p) => p.tokens_per_seq }];
  if (data.sweep) {
    const s = document.getElementById('sweep');
    el('h2', {}, s, 'Budget sweep (' + data.sweep.points.length + ' steps, ' + commas(rep.inputs.max_num_seqs) + ' sequences)');
    plot(s, 'sweep-plot', data.sweep.points, 'budget', (p) => gib(p.budget), tokSeries, 'tokens/seq');
    const ps = planeSeries(data.sweep.points);
    if (ps.length) plot(s, 'sweep-slack', data.sweep.points, 'budget', (p) => gib(p.budget), ps, 'plane slack');
    pointTable(s, 'sweep-table', data.sweep.points);
  }
  if (data.vary) {
    const s = document.getElementById('vary');
    el('h2', {}, s, 'Varying ' + data.vary.name + ' (' + data.vary.points.length + ' values)');
    plot(s, 'vary-plot', data.vary.points, 'label', (p) => p.label, [Object.assign({}, tokSeries[0], { cls: 'vary-point' })], 'tokens/seq', true);
    const ps = planeSeries(data.vary.points);
    if (ps.length) plot(s, 'vary-slack', data.vary.points, 'label', (p) => p.label, ps, 'plane slack', true);
    pointTable(s, 'vary-table', data.vary.points);
  }

  // --- diff -------------------------------------------------------------------------
  if (data.diff) {
    const d = data.diff, s = document.getElementById('diff');
    el('h2', {}, s, 'Diff: ' + d.this_model + ' against ' + d.other_model);
    el('p', { class: 'diff-summary', id: 'diff-summary' }, s, d.same_layout ? 'The two layouts place every byte identically (layout ' + d.this_fingerprint + ').'
      : commas(d.summary.offset) + ' offsets moved, ' + commas(d.summary.count) + ' counts changed, ' + commas(d.summary.other) + ' other members differ (layout ' + d.this_fingerprint + ' against ' + d.other_fingerprint + ').');
    el('h3', {}, s, 'Why: the inputs that differ');
    table(s, 'diff-inputs', [{ h: 'input', k: 'path', l: 1 }, { h: 'this', k: 'this', l: 1 }, { h: 'other', k: 'other', l: 1 }], d.inputs);
    el('h3', {}, s, 'What moved');
    const t = table(s, 'diff-changes', [{ h: 'member', k: 'path', l: 1 }, { h: 'kind', k: 'kind', l: 1 }, { h: 'this', k: 'this', l: 1 }, { h: 'other', k: 'other', l: 1 }], d.changes);
    t.querySelectorAll('tbody tr').forEach((tr, i) => { tr.className = 'diff-row kind-' + d.changes[i].kind; tr.dataset.path = d.changes[i].path; });
  }

  // --- the checkpoint ladder: three requests run on the layout's counts --------------
  function drawLadder(parent, L, li) {
    const q = L.query;
    const box = el('div', { class: 'ladder', id: 'ladder-' + li, 'data-prompt': String(q.prompt_tokens) }, parent);
    el('h3', {}, box, 'A ' + commas(q.prompt_tokens) + '-token prompt, ' + commas(q.output_tokens) + ' output tokens, a ' +
      commas(q.tail_tokens) + '-token tail, ' + commas(q.max_batched_tokens) + ' tokens per pass');
    if (L.error) {
      box.dataset.error = L.error;
      el('p', { class: 'error ladder-error' }, box, 'Cannot run it: ' + L.error);
      return;
    }
    el('p', { class: 'hint' }, box, 'interval ' + commas(L.interval) + ' tokens · block ' + commas(L.block_size) + ' · ' + L.transfer +
      ' · ' + commas(L.groups) + ' state groups' + (L.note ? ' · ' + L.note : ''));
    const reqs = L.requests;
    let span = 1;
    for (const r of reqs) span = Math.max(span, r.prompt_tokens + r.output_tokens);
    const PW = 1000, LW = 80, RW = 12, TH = 46, top = 8;
    const PH = top + reqs.length * TH + 24;
    const svg = el('svg', { class: 'ladder', width: String(PW), height: String(PH), viewBox: '0 0 ' + PW + ' ' + PH }, box);
    const X = (v) => LW + v / span * (PW - LW - RW);
    const titled = (node, text) => { el('title', {}, node, text); return node; };
    reqs.forEach((r, i) => {
      const g = el('g', { class: 'ladder-req', 'data-role': r.role }, svg);
      const y = top + i * TH;
      el('text', { x: 4, y: y + 16 }, g, r.role);
      if (r.hit_tokens > 0)
        titled(el('rect', { class: 'hit', x: X(0), y, width: X(r.hit_tokens) - X(0), height: 18 }, g), 'hit: tokens 0 .. ' + commas(r.hit_tokens) + ' from the cache');
      titled(el('rect', { class: 'prefill', x: X(r.hit_tokens), y, width: Math.max(0.5, X(r.prompt_tokens) - X(r.hit_tokens)), height: 18 }, g),
        'prefill: tokens ' + commas(r.hit_tokens) + ' .. ' + commas(r.prompt_tokens) + ' forwarded in ' + commas(r.chunks) + ' chunks');
      titled(el('rect', { class: 'decode', x: X(r.prompt_tokens), y, width: Math.max(0.5, X(r.prompt_tokens + r.output_tokens) - X(r.prompt_tokens)), height: 18 }, g),
        'decode: ' + commas(r.output_tokens) + ' tokens generated');
      if (r.indexed_tokens > 0)
        titled(el('rect', { class: 'indexed', x: X(0), y: y + 21, width: X(r.indexed_tokens) - X(0), height: 3 }, g),
          'in the index at admission: ' + commas(r.indexed_tokens) + ' tokens (before the checkpoint gate)');
      for (const c of r.prefill)
        titled(el('line', { class: 'chunk', x1: X(c.end), y1: y, x2: X(c.end), y2: y + 18, 'data-pos': String(c.end) }, g), 'chunk ' + commas(c.start) + ' .. ' + commas(c.end));
      if (r.limit_tokens > 0)
        titled(el('line', { class: 'limit', x1: X(r.limit_tokens), y1: y - 3, x2: X(r.limit_tokens), y2: y + 27, 'data-pos': String(r.limit_tokens) }, g),
          'last grid rung that leaves the successor its room: ' + commas(r.limit_tokens));
      for (const c of r.prefill) {
        if (!c.checkpoint) continue;
        titled(el('circle', { class: 'ckpt' + (c.cut_for_demand ? ' cut' : ''), cx: X(c.end), cy: y + 9, r: 5, 'data-pos': String(c.end) }, g),
          'checkpoint kept at ' + commas(c.end) + (c.cut_for_demand ? ' (the chunk was cut here for the demand)' : ''));
      }
      for (const p of r.decode_checkpoints)
        titled(el('circle', { class: 'decode-ckpt', cx: X(p), cy: y + 9, r: 5, 'data-pos': String(p) }, g), 'decode checkpoint at ' + commas(p) + ' (the spacing rule)');
      if (r.demand_pos > 0) {
        const x = X(r.demand_pos);
        titled(el('path', { class: 'demand', d: 'M' + x + ' ' + (y + 24) + ' l-6 10 h12 z', 'data-pos': String(r.demand_pos) }, g),
          'demand: a checkpoint wanted at ' + commas(r.demand_pos) + ' (the hit stopped at ' + commas(r.hit_tokens) + ')');
      }
    });
    const ay = top + reqs.length * TH + 4;
    el('line', { class: 'axis', x1: X(0), y1: ay, x2: X(span), y2: ay, stroke: '#888' }, svg);
    for (let k = 0; k <= 4; k++) {
      const v = Math.round(span * k / 4);
      el('text', { x: X(v), y: ay + 14, 'text-anchor': k === 0 ? 'start' : k === 4 ? 'end' : 'middle' }, svg, commas(v));
    }
    const lg = el('div', { class: 'legend' }, box);
    for (const [name, c] of [['hit', '#59a14f'], ['prefill', '#a0cbe8'], ['decode', '#e8e8e8'], ['indexed', '#4e79a7'], ['checkpoint', '#f28e2b'],
      ['cut for the demand', '#e15759'], ['decode checkpoint', '#b07aa1'], ['last rung (dashed) / demand (triangle)', '#e15759']]) {
      const sp = el('span', {}, lg, name); sp.style.setProperty('--c', c);
    }
    const list = (v) => v.length ? v.map(commas).join(' ') : '-';
    table(box, 'ladder-table-' + li, [{ h: 'request', k: 'role', l: 1 }, { h: 'prompt', k: 'prompt_tokens' }, { h: 'hit', k: 'hit_tokens' },
      { h: 'indexed', k: 'indexed_tokens' }, { h: 'demand', k: 'demand_pos' }, { h: 'last rung', k: 'limit_tokens' }, { h: 'chunks', k: 'chunks' },
      { h: 'checkpoints', k: 'ckpts', l: 1 }, { h: 'decode checkpoints', k: 'dckpts', l: 1 }, { h: 'kept', k: 'kept' }, { h: 'dropped', k: 'dropped' },
      { h: 'evicted', k: 'evicted' }, { h: 'gate', k: 'reason', l: 1 }],
    reqs.map((r) => Object.assign({}, r, { ckpts: list(r.checkpoints), dckpts: list(r.decode_checkpoints), reason: r.reason || '-' })));
  }
  if (data.ladders && data.ladders.length) {
    const s = document.getElementById('ladder');
    el('h2', {}, s, 'Checkpoint ladder');
    el('p', { class: 'hint' }, s, 'Three requests run one after another on a cache manager of this layout\u2019s counts, with the scheduler\u2019s calls: ' +
      'the first (the prompt), a follow-up (the prompt and a tail) and a repeat (the prompt and another tail). Hover a mark for what it is.');
    data.ladders.forEach((L, li) => drawLadder(s, L, li));
  }

  // --- live: pool-serve --listen serves this page and its counters ---------------
  if (data.live) {
    const s = document.getElementById('live');
    s.hidden = false;
    el('h2', {}, s, 'Live cache (polling /debug/cache_stats)');
    const status = el('p', { id: 'live-status', class: 'hint' }, s, 'waiting for the first answer');
    const keys = [['requests', 'requests'], ['blocks_total', 'blocks'], ['blocks_free', 'blocks free'], ['blocks_cached', 'blocks cached'],
      ['blocks_held', 'blocks held'], ['groups_total', 'state groups'], ['groups_free', 'groups free'], ['full_tokens', 'prompt tokens'],
      ['cached_tokens', 'hit tokens'], ['demands_recorded', 'demands'], ['chunks_cut_for_demand', 'chunks cut'],
      ['checkpoints_kept', 'checkpoints kept'], ['checkpoints_dropped', 'dropped'], ['checkpoints_evicted', 'evicted']];
    const t = el('table', { id: 'live-stats' }, s);
    const hr = el('tr', {}, el('thead', {}, t));
    for (const [, h] of keys) el('th', {}, hr, h);
    el('th', {}, hr, 'hit rate');
    const row = el('tr', {}, el('tbody', {}, t));
    const cells = {};
    for (const [k] of keys) cells[k] = el('td', { 'data-key': k }, row, '-');
    const hitCell = el('td', { 'data-key': 'hit_rate' }, row, '-');
    const PW = 760, PH = 160;
    const svg = el('svg', { class: 'plot', id: 'live-hit', width: String(PW), height: String(PH), viewBox: '0 0 ' + PW + ' ' + PH }, s);
    el('text', { x: 8, y: 14 }, svg, 'hit rate over time (cached / prompt tokens)');
    const line = el('polyline', { fill: 'none', stroke: '#4e79a7', 'stroke-width': 2, points: '' }, svg);
    const history = [];
    let polls = 0;
    async function poll() {
      try {
        const r = await fetch('/debug/cache_stats', { cache: 'no-store' });
        if (!r.ok) throw new Error('HTTP ' + r.status);
        const j = await r.json();
        polls++;
        for (const [k] of keys) { cells[k].textContent = commas(j[k]); cells[k].dataset.value = String(j[k]); }
        const rate = j.full_tokens > 0 ? j.cached_tokens / j.full_tokens : 0;
        hitCell.textContent = pct(rate);
        history.push(rate);
        if (history.length > 240) history.shift();
        line.setAttribute('points', history.map((v, i) => (20 + i / 239 * (PW - 40)).toFixed(1) + ',' + (PH - 10 - v * (PH - 30)).toFixed(1)).join(' '));
        s.dataset.polls = String(polls);
        s.dataset.last = JSON.stringify(j);
        status.textContent = 'updated ' + new Date().toLocaleTimeString() + ' · ' + polls + ' polls';
      } catch (e) {
        status.textContent = 'pool-serve is not answering (' + e.message + '); retrying';
      }
      setTimeout(poll, 500);
    }
    poll();
  }

  const textEl = document.getElementById('text');
  textEl.textContent = data.text;
  if (!data.text) document.getElementById('textsec').hidden = true;
  const ms = performance.now() - t0;
  document.body.dataset.renderMs = ms.toFixed(1);
  document.body.dataset.ready = '1';
  explorer.renderMs = ms;
  explorer.regionAt = (mi, levelName, u) => {
    const m = data.maps[mi];
    const lv = m.levels.find((l) => l.name === levelName);
    const h = lv && regionAt(lv, u);
    return h ? { name: h.r.name, kind: h.r.kind, begin: h.begin, end: h.end, copy: h.copy } : null;
  };
  window.poolExplorer = explorer;
})();
