// The explorer page in a real browser (Debian chromium, driven by the
// pinned playwright-core): pool-explore writes the page for V4-Flash (row
// space), Qwen3.5 (state arena) and Llama 3.1 (plain KV), and an artifact;
// the DOM is checked against the report pool-explore wrote beside it and
// against expectations derived here from the report alone.
//
//   node browser-test.mjs BIN_DIR MODELS_DIR OUT_DIR
//
// Fails on any console error or page exception. Screenshots go to OUT_DIR.
import { chromium } from 'playwright-core';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const [bin, models, out] = process.argv.slice(2);
if (!bin || !models || !out) {
  console.error('usage: browser-test.mjs BIN_DIR MODELS_DIR OUT_DIR');
  process.exit(2);
}
fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });
let failures = 0;
function check(cond, what) {
  if (!cond) { failures++; console.error('FAIL: ' + what); }
}
function run(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(cmd + ' ' + args.join(' ') + ' exited ' + r.status + ': ' + r.stderr);
  return r.stdout;
}
function explore(name, args) {
  const dir = path.join(out, name);
  run(path.join(bin, 'pool-explore'), [...args, '--html', dir]);
  const report = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
  let bytes = 0;
  for (const f of fs.readdirSync(dir)) bytes += fs.statSync(path.join(dir, f)).size;
  check(bytes < 2 * 1024 * 1024, name + ': the generated files are ' + bytes + ' B, not under 2 MB');
  return { dir, report, bytes };
}
function flatten(v, p, outList) {
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
    for (const k of Object.keys(v).sort()) flatten(v[k], p ? p + '.' + k : k, outList);
  } else if (Array.isArray(v)) {
    if (v.length === 0) outList.set(p, '[]');
    v.forEach((x, i) => flatten(x, p + '[' + i + ']', outList));
  } else outList.set(p, JSON.stringify(v));
  return outList;
}

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium', args: ['--no-sandbox'] });
async function open(name, dir) {
  const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(e.message));
  const t0 = Date.now();
  await page.goto('file://' + path.resolve(dir, 'index.html'));
  await page.waitForSelector('body[data-ready="1"]', { state: 'attached', timeout: 20000 });
  const wall = Date.now() - t0;
  const renderMs = Number(await page.evaluate(() => document.body.dataset.renderMs));
  return { page, errors, wall, renderMs };
}
async function hoverText(page, mapIndex, level, k, lo, hi, unit) {
  await page.evaluate(([mi, lv, kk, a, b]) => window.poolExplorer.maps[mi].setView(lv, kk, a, b), [mapIndex, level, k, lo, hi]);
  const box = await page.locator('.map[data-map="' + mapIndex + '"] svg').boundingBox();
  await page.mouse.move(box.x + (unit + 0.5 - lo) / (hi - lo) * box.width, box.y + box.height / 2);
  const tip = page.locator('#tip');
  return (await tip.isVisible()) ? await tip.textContent() : '';
}
async function rects(page, mapIndex) {
  return page.$$eval('.map[data-map="' + mapIndex + '"] rect.region', (rs) => rs.map((r) => ({
    kind: r.dataset.kind, name: r.dataset.name, begin: Number(r.dataset.begin), end: Number(r.dataset.end),
    field: r.dataset.field, layer: r.dataset.layer, agg: r.classList.contains('agg') })));
}
async function tableColumn(page, id, key) {
  return page.$$eval('#' + id + ' td[data-key="' + key + '"]', (tds) => tds.map((t) => t.dataset.value));
}

