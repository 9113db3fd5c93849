// gmon report: draws the profile embedded in this page (spec/report.md). Everything runs from
// the data element below; nothing is fetched (the page's content security policy forbids it).
"use strict";
(function () {
  const scriptStart = performance.now();
  // What went wrong while the page ran, for the tests' hook and for the reader.
  const problems = { errors: [], violations: [] };
  window.addEventListener("error", (e) => problems.errors.push(String(e.message)));
  window.addEventListener("unhandledrejection", (e) => problems.errors.push(String(e.reason)));
  document.addEventListener("securitypolicyviolation", (e) =>
    problems.violations.push(e.violatedDirective + " " + e.blockedURI));
  const consoleError = console.error.bind(console);
  console.error = function (...args) { problems.errors.push(args.map(String).join(" ")); consoleError(...args); };

  const $ = (id) => document.getElementById(id);
  const D = JSON.parse($("gmon-data").textContent);
  if (D.v !== 2) throw new Error("this page cannot read report data version " + D.v);
  const F = D.fn, NF = F.name.length, META = D.meta;
  // A differential report (gmon report --diff) and a process tree change the table, the
  // colours and the header; everything else is the same page.
  const DIFF = D.kind === "diff" ? D.diff : null, X = DIFF ? DIFF.fn : null;
  // A process tree's executables: a comparison's pairs (and those one side ran), or a profile's.
  const TREE = (DIFF && DIFF.tree) || META.tree || [];
  const TOTAL = Math.max(1, META.samples);
  const fmt = (n) => n.toLocaleString("en-US");
  const pct = (n) => (100 * n / TOTAL).toFixed(n * 1000 < TOTAL && n > 0 ? 3 : 1) + "%";
  const el = (tag, attrs, ...kids) => {
    const e = document.createElement(tag);
    for (const k in attrs || {}) {
      if (k === "text") e.textContent = attrs[k]; else if (k === "cls") e.className = attrs[k]; else e.setAttribute(k, attrs[k]);
    }
    for (const c of kids) e.append(c);
    return e;
  };
  const source = (i) => F.file[i] >= 0 ? D.files[F.file[i]] + (F.line[i] ? ":" + F.line[i] : "") : "";
  // A pattern typed in a search box: /regex/ or a case-insensitive substring.
  const matcher = (text) => {
    const t = text.trim();
    if (!t) return null;
    const m = /^\/(.+)\/([a-z]*)$/.exec(t);
    if (m) { try { const re = new RegExp(m[1], m[2]); return (s) => re.test(s); } catch (_) { return () => false; } }
    const low = t.toLowerCase();
    return (s) => s.toLowerCase().includes(low);
  };

  // ---- header ----
  const VERDICTS = ["change", "noise", "too few"];
  // A function of an executable only one side ran is not compared: it says which side.
  const verdict = (i) => X.vd[i] < 0 ? (X.st[i] === "added" ? "NEW only" : X.st[i] === "removed" ? "BASE only" : "\u2014") : VERDICTS[X.vd[i]] + (X.vd[i] === 0 && X.cc[i] ? " (calls)" : "");
  const points = (x) => (x >= 0 ? "+" : "\u2212") + Math.abs(100 * x).toFixed(2);
  const share = (x) => (100 * x).toFixed(2) + "%";
  function diffHeader(h) {
    const H = DIFF.head;
    h.replaceChildren(el("h1", { text: "Comparison: " + META.program }));
    const facts = el("dl", { cls: "facts" });
    const fact = (k, v) => facts.append(el("dt", { text: k }), el("dd", { text: String(v) }));
    fact("Base", H.base.join(", ") + " \u2014 " + fmt(H.base_samples) + " samples");
    fact("New", H.new.join(", ") + " \u2014 " + fmt(H.new_samples) + " samples");
    fact("Compared", H.granularity === "function" ? "per function (" + META.stacks + " stacks)" : "per address range (no executable)");
    fact("Noise model", H.model === "sampling" ? "sampling noise: one profile a side, binomial counts" +
        (H.dispersion > 1 ? ", times a run-to-run dispersion of " + H.dispersion + " assumed (one profile cannot measure it)" : "")
      : "run-to-run: several profiles a side, sampling noise times the measured spread between runs (dispersion " + H.dispersion.toFixed(2) + ")" +
        (H.jitter > 0 ? ", plus a per-run jitter of each function's own time (" + (100 * H.jitter).toFixed(1) + "%)" : ""));
    const pairs = TREE.filter((e) => e.matched_by).length;
    fact("Tests", fmt(H.tested) + " functions tested at level " + H.level + " over all of them, " +
      (TREE.length ? "Holm's correction over the functions of all " + pairs + " executables both sides ran together" : H.correction === "holm" ? "Holm's correction" : H.correction) +
      "; fewer than " + H.min_samples + " samples in both sides together: too few to tell");
    fact("Verdicts", fmt(H.changes) + " change" + (H.changes === 1 ? "" : "s") + ", " + fmt(H.noise) + " within noise, " + fmt(H.too_few) + " too few samples");
    fact("Shares", H.normalized ? "the totals differ: changes are of each function's share of its side's samples" : "the totals are equal");
    fact("Flame graph", H.colours);
    h.append(facts);
    if (TREE.length) h.append(diffTreeTable());
    if (META.notes.length) {
      h.append(el("h3", { text: "Notes" }));
      const ul = el("ul", { cls: "notes" });
      for (const s of META.notes) ul.append(el("li", { text: s }));
      h.append(ul);
    }
  }
  function treeTable() {
    const t = el("table", { cls: "calls", id: "process-tree" });
    t.append(el("caption", { cls: "muted", text: "Process tree: " + TREE.length + " executables, a root frame each in the graph" }));
    t.append(el("tr", {}, el("th", { text: "Root frame" }), el("th", { text: "Executable" }), el("th", { cls: "num", text: "Processes" }),
      el("th", { cls: "num", text: "Threads" }), el("th", { cls: "num", text: "Samples" }), el("th", { cls: "num", text: "%" })));
    for (const e of TREE) {
      t.append(el("tr", { "data-f": String(e.f) }, el("td", {}, fnButton(e.f)), el("td", { cls: "mono", text: e.exe }), el("td", { cls: "num", text: fmt(e.processes) }),
        el("td", { cls: "num", text: fmt(e.threads) }), el("td", { cls: "num", text: fmt(e.samples) }), el("td", { cls: "num", text: pct(e.samples) })));
    }
    return t;
  }
  // Two process trees: each executable, how it was paired and what its comparison found.
  function diffTreeTable() {
    const t = el("table", { cls: "calls", id: "process-tree" });
    t.append(el("caption", { cls: "muted", text: "Process trees: " + TREE.length + " executables, a root frame each in the graph" }));
    t.append(el("tr", {}, el("th", { text: "Root frame" }), el("th", { text: "Base executable" }), el("th", { text: "New executable" }), el("th", { text: "Paired by" }),
      el("th", { cls: "num", text: "Base samples" }), el("th", { cls: "num", text: "New samples" }), el("th", { text: "Verdicts" })));
    for (const e of TREE) {
      const found = !e.matched_by ? "not compared: only in " + (e.new_exe ? "NEW" : "BASE")
        : fmt(e.tested) + " tested at " + e.level.toPrecision(3) + ": " + fmt(e.changes) + " change" + (e.changes === 1 ? "" : "s") + ", " + fmt(e.noise) + " within noise, " + fmt(e.too_few) + " too few";
      t.append(el("tr", { "data-f": String(e.f) }, el("td", {}, fnButton(e.f)), el("td", { cls: "mono", text: e.base_exe || "\u2014" }), el("td", { cls: "mono", text: e.new_exe || "\u2014" }),
        el("td", { text: e.matched_by ? e.matched_by.replace("-", " ") : "\u2014" }), el("td", { cls: "num", text: fmt(e.base_samples) }), el("td", { cls: "num", text: fmt(e.new_samples) }), el("td", { text: found })));
    }
    return t;
  }
  function header() {
    const h = $("summary");
    if (DIFF) { diffHeader(h); return; }
    h.replaceChildren(el("h1", { text: META.program }));
    const facts = el("dl", { cls: "facts" });
    const fact = (k, v) => { if (v !== null && v !== undefined && v !== "") facts.append(el("dt", { text: k }), el("dd", { text: String(v) })); };
    fact("Build id", META.build_id || "none");
    fact("Profiles", META.profiles.join(", "));
    fact("Written", META.when);
    fact("Samples", fmt(META.samples) + (META.rate ? " at " + fmt(META.rate) + " Hz = " + (META.samples / META.rate).toFixed(2) + " s of CPU time" : ""));
    fact("Stacks", META.stacks === "exact" ? "exact: sampled by the runtime" : "estimated from call counts (gmon.out has no stacks)");
    fact("Call counts", META.has_calls ? "exact (counted by -pg's mcount)" : "not counted (the runtime samples stacks, not calls)");
    fact("Functions", fmt(NF) + " listed, " + fmt(D.arcs.from.length) + " arcs");
    h.append(facts);
    if (TREE.length) h.append(treeTable());
    if (META.processes.length) {
      const t = el("table", { cls: "calls" });
      t.append(el("caption", { cls: "muted", text: "Recorded executables (gmon record)" }));
      t.append(el("tr", {}, el("th", { text: "Executable" }), el("th", { text: "Profile" }), el("th", { cls: "num", text: "First pid" }),
        el("th", { cls: "num", text: "Processes" }), el("th", { cls: "num", text: "Threads" }), el("th", { cls: "num", text: "Samples" }), el("th", { cls: "num", text: "Dropped" }), el("th", { text: "Clock" })));
      for (const p of META.processes) {
        t.append(el("tr", {}, el("td", { cls: "mono", text: p.exe }), el("td", { cls: "mono", text: p.profile }), el("td", { cls: "num", text: String(p.pid) }),
          el("td", { cls: "num", text: fmt(p.processes) }), el("td", { cls: "num", text: fmt(p.threads) }), el("td", { cls: "num", text: fmt(p.samples) }), el("td", { cls: "num", text: fmt(p.dropped) }), el("td", { text: p.clock })));
      }
      h.append(t);
    }
    const said = META.dropped.concat(META.notes);
    if (said.length) {
      h.append(el("h3", { text: "Not shown, and notes" }));
      const ul = el("ul", { cls: "notes" });
      for (const s of said) ul.append(el("li", { text: s }));
      h.append(ul);
    }
  }

  // ---- state ----
  let selected = -1;           // selected function
  const listeners = [];
  function select(f, from) {
    if (f < 0 || f >= NF) return;
    selected = f;
    for (const l of listeners) l(f, from);
  }

  // ---- flame / icicle graph (canvas, drawn on demand) ----
  const FL = D.flame, N = FL.f.length + 1;
  const par = new Int32Array(N), fnOf = new Int32Array(N), val = new Float64Array(N), depth = new Int32Array(N), end = new Int32Array(N);
  par[0] = -1; fnOf[0] = -1;
  for (let i = 1; i < N; i++) {
    par[i] = FL.parent[i - 1]; fnOf[i] = FL.f[i - 1]; val[i] = FL.v[i - 1];
    if (par[i] === 0) val[0] += val[i];
    depth[i] = depth[par[i]] + 1;
  }
  for (let i = 0; i < N; i++) end[i] = i + 1;
  for (let i = N - 1; i >= 1; i--) if (end[i] > end[par[i]]) end[par[i]] = end[i];
  const canvas = $("flame"), ctx = canvas.getContext("2d");
  const ROW = 18, FONT = "12px ui-monospace, Menlo, Consolas, monospace";
  const encoder = new TextEncoder();
  const colours = new Array(NF);
  // gmon flame's colours (its default palette "hot", hashed by name so the same function has
  // the same colour in every graph): the name's first characters weighted, forwards for green,
  // backwards for red and blue.
  function namehash(bytes, backwards) {
    const n = bytes.length, at = (k) => backwards ? bytes[n - 1 - k] : bytes[k];
    const f32 = Math.fround, SEVENTY = f32(0.7);
    let vec = 0, weight = 1, max = 1, mod = 10;
    const update = (c) => {
      vec = f32(vec + f32(f32((c % mod) / (mod - 1)) * weight));
      mod += 1; max = f32(max + weight); weight = f32(weight * SEVENTY);
    };
    if (n === 0) return 1;
    update(at(0));
    let k = 1, module = false;
    for (; k < 3 && k < n; k++) { if (at(k) === 96) { module = true; k++; break; } update(at(k)); }
    if (!module) for (; k < n; k++) if (at(k) === 96) { module = true; k++; break; }
    if (module) { vec = 0; weight = 1; max = 1; mod = 10; for (let j = 0; j < 3 && k < n; j++, k++) update(at(k)); }
    return f32(1 - f32(vec / max));
  }
  function colour(f) {
    if (colours[f]) return colours[f];
    const b = encoder.encode(F.name[f].replace(/;/g, ","));
    const v1 = namehash(b, false), v2 = namehash(b, true);
    const r = 205 + Math.min(255, Math.trunc(Math.fround(50 * v2))), g = Math.min(255, Math.trunc(Math.fround(230 * v1))), bl = Math.min(255, Math.trunc(Math.fround(55 * v2)));
    return (colours[f] = "rgb(" + r + "," + g + "," + bl + ")");
  }
  // A differential graph's frames carry their own colour (gmon flame --diff's); otherwise the
  // function's name decides it.
  const fill = (i) => FL.c ? DIFF.palette[FL.c[i - 1]] : colour(fnOf[i]);
  const G = { icicle: false, zoom: 0, focus: -1, match: null, rects: null, matched: 0, matchedSamples: 0 };
  function draw() {
    const dpr = window.devicePixelRatio || 1;
    const W = canvas.clientWidth || 1000;
    // Depth of what is drawn: the zoomed frame's ancestors and its subtree.
    let maxD = depth[G.zoom];
    const minW = 0.3 / W;
    const x = new Float64Array(N), cursor = new Float64Array(N);
    const zv = val[G.zoom] || 1;
    const rx = [], rw = [], rn = [];
    // Ancestors at full width.
    for (let a = par[G.zoom]; a >= 0; a = par[a]) { rx.push(0); rw.push(1); rn.push(a); }
    rx.push(0); rw.push(1); rn.push(G.zoom);
    cursor[G.zoom] = 0;
    for (let i = G.zoom + 1; i < end[G.zoom];) {
      const p = par[i], w = val[i] / zv;
      x[i] = cursor[p]; cursor[p] += w;
      if (w < minW) { i = end[i]; continue; }
      cursor[i] = x[i];
      rx.push(x[i]); rw.push(w); rn.push(i);
      if (depth[i] > maxD) maxD = depth[i];
      i++;
    }
    const H = (maxD + 1) * ROW;
    canvas.style.height = H + "px";
    canvas.width = Math.round(W * dpr); canvas.height = Math.round(H * dpr);
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, W, H);
    ctx.font = FONT; ctx.textBaseline = "middle";
    const charW = ctx.measureText("m").width || 7;
    let matched = 0, matchedSamples = 0;
    const counted = new Uint8Array(N);
    for (let k = 0; k < rn.length; k++) {
      const i = rn[k], d = depth[i];
      const px = rx[k] * W, pw = Math.max(rw[k] * W - 1, 0.5);
      const y = G.icicle ? d * ROW : H - (d + 1) * ROW;
      const f = fnOf[i];
      const name = i === 0 ? "all" : F.name[f];
      const isMatch = i > 0 && G.match && G.match(name);
      const below = k < depth[G.zoom];
      ctx.fillStyle = isMatch ? "rgb(230,0,230)" : i === 0 ? "rgb(220,220,220)" : fill(i);
      ctx.globalAlpha = below ? 0.5 : 1;
      ctx.fillRect(px, y + 1, pw, ROW - 2);
      ctx.globalAlpha = 1;
      if (isMatch) {
        matched++;
        // Samples of matching frames, each stack counted once: a match below another match
        // adds nothing.
        let a = par[i], inside = false;
        for (; a > 0; a = par[a]) if (counted[a]) { inside = true; break; }
        counted[i] = 1;
        if (!inside) matchedSamples += val[i];
      }
      const isSel = f >= 0 && f === selected;
      if (isSel || i === G.focus) {
        ctx.lineWidth = 2; ctx.strokeStyle = "#000";
        if (i === G.focus) ctx.setLineDash([4, 2]);
        ctx.strokeRect(px + 1, y + 2, Math.max(pw - 2, 1), ROW - 4);
        ctx.setLineDash([]);
      }
      const mark = (isSel ? "\u25B6" : "") + (isMatch ? "\u25C6" : "");
      const label = (mark ? mark + " " : "") + name;
      const fits = Math.floor((pw - 6) / charW);
      if (fits >= 3) {
        ctx.fillStyle = "#000";
        ctx.fillText(fits >= label.length ? label : label.slice(0, fits - 2) + "..", px + 3, y + ROW / 2);
      }
    }
    G.rects = { rx, rw, rn, W, H };
    G.matched = matched; G.matchedSamples = matchedSamples;
    $("search-status").textContent = G.match ? matched + " frames match, " + pct(matchedSamples) + " of the samples" : "";
  }
  function frameAt(clientX, clientY) {
    const r = canvas.getBoundingClientRect(), R = G.rects;
    if (!R) return -1;
    const px = clientX - r.left, py = clientY - r.top;
    const d = G.icicle ? Math.floor(py / ROW) : Math.floor((R.H - py) / ROW);
    for (let k = 0; k < R.rn.length; k++) {
      const i = R.rn[k];
      if (depth[i] === d && px >= R.rx[k] * R.W && px < (R.rx[k] + R.rw[k]) * R.W) return i;
    }
    return -1;
  }
  function describe(i) {
    if (i < 0) return "\u00a0";
    const name = i === 0 ? "all" : F.name[fnOf[i]];
    // A comparison also says the function's verdict (the frame's colour is its stack's).
    const judged = DIFF && i > 0 && X.vd[fnOf[i]] >= 0
      ? " \u2014 function: " + verdict(fnOf[i]) + ", " + share(X.sb[fnOf[i]]) + " \u2192 " + share(X.sn[fnOf[i]]) : "";
    return name + " \u2014 " + fmt(val[i]) + " samples (" + pct(val[i]) + ")" + judged + (i > 0 && source(fnOf[i]) ? " \u2014 " + source(fnOf[i]) : "");
  }
  function zoomTo(i) {
    G.zoom = i; G.focus = i;
    if (i > 0) select(fnOf[i], "graph"); else draw();
    $("frame-info").textContent = describe(i);
  }
  canvas.addEventListener("click", (e) => { const i = frameAt(e.clientX, e.clientY); if (i >= 0) zoomTo(i); });
  canvas.addEventListener("mousemove", (e) => { $("frame-info").textContent = describe(frameAt(e.clientX, e.clientY)); });
  canvas.addEventListener("keydown", (e) => {
    let i = G.focus < 0 ? G.zoom : G.focus;
    const up = G.icicle ? "ArrowDown" : "ArrowUp", down = G.icicle ? "ArrowUp" : "ArrowDown";
    if (e.key === up) {
      // Into the widest child.
      let best = -1;
      for (let c = i + 1; c < end[i]; c = end[c]) if (best < 0 || val[c] > val[best]) best = c;
      if (best >= 0) i = best;
    } else if (e.key === down) { if (par[i] >= 0) i = par[i]; }
    else if (e.key === "ArrowRight" || e.key === "ArrowLeft") {
      const p = par[i];
      if (p >= 0) {
        const sibs = [];
        for (let c = p + 1; c < end[p]; c = end[c]) sibs.push(c);
        const k = sibs.indexOf(i) + (e.key === "ArrowRight" ? 1 : -1);
        if (k >= 0 && k < sibs.length) i = sibs[k];
      }
    } else if (e.key === "Enter" || e.key === " ") { zoomTo(i); e.preventDefault(); return; }
    else if (e.key === "Escape") { zoomTo(0); return; }
    else return;
    e.preventDefault();
    G.focus = i; draw();
    $("frame-info").textContent = describe(i);
  });
  const setView = (icicle) => {
    G.icicle = icicle;
    $("view-flame").setAttribute("aria-pressed", String(!icicle));
    $("view-icicle").setAttribute("aria-pressed", String(icicle));
    $("graph-title").textContent = icicle ? "Icicle graph" : "Flame graph";
    draw();
  };
  $("view-flame").addEventListener("click", () => setView(false));
  $("view-icicle").addEventListener("click", () => setView(true));
  $("reset-zoom").addEventListener("click", () => zoomTo(0));
  $("search").addEventListener("input", (e) => { G.match = matcher(e.target.value); draw(); });
  listeners.push(() => draw());

  // ---- the function table (virtual: only the rows in view exist) ----
  const exeCol = { key: "exe", title: "Executable", width: "minmax(5em, 9em)", get: (i) => TREE[F.exe[i]].root, text: (i) => TREE[F.exe[i]].root };
  const DIFF_COLS = [
    { key: "name", title: "Function", width: "minmax(10em, 1fr)", get: (i) => F.name[i], text: (i) => F.name[i] },
    { key: "sb", title: "Base %", num: true, width: "5.5em", get: (i) => X.sb[i], text: (i) => share(X.sb[i]) },
    { key: "sn", title: "New %", num: true, width: "5.5em", get: (i) => X.sn[i], text: (i) => share(X.sn[i]) },
    { key: "ds", title: "Change, interval (pts)", num: true, width: "15em", get: (i) => X.ds[i],
      text: (i) => X.vd[i] < 0 ? "\u2014" : points(X.ds[i]) + " [" + points(X.lo[i]) + ", " + points(X.hi[i]) + "]" },
    { key: "verdict", title: "Verdict", width: "7em", verdict: true, get: (i) => X.vd[i] < 0 ? 9 : X.vd[i], text: verdict },
    { key: "cb", title: "Calls base", num: true, width: "6em", get: (i) => X.cb[i], text: (i) => fmt(X.cb[i]) },
    { key: "cn", title: "Calls new", num: true, width: "6em", get: (i) => X.cn[i], text: (i) => fmt(X.cn[i]) },
  ];
  const COLS = DIFF ? DIFF_COLS : [
    { key: "name", title: "Function", get: (i) => F.name[i], text: (i) => F.name[i] },
    { key: "self", title: "Self", num: true, get: (i) => F.self[i], text: (i) => fmt(F.self[i]) },
    { key: "selfpct", title: "Self %", num: true, bar: true, get: (i) => F.self[i], text: (i) => pct(F.self[i]) },
    { key: "total", title: "Total", num: true, get: (i) => F.total[i], text: (i) => fmt(F.total[i]) },
    { key: "totalpct", title: "Total %", num: true, get: (i) => F.total[i], text: (i) => pct(F.total[i]) },
    { key: "calls", title: "Calls", num: true, get: (i) => F.calls[i], text: (i) => F.calls[i] < 0 ? "\u2014" : fmt(F.calls[i]) },
    { key: "rec", title: "Recursive", num: true, get: (i) => F.rec[i], text: (i) => fmt(F.rec[i]) },
    { key: "source", title: "Source", get: source, text: source },
  ];
  if (F.exe) COLS.splice(1, 0, exeCol);
  // The columns' widths: the plain report's are the style sheet's; others are set here.
  if (DIFF || F.exe) $("table").style.setProperty("--cols", COLS.map((c) => c.width || "6em").join(" "));
  // A comparison opens on the verdicts, changes first, each verdict's largest change first
  // (the order gmon diff prints).
  const T = DIFF ? { key: "verdict", desc: false, rows: [], filter: null } : { key: "self", desc: true, rows: [], filter: null };
  const body = $("table-body"), spacer = $("table-spacer"), RH = 22;
  let printing = false;
  function head() {
    const h = $("table-head");
    h.replaceChildren();
    for (const c of COLS) {
      const sorted = T.key === c.key;
      const b = el("button", { type: "button", "data-key": c.key, text: c.title + (sorted ? (T.desc ? " \u25BC" : " \u25B2") : "") });
      b.addEventListener("click", () => { if (T.key === c.key) T.desc = !T.desc; else { T.key = c.key; T.desc = c.num === true; } order(); });
      const cell = el("span", { role: "columnheader", cls: c.num ? "num" : "", "aria-sort": sorted ? (T.desc ? "descending" : "ascending") : "none" }, b);
      h.append(cell);
    }
  }
  function order() {
    const col = COLS.find((c) => c.key === T.key);
    const rows = [];
    for (let i = 0; i < NF; i++) if (!T.filter || T.filter(F.name[i])) rows.push(i);
    const get = col.get, dir = T.desc ? -1 : 1;
    const keys = rows.map(get);
    const idx = rows.map((_, k) => k);
    idx.sort((a, b) => {
      const x = keys[a], y = keys[b];
      const c = typeof x === "string" ? (x < y ? -1 : x > y ? 1 : 0) : x - y;
      return c !== 0 ? c * dir : rows[a] - rows[b];
    });
    T.rows = idx.map((k) => rows[k]);
    $("table").setAttribute("aria-rowcount", String(T.rows.length + 1));
    $("filter-status").textContent = T.filter ? T.rows.length + " of " + NF + " functions" : NF + " functions";
    head();
    rows_();
  }
  function rows_() {
    const n = printing ? Math.min(T.rows.length, 300) : T.rows.length;
    spacer.style.height = n * RH + "px";
    const first = printing ? 0 : Math.max(0, Math.floor(body.scrollTop / RH) - 5);
    const last = printing ? n : Math.min(n, first + Math.ceil((body.clientHeight || 420) / RH) + 10);
    const frag = document.createDocumentFragment();
    for (let k = first; k < last; k++) {
      const i = T.rows[k];
      const r = el("div", { cls: "row", role: "row", "aria-rowindex": String(k + 2), "data-f": String(i), "aria-selected": String(i === selected) });
      r.style.top = k * RH + "px";
      for (const c of COLS) {
        const t = c.text(i);
        const cell = el("span", { role: "gridcell", cls: (c.num ? "num" : "") + (c.bar ? " bar-cell" : "") + (c.verdict ? " verdict v" + X.vd[i] : ""), title: c.key === "name" || c.key === "source" ? t : "" });
        if (c.bar) { const bar = el("i"); bar.style.width = Math.min(100, 100 * F.self[i] / TOTAL) + "%"; cell.append(bar, el("b", { text: t })); }
        else cell.textContent = t;
        r.append(cell);
      }
      frag.append(r);
    }
    spacer.replaceChildren(frag);
  }
  body.addEventListener("scroll", () => rows_());
  spacer.addEventListener("click", (e) => { const r = e.target.closest(".row"); if (r) select(Number(r.dataset.f), "table"); });
  body.addEventListener("keydown", (e) => {
    const k = T.rows.indexOf(selected);
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      const n = Math.max(0, Math.min(T.rows.length - 1, k + (e.key === "ArrowDown" ? 1 : -1)));
      if (T.rows.length) select(T.rows[n], "table");
      e.preventDefault();
    } else if (e.key === "Enter" && selected >= 0) {
      // Search the graph for the function, so its frames stand out.
      $("search").value = "/^" + F.name[selected].replace(/[.*+?^${}()|[\]\\/]/g, "\\$&") + "$/";
      G.match = matcher($("search").value); draw();
    }
  });
  $("filter").addEventListener("input", (e) => { T.filter = matcher(e.target.value); order(); });
  listeners.push((f, from) => {
    const k = T.rows.indexOf(f);
    if (k >= 0 && from !== "scroll") {
      const top = k * RH;
      if (top < body.scrollTop || top + RH > body.scrollTop + body.clientHeight) body.scrollTop = Math.max(0, top - 3 * RH);
    }
    rows_();
  });
  window.addEventListener("beforeprint", () => { printing = true; rows_(); });
  window.addEventListener("afterprint", () => { printing = false; rows_(); });

  // ---- the selected function: call graph and hot lines ----
  const callers = new Map(), callees = new Map();
  for (let a = 0; a < D.arcs.from.length; a++) {
    const from = D.arcs.from[a], to = D.arcs.to[a];
    if (!callers.has(to)) callers.set(to, []);
    if (!callees.has(from)) callees.set(from, []);
    callers.get(to).push(a); callees.get(from).push(a);
  }
  const lineStart = new Map();
  for (let k = 0; k < D.lines.f.length; k++) if (!lineStart.has(D.lines.f[k])) lineStart.set(D.lines.f[k], k);
  const fnButton = (f) => { const b = el("button", { type: "button", cls: "link", "data-f": String(f), text: F.name[f] }); b.addEventListener("click", () => select(f, "details")); return b; };
  function arcTable(caption, arcs, side) {
    const t = el("table", { cls: "calls", "data-side": side });
    t.append(el("caption", { cls: "muted", text: caption }));
    t.append(el("tr", {}, el("th", { text: side === "callers" ? "Caller" : "Callee" }), el("th", { cls: "num", text: "Calls" }), el("th", { cls: "num", text: "Samples along the arc" }), el("th", { cls: "num", text: "%" })));
    const list = (arcs || []).slice().sort((a, b) => (D.arcs.samples[b] - D.arcs.samples[a]) || (D.arcs.calls[b] - D.arcs.calls[a]));
    if (!list.length) t.append(el("tr", {}, el("td", { cls: "muted", colspan: "4", text: side === "callers" ? "none (a root: called from outside the profile)" : "none" })));
    for (const a of list) {
      const other = side === "callers" ? D.arcs.from[a] : D.arcs.to[a];
      t.append(el("tr", { "data-arc": String(a) }, el("td", {}, fnButton(other)),
        el("td", { cls: "num", text: D.arcs.calls[a] < 0 ? "\u2014" : fmt(D.arcs.calls[a]) }),
        el("td", { cls: "num", text: fmt(D.arcs.samples[a]) }), el("td", { cls: "num", text: pct(D.arcs.samples[a]) })));
    }
    return t;
  }
  function diffDetails(f) {
    const facts = el("dl", { cls: "facts" });
    const fact = (k, v) => { if (v) facts.append(el("dt", { text: k }), el("dd", { text: v })); };
    const secs = (n) => META.rate ? " (" + (n / META.rate).toFixed(3) + " s)" : "";
    if (X.vd[f] < 0 && X.st[f]) fact("Verdict", "not compared: its executable ran only in " + (X.st[f] === "added" ? "NEW" : "BASE") + "; " + X.bs[f] + " \u2192 " + X.ns[f] + " samples of its own, " + share(X.sb[f] + X.sn[f]) + " of the executable's");
    else if (X.vd[f] < 0) fact("Verdict", "not compared: no samples of its own and no calls in either profile (a caller in the graph)");
    else {
      fact("Verdict", verdict(f) + (X.vd[f] === 0 && X.cc[f] ? ": the exact call count changed" : X.vd[f] === 2 ? ": fewer than " + DIFF.head.min_samples + " samples in both sides together" : ""));
      fact("Share", share(X.sb[f]) + " \u2192 " + share(X.sn[f]) + ", change " + points(X.ds[f]) + " points, interval [" + points(X.lo[f]) + ", " + points(X.hi[f]) + "]");
      fact("Self samples", X.bs[f].toFixed(2) + secs(X.bs[f]) + " \u2192 " + X.ns[f].toFixed(2) + secs(X.ns[f]));
      fact("Calls", fmt(X.cb[f]) + " \u2192 " + fmt(X.cn[f]));
      fact("Adjusted p", X.p[f] < 0 ? "not tested" : X.p[f].toPrecision(3) + " (Holm)");
      fact("In", X.st[f] === "both" ? "both profiles" : X.st[f] === "added" ? "NEW only (added)" : "BASE only (removed)");
    }
    fact("Total", fmt(F.total[f]) + " samples of " + (X.st[f] === "removed" ? "BASE" : "NEW") + " in the stacks through it");
    if (F.exe) fact("Executable", TREE[F.exe[f]].root);
    fact("Address", F.addr[f]);
    return [facts];
  }
  function details(f) {
    const box = $("details-body");
    if (DIFF) { $("details-title").textContent = F.name[f]; box.replaceChildren(...diffDetails(f)); return; }
    $("details-title").textContent = F.name[f];
    const facts = el("dl", { cls: "facts" });
    const fact = (k, v) => { if (v) facts.append(el("dt", { text: k }), el("dd", { text: v })); };
    fact("Self", fmt(F.self[f]) + " samples (" + pct(F.self[f]) + ")" + (META.rate ? ", " + (F.self[f] / META.rate).toFixed(3) + " s" : ""));
    fact("Total", fmt(F.total[f]) + " samples (" + pct(F.total[f]) + ") in the stacks through it");
    fact("Calls", F.calls[f] < 0 ? "not counted" : fmt(F.calls[f]) + (F.rec[f] ? " + " + fmt(F.rec[f]) + " recursive" : ""));
    fact("Source", source(f));
    fact("Address", F.addr[f]);
    if (F.exe) fact("Executable", TREE[F.exe[f]].exe);
    const kids = [facts,
      arcTable("Callers: who calls it, how often, and the samples of the stacks where they do", callers.get(f), "callers"),
      arcTable("Callees: what it calls, how often, and the samples below each", callees.get(f), "callees")];
    const start = lineStart.get(f);
    const lt = el("table", { cls: "calls", id: "hot-lines" });
    lt.append(el("caption", { cls: "muted", text: "Hot source lines (gprof -l credit)" }));
    lt.append(el("tr", {}, el("th", { text: "Line" }), el("th", { cls: "num", text: "Samples" }), el("th", { cls: "num", text: "% of self" }), el("th", { text: "Inlined" })));
    if (start === undefined) lt.append(el("tr", {}, el("td", { cls: "muted", colspan: "4", text: "no line information for this function's samples" })));
    else for (let k = start; k < D.lines.f.length && D.lines.f[k] === f; k++) {
      const file = D.lines.file[k] >= 0 ? D.files[D.lines.file[k]] : "??";
      // Code the compiler inlined here: where from and into (absent when no line is).
      const inl = D.lines.inlined ? D.lines.inlined[k] : "";
      lt.append(el("tr", {}, el("td", { cls: "mono", text: file + ":" + D.lines.line[k] }), el("td", { cls: "num", text: D.lines.samples[k].toFixed(2) }),
        el("td", { cls: "num", text: F.self[f] ? (100 * D.lines.samples[k] / F.self[f]).toFixed(1) + "%" : "" }),
        el("td", { cls: "mono", text: inl })));
    }
    kids.push(lt);
    box.replaceChildren(...kids);
  }
  listeners.push((f) => details(f));

  // ---- start ----
  $("noscript").remove();
  header();
  order();
  draw();
  window.addEventListener("resize", () => draw());
  if (T.rows.length) select(T.rows[0], "start");
  const loadMs = performance.now();

  // ---- test hook: #test=<JSON list of actions> runs them through the real event handlers
  // and writes what the page shows into a hidden element that `chromium --dump-dom` returns.
  if (location.hash.startsWith("#test=")) {
    const out = { loadMs, scriptMs: loadMs - scriptStart, steps: [] };
    const result = () => {
      out.errors = problems.errors; out.violations = problems.violations;
      out.resources = performance.getEntriesByType("resource").length;
      let pre = $("gmon-test-result");
      if (!pre) { pre = el("pre", { id: "gmon-test-result" }); document.body.append(pre); }
      pre.textContent = JSON.stringify(out);
    };
    try {
      const actions = JSON.parse(decodeURIComponent(location.hash.slice(6)));
      const nameOf = (i) => F.name[i];
      for (const a of actions) {
        const step = { action: a };
        if (a.sort) {
          for (let n = 0; n < 2; n++) {
            if (T.key === a.sort && T.desc === (a.dir === "desc")) break;
            document.querySelector('#table-head button[data-key="' + a.sort + '"]').click();
          }
          step.rows = [...spacer.querySelectorAll(".row")].slice(0, a.rows || 10).map((r) => [...r.children].map((c) => c.textContent));
          step.order = T.rows.slice(0, a.rows || 10).map(nameOf);
        }
        if (a.search !== undefined) {
          const s = $("search"); s.value = a.search; s.dispatchEvent(new Event("input"));
          step.matched = G.matched; step.matchedSamples = G.matchedSamples; step.status = $("search-status").textContent;
        }
        if (a.filter !== undefined) {
          const s = $("filter"); s.value = a.filter; s.dispatchEvent(new Event("input"));
          step.rows = T.rows.length; step.first = T.rows.slice(0, 5).map(nameOf);
        }
        if (a.view) $("view-" + a.view).click();
        if (a.resetZoom) $("reset-zoom").click();
        if (a.clickFrame !== undefined) {
          const R = G.rects;
          let k = -1;
          for (let j = 0; j < R.rn.length; j++) if (R.rn[j] > 0 && F.name[fnOf[R.rn[j]]] === a.clickFrame && (k < 0 || R.rw[j] > R.rw[k])) k = j;
          step.found = k >= 0;
          if (k >= 0) {
            const r = canvas.getBoundingClientRect(), i = R.rn[k];
            const cx = r.left + (R.rx[k] + R.rw[k] / 2) * R.W;
            const cy = r.top + (G.icicle ? depth[i] * ROW : R.H - (depth[i] + 1) * ROW) + ROW / 2;
            canvas.dispatchEvent(new MouseEvent("click", { clientX: cx, clientY: cy, bubbles: true }));
          }
        }
        if (a.clickRow !== undefined) {
          const k = T.rows.findIndex((i) => F.name[i] === a.clickRow);
          step.found = k >= 0;
          if (k >= 0) {
            body.scrollTop = k * RH; rows_();
            const r = spacer.querySelector('.row[data-f="' + T.rows[k] + '"]');
            if (r) r.firstChild.dispatchEvent(new MouseEvent("click", { bubbles: true }));
          }
        }
        if (a.header) step.header = $("summary").textContent;
        if (a.frames) {
          // Every frame: name, first sample (as x), samples (as width) and fill.
          const xs = new Float64Array(N), used = new Float64Array(N);
          step.frames = [];
          for (let i = 1; i < N; i++) {
            const p = par[i];
            xs[i] = xs[p] + used[p]; used[p] += val[i];
            step.frames.push([F.name[fnOf[i]], xs[i], val[i], fill(i)]);
          }
        }
        if (a.frameColours) step.frameColours = a.frameColours.map((n) => {
          for (let i = 1; i < N; i++) if (F.name[fnOf[i]] === n) return fill(i);
          return null;
        });
        if (a.colours) step.colours = a.colours.map((n) => { const i = F.name.indexOf(n); return i < 0 ? null : colour(i); });
        step.selected = selected >= 0 ? F.name[selected] : null;
        step.tableSelected = [...spacer.querySelectorAll('.row[aria-selected="true"]')].map((r) => r.firstChild.textContent.replace(/^\u25B6\s*/, ""));
        step.zoom = G.zoom > 0 ? F.name[fnOf[G.zoom]] : "all";
        step.details = $("details-title").textContent;
        step.frameInfo = $("frame-info").textContent;
        const rowsOf = (side) => [...document.querySelectorAll('#details-body table[data-side="' + side + '"] tr[data-arc]')].map((tr) => [...tr.children].map((c) => c.textContent));
        step.callers = rowsOf("callers"); step.callees = rowsOf("callees");
        step.lines = [...document.querySelectorAll("#hot-lines tr")].slice(1).map((tr) => [...tr.children].map((c) => c.textContent));
        out.steps.push(step);
      }
    } catch (e) { problems.errors.push("test hook: " + e); }
    result();
  }
})();
