// vx's pages: the task graph (vx graph) and a run's timeline (vx last --format html). The data is
// the JSON document in #vx-data, laid out by vx already; this script only draws it and lets one
// pan, zoom, search, filter and click for details. It loads nothing.
(function () {
  'use strict';
  var SVG = 'http://www.w3.org/2000/svg';
  var data = JSON.parse(document.getElementById('vx-data').textContent);
  var svg = document.getElementById('canvas');
  var stage = document.getElementById('stage');
  var details = document.getElementById('details');
  var search = document.getElementById('search');
  var matchesOut = document.getElementById('matches');
  var projectFilter = document.getElementById('project');
  var tagFilter = document.getElementById('tag');
  var items = [];      // what search and the filters act on: {id, el, project, tags, select}
  var byId = {};
  var selected = null;

  function svgEl(tag, attrs, parent) {
    var e = document.createElementNS(SVG, tag);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function html(tag, attrs, children) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'onclick') e.addEventListener('click', attrs[k]);
      else e.setAttribute(k, attrs[k]);
    }
    [].concat(children || []).forEach(function (c) {
      if (c === null || c === undefined) return;
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  }
  function ms(n) {
    if (n === null || n === undefined) return '–';
    if (n < 1000) return n + 'ms';
    if (n < 60000) return (n / 1000).toFixed(1) + 's';
    var m = Math.floor(n / 60000);
    return m + 'm' + Math.round((n % 60000) / 1000) + 's';
  }
  function pct(r) { return r === null || r === undefined ? '–' : Math.round(r * 1000) / 10 + '%'; }
  function code(s) { return html('code', {}, s); }
  function list(xs, render) {
    if (!xs || xs.length === 0) return '–';
    return html('ul', {}, xs.map(function (x) { return html('li', {}, render ? render(x) : x); }));
  }
  function link(id) {
    return html('a', { onclick: function () { select(byId[id], true); } }, id);
  }
  function row(dl, term, value) {
    dl.appendChild(html('dt', {}, term));
    dl.appendChild(html('dd', {}, value));
  }
  function short(h) { return h ? h.slice(0, 12) : '–'; }

  // Details: the panel that says everything about one item.
  function showDetails(title, fill) {
    details.textContent = '';
    details.appendChild(html('button', { 'class': 'close', title: 'close (Esc)', onclick: clearSelection }, '×'));
    details.appendChild(html('h2', {}, title));
    var dl = html('dl');
    details.appendChild(dl);
    fill(dl, details);
    details.hidden = false;
  }
  function clearSelection() {
    if (selected) selected.el.classList.remove('selected');
    if (selected && selected.unlit) selected.unlit();
    selected = null;
    details.hidden = true;
  }
  function select(item, center) {
    if (!item) return;
    if (selected) {
      selected.el.classList.remove('selected');
      if (selected.unlit) selected.unlit();
    }
    selected = item;
    item.el.classList.add('selected');
    item.select();
    if (center && view.center) view.center(item);
  }

  // Search and filters.
  var found = [], foundAt = -1;
  function shown(item) {
    var p = projectFilter.value.trim(), t = tagFilter.value;
    if (p && item.project !== p && item.project.toLowerCase().indexOf(p.toLowerCase()) < 0) return false;
    if (t && item.tags.indexOf(t) < 0) return false;
    return true;
  }
  function refresh() {
    var q = search.value.trim().toLowerCase();
    found = [];
    foundAt = -1;
    items.forEach(function (item) {
      var ok = shown(item);
      var hit = q !== '' && ok && item.id.toLowerCase().indexOf(q) >= 0;
      item.el.classList.toggle('filtered', !ok);
      item.el.classList.toggle('match', hit);
      item.el.classList.toggle('dim', ok && q !== '' && !hit);
      if (hit) found.push(item);
    });
    matchesOut.textContent = q === '' ? '' : found.length + (found.length === 1 ? ' match' : ' matches');
  }
  search.addEventListener('input', refresh);
  search.addEventListener('keydown', function (e) {
    if (e.key === 'Enter' && found.length > 0) {
      foundAt = (foundAt + 1) % found.length;
      select(found[foundAt], true);
    } else if (e.key === 'Escape') {
      search.value = '';
      refresh();
    }
  });
  projectFilter.addEventListener('input', refresh);
  tagFilter.addEventListener('change', refresh);
  document.addEventListener('keydown', function (e) {
    if (e.key === '/' && document.activeElement !== search) {
      e.preventDefault();
      search.focus();
    } else if (e.key === 'Escape' && document.activeElement !== search) {
      clearSelection();
    }
  });

  // Dragging pans; a press that did not move is a click.
  var drag = null, dragged = false;
  svg.addEventListener('pointerdown', function (e) {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY };
    dragged = false;
  });
  window.addEventListener('pointermove', function (e) {
    if (!drag) return;
    var dx = e.clientX - drag.x, dy = e.clientY - drag.y;
    if (!dragged && Math.abs(dx) + Math.abs(dy) < 4) return;
    dragged = true;
    svg.classList.add('dragging');
    view.pan(dx, dy);
    drag = { x: e.clientX, y: e.clientY };
  });
  window.addEventListener('pointerup', function () {
    drag = null;
    svg.classList.remove('dragging');
  });
  svg.addEventListener('click', function (e) {
    if (dragged) {
      e.stopPropagation();
      e.preventDefault();
      dragged = false;
    }
  }, true);
  svg.addEventListener('wheel', function (e) {
    e.preventDefault();
    var r = svg.getBoundingClientRect();
    view.zoom(Math.pow(1.0015, e.deltaY), (e.clientX - r.left) / r.width, (e.clientY - r.top) / r.height);
  }, { passive: false });
  document.getElementById('zoomin').addEventListener('click', function () { view.zoom(1 / 1.4, 0.5, 0.5); });
  document.getElementById('zoomout').addEventListener('click', function () { view.zoom(1.4, 0.5, 0.5); });
  document.getElementById('fit').addEventListener('click', function () { view.fit(); });

  // legend shows each entry's swatch: [text, fill, stroke], or [text, null, stroke, 'solid' or
  // 'dashed'] for a line standing for an edge style.
  function legend(entries) {
    var box = document.getElementById('legend');
    entries.forEach(function (e) {
      var attrs = { style: '--f:' + (e[1] || 'none') + ';--s:' + e[2] };
      if (e[3]) attrs['class'] = 'line ' + e[3];
      box.appendChild(html('span', attrs, e[0]));
    });
  }
  function fillTags(tags) {
    tags.forEach(function (t) { tagFilter.appendChild(html('option', { value: t }, t)); });
    tagFilter.hidden = tags.length === 0;
  }
  function fillProjects(names) {
    var dl = document.getElementById('projects');
    names.forEach(function (p) { dl.appendChild(html('option', { value: p })); });
  }

  var view;
  if (data.kind === 'graph') view = drawGraph(); else view = drawRun();
  refresh();
  view.fit();
  window.addEventListener('resize', function () { view.fit(); });
  document.body.setAttribute('data-ready', 'true');

  // ---- The task graph: boxes where vx laid them out, panned and zoomed through the viewBox.
  function drawGraph() {
    var g = data;
    var root = svgEl('g', {}, svg);
    var edgeLayer = svgEl('g', { 'class': 'edges' }, root);
    var nodeLayer = svgEl('g', { 'class': 'nodes' }, root);
    var defs = svgEl('defs', {}, svg);
    var marker = svgEl('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: '10', refY: '5', markerWidth: '7',
      markerHeight: '7', orient: 'auto-start-reverse' }, defs);
    svgEl('path', { d: 'M0,0 L10,5 L0,10 z', fill: '#9aa5b1' }, marker);
    var nodes = {}, dependents = {}, edgesOf = {};
    var maxP50 = 1, hits = 0, misses = 0, tags = {};
    var tagsOf = {};
    g.projects.forEach(function (p) { tagsOf[p.name] = p.tags || []; tagsOf[p.name].forEach(function (t) { tags[t] = true; }); });
    g.tasks.forEach(function (n) {
      nodes[n.id] = n;
      if (n.p50Ms) maxP50 = Math.max(maxP50, n.p50Ms);
      if (n.cache === 'hit') hits++; else misses++;
    });
    g.edges.forEach(function (e) {
      var a = nodes[e.from], b = nodes[e.to];
      (dependents[e.to] = dependents[e.to] || []).push(e.from);
      // From the dependent's left side to the dependency's right side, the arrow at the dependency.
      var x1 = a.x, y1 = a.y + a.h / 2, x2 = b.x + b.w, y2 = b.y + b.h / 2, dx = Math.max(30, (x1 - x2) / 2);
      var p = svgEl('path', { 'class': 'edge ' + (e.kind === '^' ? 'upstream' : 'dependsOn') + (e.critical ? ' critical' : ''),
        d: 'M' + x1 + ',' + y1 + ' C' + (x1 - dx) + ',' + y1 + ' ' + (x2 + dx) + ',' + y2 + ' ' + x2 + ',' + y2,
        'marker-end': 'url(#arrow)' }, edgeLayer);
      (edgesOf[e.from] = edgesOf[e.from] || []).push(p);
      (edgesOf[e.to] = edgesOf[e.to] || []).push(p);
    });
    g.tasks.forEach(function (n) {
      var cls = !n.cacheable ? 'nocache' : n.cache === 'hit' ? 'hit' : 'miss';
      var el = svgEl('g', { 'class': 'node ' + cls + (n.critical ? ' critical' : ''), 'data-id': n.id,
        transform: 'translate(' + n.x + ',' + n.y + ')' }, nodeLayer);
      svgEl('title', {}, el).textContent = n.id + ' — ' + n.command;
      svgEl('rect', { 'class': 'box', width: n.w, height: n.h, rx: 6 }, el);
      // vx shortens a long id in its project's name and keeps its #task whole.
      svgEl('text', { x: 8, y: 16 }, el).textContent = n.label || n.id;
      var sub = (n.p50Ms !== null ? 'p50 ' + ms(n.p50Ms) + ' · ' : '') + (n.cacheable ? n.cache : 'always runs');
      svgEl('text', { 'class': 'sub', x: 8, y: 31 }, el).textContent = sub;
      if (n.p50Ms) svgEl('rect', { 'class': 'p50', x: 0, y: n.h - 4, height: 4, rx: 2,
        width: Math.max(2, n.w * n.p50Ms / maxP50) }, el);
      var item = { id: n.id, el: el, project: n.project, tags: tagsOf[n.project] || [], node: n,
        select: function () { lit(n.id, true); showNode(n); }, unlit: function () { lit(n.id, false); } };
      el.addEventListener('click', function () { select(item, false); });
      items.push(item);
      byId[n.id] = item;
    });
    function lit(id, on) { (edgesOf[id] || []).forEach(function (p) { p.classList.toggle('lit', on); }); }

    function showNode(n) {
      showDetails(n.id, function (dl, box) {
        row(dl, 'command', code(n.command));
        row(dl, 'predicted', n.cacheable ? n.cache + (n.cache === 'hit' ? ' (restored from the cache)' : ' (it would run)') :
          'runs every time (' + (n.persistent ? 'persistent' : 'cache: false') + ')');
        row(dl, 'key', code(short(n.hash)));
        row(dl, 'inputs', n.inputs === null ? 'every file of the project git shows' : list(n.inputs, code));
        row(dl, 'outputs', list(n.outputs, code));
        row(dl, 'p50 / p99', ms(n.p50Ms) + ' / ' + ms(n.p99Ms));
        row(dl, 'hit rate', pct(n.hitRate) + (n.executions ? ' of ' + n.executions + ' runs' : ''));
        row(dl, 'last status', n.lastStatus || 'never ran');
        if (n.affected) row(dl, 'affected', n.affected);
        row(dl, 'depends on', list(n.dependsOn, link));
        row(dl, 'dependents', list((dependents[n.id] || []).slice().sort(), link));
        if (n.critical) row(dl, 'critical path', 'yes: it is on the chain predicted to end last');
        if (n.why) box.appendChild(whyBox(n.why));
      });
    }
    function whyBox(w) {
      var box = html('div', { 'class': 'why' }, [html('h3', {}, 'Why it would miss'), html('p', {}, w.reason)]);
      var dl = html('dl');
      box.appendChild(dl);
      if (w.previousRunId) row(dl, 'against', 'run ' + w.previousRunId + ' (key ' + short(w.previousHash) + ')');
      var f = w.diff.files;
      if (f.added.length) row(dl, 'added', list(f.added, code));
      if (f.removed.length) row(dl, 'removed', list(f.removed, code));
      if (f.modified.length) row(dl, 'modified', list(f.modified, code));
      if (w.diff.command) row(dl, 'command', [code(w.diff.command.before), ' → ', code(w.diff.command.after)]);
      if (w.diff.env.length) row(dl, 'env', list(w.diff.env, code));
      if (w.diff.packages.length) row(dl, 'packages', list(w.diff.packages, function (p) {
        return p.name + ': ' + (p.before || '(none)') + ' → ' + (p.after || '(none)');
      }));
      var gl = w.diff.global;
      var global = gl.added.concat(gl.removed, gl.modified);
      if (global.length) row(dl, 'global inputs', list(global, code));
      if (w.diff.upstream.length) row(dl, 'upstream', list(w.diff.upstream, function (u) { return link(u.taskId); }));
      if (w.roots.length) row(dl, 'roots', list(w.roots, function (r) {
        var moved = r.files.added.concat(r.files.removed, r.files.modified);
        return [link(r.taskId), moved.length ? ': ' + moved.join(', ') : ''];
      }));
      return box;
    }

    var summary = document.getElementById('summary');
    summary.textContent = g.tasks.length + ' tasks · ' + hits + ' would hit · ' + misses + ' would run · predicted wall ' +
      ms(g.wallMs) + ' on ' + g.workers + ' workers · critical path ' + g.criticalPath.length + ' tasks';
    legend([['would hit', 'var(--hit)', 'var(--hit-stroke)'], ['would run', 'var(--miss)', 'var(--miss-stroke)'],
      ['never cached', 'var(--nocache)', 'var(--nocache-stroke)'], ['critical path', '#fff', 'var(--critical)'],
      ['p50 (bar)', 'var(--ink)', 'var(--ink)'], ['needs a task of another project (^)', null, '#9aa5b1', 'solid'],
      ['needs a task of its own project', null, '#9aa5b1', 'dashed']]);
    fillTags(Object.keys(tags).sort());
    fillProjects(g.projects.map(function (p) { return p.name; }));

    var box = { x: 0, y: 0, w: Math.max(1, g.width), h: Math.max(1, g.height) };
    function apply() {
      svg.setAttribute('viewBox', box.x + ' ' + box.y + ' ' + box.w + ' ' + box.h);
      var scale = svg.clientWidth / box.w;
      svg.classList.toggle('far', scale < 0.35);
    }
    return {
      fit: function () {
        var r = svg.getBoundingClientRect(), aspect = (r.height || 1) / (r.width || 1);
        var w = Math.max(g.width, g.height / aspect, 1);
        box = { x: (g.width - w) / 2, y: (g.height - w * aspect) / 2, w: w, h: w * aspect };
        apply();
      },
      pan: function (dx, dy) {
        var s = box.w / (svg.clientWidth || 1);
        box.x -= dx * s;
        box.y -= dy * s;
        apply();
      },
      zoom: function (f, fx, fy) {
        var nw = Math.min(Math.max(box.w * f, 60), Math.max(g.width, g.height) * 8);
        var k = nw / box.w;
        box.x += (box.w - nw) * fx;
        box.y += (box.h - box.h * k) * fy;
        box.w = nw;
        box.h = box.h * k;
        apply();
      },
      center: function (item) {
        var n = item.node, w = Math.min(box.w, 1400), k = w / box.w;
        box = { x: n.x + n.w / 2 - w / 2, y: n.y + n.h / 2 - box.h * k / 2, w: w, h: box.h * k };
        apply();
      }
    };
  }

  // ---- A run: a bar per task on the lane it ran on; the wheel zooms time, a drag pans it.
  function drawRun() {
    var r = data;
    var rowH = 26, axisH = 24, labelW = 64;
    var lanes = r.lanes, notRun = r.tasks.some(function (t) { return t.lane < 0; });
    var rows = lanes + (notRun ? 1 : 0);
    var height = axisH + rows * rowH + 8;
    stage.classList.add('scroll');
    svg.style.height = height + 'px';
    var defs = svgEl('defs', {}, svg);
    var hatch = svgEl('pattern', { id: 'hatch', width: 6, height: 6, patternUnits: 'userSpaceOnUse',
      patternTransform: 'rotate(45)' }, defs);
    svgEl('rect', { width: 6, height: 6, fill: '#d8f0da' }, hatch);
    svgEl('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: '#2e7d32', 'stroke-width': 2 }, hatch);
    var clip = svgEl('rect', { x: labelW, y: 0, width: 1, height: height }, svgEl('clipPath', { id: 'plot' }, defs));
    var axis = svgEl('g', { 'class': 'axis', 'clip-path': 'url(#plot)' }, svg);
    var barLayer = svgEl('g', { 'clip-path': 'url(#plot)' }, svg);
    for (var l = 0; l < rows; l++) {
      svgEl('text', { 'class': 'lanelabel', x: 4, y: axisH + l * rowH + 17 }, svg).textContent =
        l < lanes ? 'lane ' + (l + 1) : 'not run';
    }
    var span = Math.max(r.spanMs, 1);
    var t0 = 0, t1 = span;
    var failed = [];
    r.tasks.forEach(function (t) {
      var laneRow = t.lane < 0 ? lanes : t.lane;
      var el = svgEl('rect', { 'class': 'bar ' + t.status + (t.critical ? ' critical' : ''), 'data-id': t.taskId,
        y: axisH + laneRow * rowH + 3, height: rowH - 6, rx: 3 }, barLayer);
      svgEl('title', {}, el).textContent = t.taskId + ' — ' + t.status + ' ' + ms(t.durationMs);
      var text = svgEl('text', { 'class': 'barlabel', y: axisH + laneRow * rowH + 17 }, barLayer);
      text.textContent = t.taskId;
      var project = t.taskId.split('#')[0];
      var item = { id: t.taskId, el: el, project: project, tags: [], bar: t, text: text,
        select: function () { showBar(t); } };
      el.addEventListener('click', function () { select(item, false); });
      items.push(item);
      byId[t.taskId] = item;
      if (t.status === 'failed' || t.status === 'timedOut') failed.push(t.taskId);
    });

    function showBar(t) {
      showDetails(t.taskId, function (dl, box) {
        row(dl, 'status', t.status + (t.cacheSource ? ' (' + t.cacheSource + ' cache, saved ' + ms(t.savedMs) + ')' : ''));
        row(dl, 'command', t.command ? code(t.command) : '(not kept)');
        row(dl, 'started', '+' + ms(t.startMs) + (t.lane >= 0 ? ' on lane ' + (t.lane + 1) : ''));
        row(dl, 'duration', ms(t.durationMs) + (t.waitedMs ? ' (waited ' + ms(t.waitedMs) + ' for another vx)' : ''));
        row(dl, 'key', code(short(t.hash)));
        if (t.exitCode !== null) row(dl, 'exit code', String(t.exitCode));
        if (t.blockedBy) row(dl, 'blocked by', link(t.blockedBy));
        if (t.notReady.length) row(dl, 'waited for', list(t.notReady, link));
        if (t.peakRssBytes) row(dl, 'peak RSS', Math.round(t.peakRssBytes / 1048576) + ' MiB');
        row(dl, 'depends on', list(t.dependsOn, link));
        if (t.critical) row(dl, 'critical path', 'yes: on the chain that ended last');
        if (t.sandboxViolations.length) row(dl, 'sandbox', list(t.sandboxViolations));
        if (t.log) {
          box.appendChild(html('h3', {}, 'Log' + (t.log.omittedBytes ? ' (excerpt: ' + t.log.omittedBytes + ' bytes cut)' : '')));
          box.appendChild(html('pre', { 'class': 'log' }, t.log.output || '(it printed nothing)'));
          box.appendChild(html('p', {}, ['Whole log: ', code('vx last --log ' + t.taskId + ' --run ' + r.runId + ' --full')]));
        }
      });
    }

    var summary = document.getElementById('summary');
    var tt = r.totals;
    summary.textContent = 'run ' + r.runId + ' ' + r.status + ' · ' + tt.tasks + ' tasks · ' + tt.hits + ' hit · ' +
      tt.misses + ' ran · ' + tt.failed + ' failed' + (tt.blocked ? ' · ' + tt.blocked + ' blocked' : '') + ' · wall ' +
      ms(tt.wallMs) + ' on ' + lanes + ' lanes';
    if (failed.length) {
      summary.appendChild(document.createTextNode(' · failures: '));
      failed.slice(0, 10).forEach(function (id, i) {
        if (i) summary.appendChild(document.createTextNode(', '));
        summary.appendChild(html('a', { onclick: function () { select(byId[id], true); } }, id));
      });
      if (failed.length > 10) summary.appendChild(document.createTextNode(' …'));
    }
    legend([['ran', 'var(--ran)', 'var(--ran-stroke)'], ['hit', 'var(--hit)', 'var(--hit-stroke)'],
      ['failed', 'var(--failed)', 'var(--failed-stroke)'], ['not run', 'var(--cancelled)', 'var(--nocache-stroke)'],
      ['critical path', '#fff', 'var(--critical)']]);
    fillTags([]);
    fillProjects(Object.keys(items.reduce(function (o, i) { o[i.project] = true; return o; }, {})).sort());

    function niceStep(rangeMs, px) {
      var target = rangeMs / Math.max(px / 110, 1), steps = [1, 2, 5];
      for (var p = 1; ; p *= 10) {
        for (var i = 0; i < steps.length; i++) if (steps[i] * p >= target) return steps[i] * p;
      }
    }
    function apply() {
      var width = svg.clientWidth || 1000, plot = Math.max(width - labelW - 8, 50), k = plot / (t1 - t0);
      clip.setAttribute('width', plot + 8);
      items.forEach(function (item) {
        var t = item.bar, x = labelW + (t.startMs - t0) * k, w = Math.max(t.durationMs * k, 3);
        item.el.setAttribute('x', x);
        item.el.setAttribute('width', w);
        item.text.setAttribute('x', x + 4);
        item.text.style.display = w > 8 * Math.min(t.taskId.length, 40) ? '' : 'none';
      });
      axis.textContent = '';
      var step = niceStep(t1 - t0, plot);
      for (var s = Math.ceil(t0 / step) * step; s <= t1; s += step) {
        var x = labelW + (s - t0) * k;
        svgEl('line', { x1: x, x2: x, y1: axisH - 4, y2: height }, axis);
        svgEl('text', { x: x + 3, y: 14 }, axis).textContent = ms(Math.round(s));
      }
    }
    function clamp() {
      var w = Math.min(Math.max(t1 - t0, 1), span * 1.05);
      if (t0 < -span * 0.02) t0 = -span * 0.02;
      t1 = t0 + w;
      if (t1 > span * 1.03) { t1 = span * 1.03; t0 = t1 - w; }
    }
    return {
      fit: function () { t0 = 0; t1 = span; apply(); },
      pan: function (dx) {
        var plot = Math.max((svg.clientWidth || 1000) - labelW - 8, 50);
        var d = dx * (t1 - t0) / plot;
        t0 -= d; t1 -= d;
        clamp();
        apply();
      },
      zoom: function (f, fx) {
        var plot = Math.max((svg.clientWidth || 1000) - labelW - 8, 50);
        var at = t0 + (t1 - t0) * Math.max(0, (fx * (svg.clientWidth || 1000) - labelW) / plot);
        t0 = at - (at - t0) * f;
        t1 = at + (t1 - at) * f;
        clamp();
        apply();
      },
      center: function (item) {
        var t = item.bar, w = Math.min(t1 - t0, Math.max(t.durationMs * 6, span / 50));
        t0 = t.startMs + t.durationMs / 2 - w / 2;
        t1 = t0 + w;
        clamp();
        apply();
        var y = axisH + (t.lane < 0 ? lanes : t.lane) * rowH;
        if (y < stage.scrollTop || y > stage.scrollTop + stage.clientHeight - rowH) stage.scrollTop = y - stage.clientHeight / 2;
      }
    };
  }
})();