// The checkpoint ladder: the DOM draws what explore.json holds, and for a
// prompt of P tokens (P a multiple of the block, not of the interval I,
// chunks that reach every rung) the runs follow spec 8.6, worked out here
// from the report alone: the first request keeps the rungs I, 2I, ... up to
// the last that leaves the successor its room, and its prompt end (the last
// block boundary: specs/checkpoint-placement.md); the follow-up and the
// repeat hit the whole shared prompt, and demand nothing.
async function checkLadder(page, name, dir, R, P, I) {
  const data = JSON.parse(fs.readFileSync(path.join(dir, 'explore.json'), 'utf8'));
  check(data.ladders.length >= 1, name + ': the page data has a ladder');
  for (let li = 0; li < data.ladders.length; li++) {
    const L = data.ladders[li];
    check(!L.error, name + ': ladder ' + li + ' ran (' + L.error + ')');
    if (L.error) continue;
    for (const r of L.requests) {
      const g = '#ladder-' + li + ' g.ladder-req[data-role="' + r.role + '"]';
      const pos = (sel) => page.$$eval(g + ' ' + sel, (es) => es.map((e) => Number(e.dataset.pos)));
      check(JSON.stringify(await pos('circle.ckpt')) === JSON.stringify(r.checkpoints), name + ': ' + r.role + ' checkpoints drawn');
      check(JSON.stringify(await pos('circle.decode-ckpt')) === JSON.stringify(r.decode_checkpoints), name + ': ' + r.role + ' decode checkpoints drawn');
      check(JSON.stringify(await pos('path.demand')) === JSON.stringify(r.demand_pos ? [r.demand_pos] : []), name + ': ' + r.role + ' demand drawn');
      check(JSON.stringify(await pos('line.chunk')) === JSON.stringify(r.prefill.map((c) => c.end)), name + ': ' + r.role + ' chunk ends drawn');
    }
    check(JSON.stringify(await tableColumn(page, 'ladder-table-' + li, 'hit_tokens')) === JSON.stringify(L.requests.map((r) => String(r.hit_tokens))), name + ': ladder table hits');
  }
  const L = data.ladders[0];
  if (!L.requests) return;
  const st = R.entry_classes.find((c) => c.transfer && c.transfer.kind !== 'none');
  const room = st.transfer.kind === 'fork' ? st.transfer.tokens : 0;
  const bs = R.geometry.block_size;
  const last = Math.floor((P - room) / I) * I;
  const rungs = [];
  for (let x = I; x <= last; x += I) rungs.push(x);
  const [a, b, c] = L.requests;
  check(L.interval === I && a.prompt_tokens === P, name + ': ladder of ' + P + ' tokens at interval ' + I);
  const shared = Math.floor(P / bs) * bs;
  const kept = rungs.includes(shared) ? rungs : rungs.concat([shared]);
  check(a.hit_tokens === 0 && JSON.stringify(a.checkpoints) === JSON.stringify(kept), name + ': first keeps the rungs and its prompt end ' + kept + ' (got ' + a.checkpoints + ')');
  check(b.indexed_tokens === shared && b.hit_tokens === shared && b.demand_pos === 0,
    name + ': follow-up hits all ' + shared + ' indexed at the prompt end (got hit ' + b.hit_tokens + ', demand ' + b.demand_pos + ')');
  check(c.hit_tokens === shared && c.demand_pos === 0, name + ': repeat hits the prompt end ' + shared + ' (got ' + c.hit_tokens + ')');
}

