// The page of html_report.cc: inline CSS and JS, no network. "/*HLOC_DATA*/" is replaced by the
// report's JSON and HLOC_TITLE by the module's name. Counts go into elements with ids (n-passes,
// n-passes-changed, n-firings, n-fusions, n-vetoes, n-fusion-instructions, n-thunks, n-buffers,
// n-timed-thunks, n-thunk-us-total)
// so a test can read them from `chromium --headless --dump-dom`; a script error is written into
// #errors (and the console).
#pragma once

namespace hloc {

inline constexpr const char* kHtmlReportPage = R"HTMLPAGE(<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>hloc: HLOC_TITLE</title>
<style>
body{font:13px/1.4 "DejaVu Sans",Arial,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#243447;color:#fff;padding:8px 16px}
header h1{font-size:17px;margin:0}
#summary span{display:inline-block;margin:4px 14px 0 0}
#summary b{color:#ffd479}
nav{background:#e8edf3;padding:4px 16px;position:sticky;top:0;z-index:2}
nav a{margin-right:14px;color:#1a4d8f;text-decoration:none;font-weight:bold}
section{padding:6px 16px}
h2{font-size:15px;border-bottom:1px solid #ccd;margin:10px 0 6px}
table{border-collapse:collapse;font-size:12px}
td,th{border:1px solid #dde;padding:2px 6px;vertical-align:top;text-align:left}
th{background:#eef}
tr.changed td{background:#fff8e1}
tr.sel td{background:#d6eaff!important}
tr.pass-row{cursor:pointer}
pre{margin:0;font:12px/1.3 "DejaVu Sans Mono",monospace;white-space:pre-wrap}
.diff{border:1px solid #ccd;background:#fff;max-height:520px;overflow:auto;padding:4px}
.add{background:#e6ffec}.del{background:#ffebe9}.ctx{color:#777}
.fused{color:#116329;font-weight:bold}.veto{color:#a40e26;font-weight:bold}.slow{color:#8a6100}
.scroll{max-height:480px;overflow:auto;display:inline-block}
#graph svg{max-width:100%;height:auto;background:#fff;border:1px solid #ccd}
#errors{color:#a40e26}
.time{color:#1a4d8f;background:#eef4ff}.far{color:#a40e26;background:#ffebe9}
.note{color:#666;font-style:italic}
</style></head><body>
<header><h1>hloc compilation report: HLOC_TITLE</h1>
<div id="summary">
<span>passes run <b id="n-passes">?</b></span><span>changed <b id="n-passes-changed">?</b></span>
<span>rule firings <b id="n-firings">?</b></span><span>fusions made <b id="n-fusions">?</b></span>
<span>vetoed / unprofitable <b id="n-vetoes">?</b></span>
<span>fusion instructions after <b id="n-fusion-instructions">?</b></span>
<span>thunks <b id="n-thunks">?</b></span><span>live ranges <b id="n-buffers">?</b></span>
</div><div id="errors"></div></header>
<nav><a href="#passes">Passes</a><a href="#rules">Rule firings</a><a href="#fusion">Fusion decisions</a>
<a href="#graph-sec">Fusion graph</a><a href="#buffers">Buffers</a><a href="#thunks">Thunks</a></nav>
<section id="passes"><h2>Passes, in run order (click a row for the module's diff)</h2>
<div class="scroll"><table id="pass-table"><thead><tr><th>#</th><th>pass</th><th>changed</th><th>ms</th>
<th>firings</th><th>fusion decisions</th></tr></thead><tbody></tbody></table></div>
<h3 id="diff-title" class="note">no pass selected</h3><div class="diff" id="diff"></div></section>
<section id="rules"><h2>Rule firings</h2><div class="scroll"><table id="rule-table"><thead><tr><th>#</th>
<th>pass</th><th>rule</th><th>where</th><th>before</th><th>after</th></tr></thead><tbody></tbody></table></div>
<p id="rule-note" class="note"></p></section>
<section id="fusion"><h2>Fusion decisions (priority fusion; times from the cost model, in us)</h2>
<div class="scroll"><table id="fusion-table"><thead><tr><th>#</th><th>pass</th><th>producer</th><th>into</th>
<th>verdict</th><th>unfused</th><th>fused</th><th>benefit</th><th>veto record</th><th>reason</th></tr></thead>
<tbody></tbody></table></div><p id="fusion-note" class="note"></p></section>
<section id="graph-sec"><h2>Fusions as a graph (entry computation)</h2><div id="graph"></div>
<h3>Fusion instructions of the final module</h3><div class="scroll"><table id="final-fusions"><thead><tr>
<th>name</th><th>kind</th><th>computation</th><th>ops</th></tr></thead><tbody></tbody></table></div></section>
<section id="buffers"><h2>Buffer live ranges</h2><p class="note">From <span id="live-source">?</span>.</p>
<div id="live"></div><details><summary>buffer assignment</summary><pre id="ba"></pre></details></section>
<section id="thunks"><h2>Thunk sequence</h2>
<p class="note"><span id="thunk-times-source"></span> Timed thunks <b id="n-timed-thunks">?</b>, total
<b id="n-thunk-us-total">?</b> us per call.<span id="thunk-times-mismatch"></span></p>
<pre id="thunk-text"></pre></section>
<script>
window.addEventListener('error', function (e) {
  document.getElementById('errors').textContent += 'script error: ' + e.message + ' ';
});
</script>
<script id="hloc-data" type="application/json">/*HLOC_DATA*/</script>
<script>
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('hloc-data').textContent);
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function row(tbody, cells, cls) {
    var tr = el('tr', cls);
    cells.forEach(function (c) {
      var td = el('td');
      if (c instanceof Node) td.appendChild(c); else td.textContent = c;
      tr.appendChild(td);
    });
    tbody.appendChild(tr);
    return tr;
  }
  function passName(i) { return i >= 0 && i < D.passes.length ? D.passes[i].path : '(outside a pass)'; }

  // Line diff: common prefix and suffix, then an LCS table on what is left (when small enough).
  function diffLines(a, b) {
    var x = a.split('\n'), y = b.split('\n'), out = [], p = 0, s = 0;
    while (p < x.length && p < y.length && x[p] === y[p]) p++;
    while (s < x.length - p && s < y.length - p && x[x.length - 1 - s] === y[y.length - 1 - s]) s++;
    for (var i = 0; i < p; i++) out.push([' ', x[i]]);
    var xm = x.slice(p, x.length - s), ym = y.slice(p, y.length - s), n = xm.length, m = ym.length;
    if (n * m > 4000000) {
      xm.forEach(function (l) { out.push(['-', l]); });
      ym.forEach(function (l) { out.push(['+', l]); });
    } else {
      var L = [];
      for (i = 0; i <= n; i++) L.push(new Int32Array(m + 1));
      for (i = n - 1; i >= 0; i--)
        for (var j = m - 1; j >= 0; j--)
          L[i][j] = xm[i] === ym[j] ? L[i + 1][j + 1] + 1 : Math.max(L[i + 1][j], L[i][j + 1]);
      i = 0; j = 0;
      while (i < n || j < m) {
        if (i < n && j < m && xm[i] === ym[j]) { out.push([' ', xm[i]]); i++; j++; }
        else if (j < m && (i === n || L[i][j + 1] >= L[i + 1][j])) { out.push(['+', ym[j]]); j++; }
        else { out.push(['-', xm[i]]); i++; }
      }
    }
    for (i = x.length - s; i < x.length; i++) out.push([' ', x[i]]);
    return out;
  }
  function showDiff(k, tr) {
    var p = D.passes[k];
    Array.prototype.forEach.call(document.querySelectorAll('tr.sel'), function (r) { r.className = r.className.replace(' sel', ''); });
    tr.className += ' sel';
    var box = $('diff');
    box.textContent = '';
    if (!p.changed) {
      $('diff-title').textContent = '#' + k + ' ' + p.path + ': no change';
      return;
    }
    var d = diffLines(D.snapshots[p.before], D.snapshots[p.after]), added = 0, removed = 0;
    // Changed lines with three lines of context; long unchanged runs fold into "...".
    var keep = d.map(function () { return false; });
    d.forEach(function (e, i) {
      if (e[0] !== ' ') for (var q = Math.max(0, i - 3); q <= Math.min(d.length - 1, i + 3); q++) keep[q] = true;
    });
    var pre = el('pre'), skipped = false;
    d.forEach(function (e, i) {
      if (e[0] === '+') added++;
      if (e[0] === '-') removed++;
      if (!keep[i]) { if (!skipped) pre.appendChild(el('div', 'ctx', '   ...')); skipped = true; return; }
      skipped = false;
      pre.appendChild(el('div', e[0] === '+' ? 'add' : e[0] === '-' ? 'del' : 'ctx', e[0] + ' ' + e[1]));
    });
    $('diff-title').textContent = '#' + k + ' ' + p.path + ': +' + added + ' -' + removed + ' lines';
    box.appendChild(pre);
  }

  // Passes.
  var firingsPer = {}, fusionsPer = {};
  D.firings.forEach(function (f) { firingsPer[f.pass] = (firingsPer[f.pass] || 0) + 1; });
  D.fusions.forEach(function (f) { fusionsPer[f.pass] = (fusionsPer[f.pass] || 0) + 1; });
  var tb = document.querySelector('#pass-table tbody'), changed = 0, firstChanged = null;
  D.passes.forEach(function (p, k) {
    if (p.changed) changed++;
    var tr = row(tb, [k, p.path, p.changed ? 'changed' : '', (p.seconds * 1000).toFixed(2),
                      firingsPer[k] || '', fusionsPer[k] || ''], 'pass-row' + (p.changed ? ' changed' : ''));
    tr.addEventListener('click', function () { showDiff(k, tr); });
    if (p.changed && firstChanged === null) firstChanged = [k, tr];
  });
  if (firstChanged) showDiff(firstChanged[0], firstChanged[1]);
  $('n-passes').textContent = D.passes.length;
  $('n-passes-changed').textContent = changed;

  // Rule firings (the table shows the first 3000).
  var rb = document.querySelector('#rule-table tbody');
  D.firings.slice(0, 3000).forEach(function (f, i) {
    row(rb, [i, passName(f.pass), f.rule, f.file + ':' + f.line, el('pre', '', f.before), el('pre', '', f.after)]);
  });
  if (D.firings.length > 3000) $('rule-note').textContent = 'showing 3000 of ' + D.firings.length + ' firings';
  $('n-firings').textContent = D.firings.length;

  // Fusion decisions.
  var fb = document.querySelector('#fusion-table tbody'), made = 0, refused = 0;
  D.fusions.forEach(function (f, i) {
    if (f.fused) made++; else refused++;
    if (i >= 3000) return;
    var verdict = f.fused ? el('span', 'fused', 'fused') : f.record || f.reason.indexOf('cost model') < 0
        ? el('span', 'veto', 'vetoed') : el('span', 'slow', 'not profitable');
    var costs = f.fused || !f.reason || f.reason.indexOf('cost model') >= 0;
    row(fb, [i, passName(f.pass), f.producer, f.consumers, verdict, costs ? f.unfused_us.toFixed(3) : '',
             costs ? f.fused_us.toFixed(3) : '', costs ? f.benefit_us.toFixed(3) : '',
             f.record ? f.record + ' (' + f.file + ':' + f.line + ')' : '', f.reason]);
  });
  var fnote = [];
  if (D.fusions.length > 3000) fnote.push('showing 3000 of ' + D.fusions.length + ' decisions');
  if (D.dropped_fusion_events) fnote.push(D.dropped_fusion_events + ' further refusals not recorded');
  $('fusion-note').textContent = fnote.join('; ');
  $('n-fusions').textContent = made;
  $('n-vetoes').textContent = refused;

  // Fusion graph and the final fusions.
  if (D.graph_svg) {
    $('graph').innerHTML = D.graph_svg;
  } else {
    $('graph').appendChild(el('p', 'note', 'Graphviz (dot) was not found when the page was written; the graph in DOT form:'));
    $('graph').appendChild(el('pre', '', D.graph_dot));
  }
  var ff = document.querySelector('#final-fusions tbody');
  D.final_fusions.forEach(function (f) { row(ff, [f.name, f.kind, f.computation, f.ops]); });
  $('n-fusion-instructions').textContent = D.final_fusions.length;

  // Live ranges as bars over the entry's order.
  var NS = 'http://www.w3.org/2000/svg', lr = D.live_ranges, len = Math.max(1, D.schedule_length);
  var rowH = 14, labelW = 260, W = 900, H = lr.length * rowH + 20;
  var svg = document.createElementNS(NS, 'svg');
  svg.setAttribute('width', labelW + W + 120); svg.setAttribute('height', H);
  var maxBytes = 1;
  lr.forEach(function (b) { maxBytes = Math.max(maxBytes, b.bytes); });
  lr.forEach(function (b, i) {
    var y = 10 + i * rowH, t = document.createElementNS(NS, 'text');
    t.setAttribute('x', 2); t.setAttribute('y', y + 10); t.setAttribute('font-size', 10);
    t.textContent = b.name; svg.appendChild(t);
    var r = document.createElementNS(NS, 'rect');
    r.setAttribute('x', labelW + W * b.start / len); r.setAttribute('y', y + 2);
    r.setAttribute('width', Math.max(2, W * (b.end - b.start) / len)); r.setAttribute('height', rowH - 4);
    var shade = Math.round(200 - 150 * Math.sqrt(b.bytes / maxBytes));
    r.setAttribute('fill', 'rgb(' + shade + ',' + shade + ',255)');
    var tip = document.createElementNS(NS, 'title');
    tip.textContent = b.name + ' (' + b.op + '): ' + b.bytes + ' bytes, live ' + b.start + '..' + b.end +
        (b.allocation !== undefined ? ', allocation ' + b.allocation + ' at offset ' + b.offset : '');
    r.appendChild(tip); svg.appendChild(r);
    var s = document.createElementNS(NS, 'text');
    s.setAttribute('x', labelW + W + 4); s.setAttribute('y', y + 10); s.setAttribute('font-size', 10);
    s.textContent = b.bytes + ' B'; svg.appendChild(s);
  });
  $('live').appendChild(svg);
  $('n-buffers').textContent = lr.length;
  $('live-source').textContent = D.live_ranges_exact ?
      'the buffer assignment\'s live ranges over its flattened schedule (callees at their caller\'s place)' :
      'approximated over the entry\'s order (hloc opt does not assign buffers)';
  $('ba').textContent = D.buffer_assignment || '(no buffer assignment: hloc opt stops after the pipeline)';

  // Thunks: one per line "NNN: kKind ...".
  var thunks = (D.thunk_sequence.match(/^\s*\d+: k\w+/mg) || []).length;
  $('thunk-text').textContent = D.thunk_sequence || '(no thunk sequence: hloc opt stops after the pipeline)';
  $('n-thunks').textContent = thunks;
  showThunkTimes(D.thunk_times);

  // Per-thunk times of a bench run (thunk_times.json, joined by the thunk's number in the
  // sequence; a kind that differs means the times came from another compilation).
  function pad(s, n) { s = String(s); while (s.length < n) s = ' ' + s; return s; }
  function showThunkTimes(T) {
    if (!T) {
      $('thunk-times-source').textContent = D.thunk_sequence ? 'no per-thunk times (run `hloc run FILE --backend gpu ' +
          '--bench N --per-thunk --dump-to DIR` to add them)' : '';
      $('n-timed-thunks').textContent = 0;
      $('n-thunk-us-total').textContent = '-';
      return;
    }
    var byPos = {}, timed = 0, pre = $('thunk-text');
    T.thunks.forEach(function (t) { if (t.position > 0) byPos[t.position] = t; });
    pre.textContent = '';
    pre.appendChild(el('span', 'note', pad('us/call', 10) + pad('x floor', 9) + '  thunk\n'));
    D.thunk_sequence.split('\n').forEach(function (line) {
      var m = /^\s*(\d+): (k\w+)/.exec(line), t = m ? byPos[+m[1]] : null;
      if (t && t.kind === m[2]) {
        timed++;
        var x = t.floor_us > 0 ? t.us / t.floor_us : 0;
        var cell = el('span', x > 10 ? 'far' : 'time',
                      pad(t.us.toFixed(2), 10) + pad(x > 0 ? x.toFixed(1) + 'x' : '-', 9) + '  ');
        cell.title = t.name + (t.kernel ? ' (' + t.kernel + ')' : '') + ': ' + t.us.toFixed(3) + ' us per call, floor ' +
            t.floor_us.toFixed(3) + ' us, ' + t.runs + ' runs per call';
        pre.appendChild(cell);
      } else {
        pre.appendChild(document.createTextNode(pad('', 21)));
      }
      pre.appendChild(document.createTextNode(line + '\n'));
    });
    $('thunk-times-source').textContent = 'Per-thunk times from ' + T.file + ': device ' + T.device +
        (T.profile ? ' (profile ' + T.profile + ')' : '') + ', ' + T.calls + ' calls; x floor: the time over the ' +
        'thunk\'s argument bytes at the profile\'s bandwidth or its GEMM FLOPs at its peak.';
    $('n-timed-thunks').textContent = timed;
    $('n-thunk-us-total').textContent = T.total_us.toFixed(2);
    if (timed < T.thunks.length)
      $('thunk-times-mismatch').textContent = ' ' + (T.thunks.length - timed) + ' of ' + T.thunks.length +
          ' times match no thunk of this sequence (number or kind differs): they came from another compilation.';
  }
  document.body.setAttribute('data-ready', '1');
})();
</script></body></html>
)HTMLPAGE";

}  // namespace hloc