// --- DeepSeek-V4-Flash: the row space ---------------------------------------
{
  const steps = 6;
  const v4 = explore('v4-flash', [path.join(models, 'deepseek-v4-flash-fp8.yaml'), '--budget', '150GiB', '--max-num-seqs', '256',
    '--sweep', 'budget=40GiB..150GiB:' + steps, '--vary', 'dtype=bf16,fp8', '--compare', path.join(models, 'deepseek-v4-flash-bf16.yaml'),
    '--ladder', '36864:1024:1024']);
  const bf16 = explore('v4-flash-bf16', [path.join(models, 'deepseek-v4-flash-bf16.yaml'), '--budget', '150GiB', '--max-num-seqs', '256']);
  const R = v4.report, rs = R.row_space;
  const { page, errors } = await open('v4-flash', v4.dir);

  // Tables: the report's numbers.
  check(JSON.stringify(await tableColumn(page, 'pools', 'entries')) === JSON.stringify(R.entry_classes.map((c) => String(c.entries))), 'v4: pool entries table');
  check(JSON.stringify(await tableColumn(page, 'planes', 'slack_bytes')) === JSON.stringify(rs.planes.map((p) => String(p.slack_bytes))), 'v4: plane slack table');

  // The plane level: blocks from row 0, the gap, slots at the top.
  const held = Math.floor(rs.plane_rows / rs.slot_rows);
  const origin = rs.slot_positions - held;
  const slotsBegin = (rs.slot_positions - rs.num_slots - origin) * rs.slot_rows;
  const top = await rects(page, 0);
  const blocks = top.find((r) => r.kind === 'blocks'), gap = top.find((r) => r.kind === 'gap'), slots = top.find((r) => r.kind === 'slots');
  check(blocks && blocks.begin === 0 && blocks.end === rs.num_blocks * rs.envelope_rows, 'v4: blocks span rows 0..num_blocks*envelope_rows');
  check(gap && gap.begin === rs.num_blocks * rs.envelope_rows && gap.end === slotsBegin, 'v4: the gap ends where the slots begin');
  check(slots && slots.begin === slotsBegin && slots.end === rs.plane_rows, 'v4: slots run to the plane top');

  // One slot, in each plane: the arena fields of that plane at their rows.
  const arena = R.arenas.find((a) => a.class === rs.slot_class);
  for (let mi = 0; mi < rs.planes.length; mi++) {
    const plane = rs.planes[mi];
    await page.evaluate((m) => window.poolExplorer.maps[m].setView('slot', 0), mi);
    const rr = await rects(page, mi);
    for (const f of arena.fields.filter((f) => f.plane === plane.name)) {
      const r = rr.find((x) => x.kind === 'field' && x.field === f.name);
      check(r && r.begin === Math.floor(f.offset / plane.row_bytes) && r.end === Math.ceil(f.end / plane.row_bytes),
        'v4: field ' + f.name + ' drawn at its rows in plane ' + plane.name);
    }
    check(!rr.some((x) => x.kind === 'field' && !plane.fields.includes(x.field)), 'v4: plane ' + plane.name + ' draws only its own fields');
    // Every window class's ring sits at arena_rows + entry_offset.
    for (const c of rs.classes) {
      const ring = rr.find((x) => x.kind === 'ring' && x.name === c.name + ' windows');
      check(ring && ring.begin === rs.arena_rows + c.entry_offset && ring.end === rs.arena_rows + c.entry_offset + c.entry_rows, 'v4: ' + c.name + ' ring rows');
    }
    const pad = rr.find((x) => x.kind === 'padding');
    if (rs.arena_rows + rs.entry_rows < rs.slot_rows)
      check(pad && pad.begin === rs.arena_rows + rs.entry_rows && pad.end === rs.slot_rows, 'v4: slot padding');
  }

  // Hover names the right region for chosen rows.
  const rope = rs.planes.findIndex((p) => p.name === 'rope');
  const mid = arena.fields.find((f) => f.plane === 'rope' && f.offset > 0);
  const row = Math.floor(mid.offset / 128) + 3;
  let t = await hoverText(page, rope, 'slot', 0, row - 50, row + 50, row);
  check(t.includes(mid.name) && t.includes('plane   rope'), 'v4: hover at slot row ' + row + ' names ' + mid.name + ' (got: ' + t.split('\n')[0] + ')');
  // The first run of a CSA layer: arena + entry_offset + layer index * ring stride.
  const csa = rs.classes.find((c) => c.name === 'csa');
  const li = 2, layerRow = rs.arena_rows + csa.entry_offset + li * csa.ring_stride;
  t = await hoverText(page, rope, 'slot', 0, layerRow - 40, layerRow + 40, layerRow);
  check(t.includes('csa layer ' + csa.layers[li]), 'v4: hover at slot row ' + layerRow + ' names csa layer ' + csa.layers[li] + ' (got: ' + t.split('\n')[0] + ')');
  // The address of the hovered row of group 0: plane offset + row * row bytes.
  const group0Row = (rs.slot_positions - 1 - origin) * rs.slot_rows + layerRow;
  const addr = '0x' + (BigInt(rs.planes[rope].offset) + BigInt(group0Row) * 128n).toString(16).padStart(12, '0');
  check(t.includes('address ' + addr), 'v4: hover gives the address ' + addr);
  // The plane level: a row in the gap, and one of the blocks.
  const gapRow = Math.floor((gap.begin + gap.end) / 2);
  await checkLadder(page, 'v4', v4.dir, R, 36864, 8192);
  t = await hoverText(page, 0, 'plane', 0, gapRow - 1000, gapRow + 1000, gapRow);
  check(t.startsWith('gap'), 'v4: hover in the gap names the gap');
  const hcaBlock = rs.classes.find((c) => c.name === 'hca');
  const hr = hcaBlock.envelope_offset + hcaBlock.block_rows + 1;
  t = await hoverText(page, 0, 'block', 7, Math.max(0, hr - 20), hr + 20, hr);
  check(t.includes('hca layer ' + hcaBlock.layers[1]) && t.includes('block ' + 7), 'v4: hover in block 7 names hca layer ' + hcaBlock.layers[1]);

  // Clicking a block in the plane view opens that block.
  await page.evaluate(() => window.poolExplorer.maps[0].setView('plane', 0, 0, 20 * 1384));
  const box = await page.locator('.map[data-map="0"] svg').boundingBox();
  await page.mouse.click(box.x + (3.5 / 20) * box.width, box.y + box.height / 2);
  const view = await page.evaluate(() => window.poolExplorer.maps[0].view());
  check(view.level === 2 && view.inst === 3, 'v4: a click on block 3 opens block 3 (got level ' + view.level + ', ' + view.inst + ')');

  // The sweep plot: one point per step, the values the table printed.
  const pts = await page.$$eval('#sweep-plot circle.sweep-point', (cs) => cs.map((c) => c.dataset.value));
  check(pts.length === steps, 'v4: the sweep plot has ' + steps + ' points (got ' + pts.length + ')');
  const cli = run(path.join(bin, 'pool-explore'), [path.join(models, 'deepseek-v4-flash-fp8.yaml'), '--budget', '150GiB', '--max-num-seqs', '256', '--sweep', 'budget=40GiB..150GiB:' + steps]);
  const cliRows = cli.split('\n').filter((l) => /^\d+\.\d\d GiB /.test(l)).map((l) => l.trim().split(/\s+/));
  check(cliRows.length === steps && cliRows.every((r, i) => r[r.length - 2].replace(/,/g, '') === pts[i]), 'v4: sweep points equal the CLI table tokens/seq');
  check((await page.$$('#vary-plot rect.vary-bar')).length === 2, 'v4: the vary plot has one bar per value');

  // The diff lists exactly the report members that differ.
  const fa = flatten(R, '', new Map()), fb = flatten(bf16.report, '', new Map());
  const isInput = (p) => /^(inputs|model|source|geometry)([.[]|$)/.test(p);
  const want = new Set();
  for (const [k, v] of fa) if (!isInput(k) && fb.get(k) !== v) want.add(k);
  for (const k of fb.keys()) if (!isInput(k) && !fa.has(k)) want.add(k);
  const got = await page.$$eval('#diff-changes tr.diff-row', (rs) => rs.map((r) => r.dataset.path));
  check(got.length === want.size && got.every((p) => want.has(p)), 'v4: the diff lists the ' + want.size + ' differing members (got ' + got.length + ')');
  const offsets = await page.$$eval('#diff-changes tr.diff-row.kind-offset', (rs) => rs.map((r) => r.dataset.path));
  check(offsets.includes('row_space.planes[1].offset') || offsets.some((p) => p.includes('offset')), 'v4: moved offsets are listed as offsets');
  const why = await tableColumn(page, 'diff-inputs', 'path');
  check(why.includes('geometry.planes[0].row_bytes'), 'v4: the why names the plane width that differs');

  await page.evaluate(() => window.poolExplorer.maps[1].setView('slot', 0));
  await page.screenshot({ path: path.join(out, 'v4-flash.png'), fullPage: true });
  check(errors.length === 0, 'v4: console errors: ' + errors.join(' | '));
  await page.close();
}

// --- Qwen3.5: a state arena without a row space -----------------------------
{
  const q = explore('qwen3.5', [path.join(models, 'qwen3.5-27b.yaml'), '--budget', '150GiB', '--max-num-seqs', '256', '--sweep', 'budget=1GiB..150GiB:4']);
  const R = q.report;
  const { page, errors } = await open('qwen3.5', q.dir);
  const mi = await page.$$eval('.map', (ms) => ms.length - 1); // the allocation
  const top = await rects(page, mi);
  for (const c of R.entry_classes.filter((c) => c.region_offset !== null)) {
    const r = top.find((x) => x.kind === 'pool' && x.name === c.name);
    check(r && r.begin === c.region_offset && r.end === c.region_offset + c.entries * c.entry_bytes, 'qwen: region of ' + c.name);
  }
  const st = R.entry_classes.find((c) => c.pool === 'state');
  const arena = R.arenas.find((a) => a.class === st.name);
  const levels = await page.$$eval('.map[data-map="' + mi + '"] select.level option', (os) => os.map((o) => o.textContent));
  const li = levels.indexOf('entry of ' + st.name);
  check(li > 0, 'qwen: an entry level for ' + st.name);
  const f = arena.fields[arena.fields.length - 1];
  const fm = Math.floor((f.offset + f.end) / 2);
  const t = await hoverText(page, mi, li, 5, fm - 500, fm + 500, fm);
  check(t.includes(f.name) && t.includes('of entry 5'), 'qwen: hover in entry 5 names ' + f.name + ' (got: ' + t.split('\n')[0] + ')');
  const addr = '0x' + (BigInt(st.region_offset) + 5n * BigInt(st.entry_bytes) + BigInt(fm)).toString(16).padStart(12, '0');
  check(t.includes('address ' + addr), 'qwen: hover gives the address ' + addr);
  check((await page.$$('#sweep-plot circle.sweep-point')).length === 4, 'qwen: 4 sweep points, errors included');
  check((await page.$$('#sweep-plot circle.sweep-point.error')).length === 1, 'qwen: the 1 GiB point is drawn as an error');
  check((await page.$$('#planes')).length === 0, 'qwen: no plane table without a row space');
  // No --ladder: the page's default query, 4.5 intervals of prompt.
  await checkLadder(page, 'qwen', q.dir, R, 36864, 8192);
  await page.locator('#ladder').screenshot({ path: path.join(out, 'qwen3.5-ladder.png') });
  await page.screenshot({ path: path.join(out, 'qwen3.5.png'), fullPage: true });
  check(errors.length === 0, 'qwen: console errors: ' + errors.join(' | '));
  await page.close();
}

// --- Llama 3.1 from an artifact: plain KV; the diff to its model is empty ----
{
  const pack = path.join(out, 'llama.poolpack');
  run(path.join(bin, 'poolc'), [path.join(models, 'llama-3.1-8b.yaml'), '--budget', '4GiB', '--max-num-seqs', '8', '--targets', 'host', '-o', pack]);
  const l = explore('llama', ['--artifact', pack, '--compare', path.join(models, 'llama-3.1-8b.yaml')]);
  const R = l.report;
  const { page, errors } = await open('llama', l.dir);
  const top = await rects(page, 0);
  const kv = R.entry_classes.find((c) => c.pool === 'page');
  const r = top.find((x) => x.kind === 'pool');
  check(r && r.begin === kv.region_offset && r.end === kv.region_offset + kv.entries * kv.entry_bytes, 'llama: the kv region');
  check(await page.$eval('#diff-summary', (e) => e.textContent.startsWith('The two layouts place every byte identically')), 'llama: the artifact and its model have the same layout');
  check((await page.$$('#diff-changes tr.diff-row')).length === 0, 'llama: no changed member');
  check((await page.$eval('header', (h) => h.textContent)).includes('artifact 0x'), 'llama: the header names the artifact');
  await page.screenshot({ path: path.join(out, 'llama.png'), fullPage: true });
  check(errors.length === 0, 'llama: console errors: ' + errors.join(' | '));
  await page.close();
}

// --- Live: pool-serve --listen serves the page; the panel follows the replay -
{
  const { spawn } = await import('node:child_process');
  const pack = path.join(out, 'live.poolpack'), trace = path.join(out, 'live.jsonl');
  run(path.join(bin, 'poolc'), [path.join(models, 'llama-3.1-8b.yaml'), '--budget', '4GiB', '--max-num-seqs', '4', '--targets', 'host', '-o', pack]);
  run('python3', [path.join(models, '..', 'bench', 'tier', 'make_seed_trace.py'), trace, '200', '2', '1024', '700']);
  const serve = spawn(path.join(bin, 'pool-serve'), ['replay', trace, '--artifact', pack, '--progress', 'none',
    '--listen', '127.0.0.1:0', '--linger-ms', '4000'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  serve.stderr.on('data', (d) => { log += d; });
  const exited = new Promise((res) => serve.on('exit', (code) => res(code)));
  let port = null;
  for (let i = 0; i < 200 && !port; i++) {
    const m = log.match(/live cache at http:\/\/127\.0\.0\.1:(\d+)\//);
    if (m) port = m[1]; else await new Promise((r) => setTimeout(r, 25));
  }
  check(port, 'live: pool-serve printed its page address (' + log.trim() + ')');
  if (port) {
    const page = await browser.newPage({ viewport: { width: 1300, height: 900 } });
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto('http://127.0.0.1:' + port + '/');
    await page.waitForSelector('body[data-ready="1"]', { state: 'attached', timeout: 20000 });
    check(await page.$eval('#live', (e) => !e.hidden), 'live: the panel is shown');
    check((await page.$$('.map rect.region')).length > 0, 'live: the layout is drawn');
    // The ladder with pool-serve's policy: a stateless model keeps nothing.
    const note = await page.$eval('#ladder-0 p.hint', (e) => e.textContent);
    check(note.includes('stateless') && (await page.$$('#ladder-0 circle')).length === 0, 'live: the stateless ladder (' + note + ')');
    // Sample the panel while the replay runs, until the counters settle.
    const seen = new Set();
    let last = null;
    for (let i = 0; i < 60; i++) {
      const d = await page.$eval('#live', (e) => e.dataset.last || '');
      if (d) { last = JSON.parse(d); seen.add(last.requests + '/' + last.cached_tokens); }
      if (last && last.requests === 400 && seen.size > 1) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    check(seen.size > 1, 'live: the panel numbers moved during the replay (' + [...seen].join(' ') + ')');
    // After the replay (the server lingers): the panel matches the endpoint.
    const polls = Number(await page.$eval('#live', (e) => e.dataset.polls));
    await page.waitForFunction((n) => Number(document.getElementById('live').dataset.polls) > n + 1, polls, { timeout: 5000 });
    const want = await (await fetch('http://127.0.0.1:' + port + '/debug/cache_stats')).json();
    const shown = {};
    for (const td of await page.$$('#live-stats td[data-key]')) {
      const k = await td.getAttribute('data-key');
      shown[k] = await td.getAttribute('data-value');
    }
    for (const k of ['requests', 'blocks_total', 'blocks_free', 'blocks_cached', 'blocks_held', 'cached_tokens', 'full_tokens', 'checkpoints_kept'])
      check(shown[k] === String(want[k]), 'live: panel ' + k + ' = ' + shown[k] + ', /debug/cache_stats says ' + want[k]);
    check(want.requests === 400 && want.cached_tokens > 0, 'live: the replay finished with hits');
    const rate = await page.$eval('#live-stats td[data-key="hit_rate"]', (e) => e.textContent);
    check(rate === (100 * want.cached_tokens / want.full_tokens).toFixed(1) + '%', 'live: hit rate ' + rate);
    await page.screenshot({ path: path.join(out, 'live.png'), fullPage: false });
    check(errors.length === 0, 'live: console errors: ' + errors.join(' | '));
    await page.close();
  }
  const code = await exited;
  check(code === 0, 'live: pool-serve exited ' + code);
}

// --- V4-Pro at 150 GiB: how long the page takes (printed, not asserted) ------
{
  const pro = explore('v4-pro', [path.join(models, 'deepseek-v4-pro-dspark-fp8.yaml'), '--budget', '150GiB', '--max-num-seqs', '256']);
  const { page, errors, wall, renderMs } = await open('v4-pro', pro.dir);
  console.log('v4-pro 150GiB page: script ' + renderMs.toFixed(1) + ' ms, load to ready ' + wall + ' ms, files ' + pro.bytes + ' B');
  check(errors.length === 0, 'v4-pro: console errors: ' + errors.join(' | '));
  await page.screenshot({ path: path.join(out, 'v4-pro.png') });
  await page.close();
}

await browser.close();
if (failures) { console.error(failures + ' check(s) failed'); process.exit(1); }
console.log('explore-browser: all checks passed');
