// Strait's live dashboard: polls the node's JSON API every 2 s and draws
// flows (charts of throughput, lag and replication latency), stopped
// partitions and errors, and a per-partition table with each topic's
// remote name. Plain script, no build step.
//
// Every string from the API reaches the page through textContent or an
// attribute, never as markup: topic names and error messages are data.
(function () {
  "use strict";

  const POLL_MS = 2000;
  // A checkpoint older than this shows in the warning colour (the checkpoint
  // interval is 60 s by default, so two missed rounds).
  const CHECKPOINT_STALE_SECONDS = 120;
  // The table draws at most this many rows; the filter narrows it.
  const MAX_ROWS = 1000;
  const CHART_HEIGHT = 170;
  const TOKEN_KEY = "strait.token";

  // Classes for the states the API documents; anything else is "unknown".
  const FLOW_STATES = new Set(["starting", "running", "degraded", "failed"]);
  const PARTITION_STATES = new Set(["starting", "flowing", "caught-up", "stopped"]);

  // ---- the token ---------------------------------------------------------

  let memoryToken = ""; // when sessionStorage is unavailable

  // takeTokenFromFragment moves a #token=... into sessionStorage and out of
  // the address bar, so it is not left in the history or a shared link.
  function takeTokenFromFragment() {
    const params = new URLSearchParams(location.hash.replace(/^#/, ""));
    if (!params.has("token")) return;
    const token = params.get("token") || "";
    memoryToken = token;
    try {
      if (token) sessionStorage.setItem(TOKEN_KEY, token);
      else sessionStorage.removeItem(TOKEN_KEY);
    } catch (e) {
      // Storage disabled: keep it in memory for this page's life.
    }
    history.replaceState(null, "", location.pathname + location.search);
  }

  function token() {
    try {
      return sessionStorage.getItem(TOKEN_KEY) || memoryToken;
    } catch (e) {
      return memoryToken;
    }
  }

  // ---- the API -----------------------------------------------------------

  class APIError extends Error {
    constructor(status, message) {
      super(message);
      this.status = status;
    }
  }

  async function get(path) {
    const headers = { Accept: "application/json" };
    const t = token();
    if (t) headers.Authorization = "Bearer " + t;
    let res;
    try {
      res = await fetch(path, { headers, cache: "no-store", credentials: "same-origin" });
    } catch (e) {
      throw new APIError(0, "the node does not answer (" + e.message + ")");
    }
    if (!res.ok) {
      let message = res.status + " " + res.statusText;
      try {
        const body = await res.json(); // ErrorView
        if (body && typeof body.message === "string") message = body.message;
      } catch (e) {
        // Not JSON: keep the status line.
      }
      throw new APIError(res.status, message);
    }
    return res.json();
  }

  // ---- formatting --------------------------------------------------------

  const NBSP = "\u00a0"; // keeps a number on the line of its unit
  const intFormat = new Intl.NumberFormat("en-US");
  const compactFormat = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

  function fmtInt(n) {
    return n == null ? "–" : intFormat.format(n);
  }

  function fmtCompact(n) {
    return n == null ? "–" : compactFormat.format(n);
  }

  function fmtBytes(n) {
    if (n == null) return "–";
    const units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let i = 0;
    let v = Math.abs(n);
    while (v >= 1000 && i < units.length - 1) {
      v /= 1000;
      i++;
    }
    const digits = i === 0 || v >= 100 ? 0 : 1;
    return (n < 0 ? "-" : "") + v.toFixed(digits).replace(/\.0$/, "") + NBSP + units[i];
  }

  function fmtDuration(s) {
    if (s == null || !isFinite(s)) return "–";
    if (s < 10) return Math.round(s * 10) / 10 + NBSP + "s";
    if (s < 60) return Math.round(s) + NBSP + "s";
    const m = Math.floor(s / 60);
    if (m < 60) return m + "m " + String(Math.round(s % 60)).padStart(2, "0") + "s";
    const h = Math.floor(m / 60);
    if (h < 24) return h + "h " + String(m % 60).padStart(2, "0") + "m";
    return Math.floor(h / 24) + "d " + (h % 24) + "h";
  }

  // ---- DOM helpers -------------------------------------------------------

  // el builds an element; string children become text nodes, never markup.
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "dataset") Object.assign(e.dataset, v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of children) {
      if (c == null) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function stateClass(known, state) {
    return "state state-" + (known.has(state) ? state : "unknown");
  }

  const $ = (id) => document.getElementById(id);

  // ---- state the browser test reads ----------------------------------------

  const cards = new Map(); // flow name -> {root, facts, throughput, lag, latency, note}

  const state = {
    polls: 0, // polls done, answered or not
    okPolls: 0, // polls that read all three documents
    lastUpdate: null, // Date.now() of the last good poll
    error: null, // {status, message} of the last failed poll, null after a good one
    flows: [],
    partitions: [],
    history: { interval_seconds: 0, points: [] },
    // Per flow, the columns the charts draw, from /api/v1/history.
    series: {},
    // charts says, per flow and chart, what the uPlot instance holds now:
    // its number of points, the last point's time, the colour of its first
    // series and the plotting area in canvas pixels (a browser test looks
    // for that colour there).
    charts() {
      const out = {};
      const info = (u, color) => ({
        points: u.data[0].length,
        last: u.data[0].length ? u.data[0][u.data[0].length - 1] : null,
        color,
        plot: { left: u.bbox.left, top: u.bbox.top, width: u.bbox.width, height: u.bbox.height },
      });
      for (const [name, c] of cards) {
        out[name] = { throughput: info(c.throughput, THROUGHPUT[0].color), lag: info(c.lag, LAG[0].color), latency: info(c.latency, LATENCY[0].color) };
      }
      return out;
    },
  };
  window.straitDashboard = state;

  // ---- charts ------------------------------------------------------------

  function axisValues(fmt) {
    return (u, splits) => splits.map((v) => (v == null ? "" : fmt(v)));
  }

  // zeroBased keeps a rate or a lag axis from 0 even when it is flat.
  function zeroBased(u, min, max) {
    return [0, max > 0 ? max * 1.1 : 1];
  }

  // legendValue shows the point under the cursor, or the latest point when
  // the cursor is elsewhere, so the legend doubles as the current value.
  function legendValue(fmt) {
    return (u, v, si, idx) => {
      if (idx == null) {
        const col = u.data[si] || [];
        v = col.length ? col[col.length - 1] : null;
      }
      return v == null ? "–" : fmt(v);
    };
  }

  const fmtTime = (t) => new Date(t * 1000).toLocaleTimeString();

  // The two series of a chart usually move together (bytes with records,
  // lag in records with lag in seconds), so the second is dashed to keep the
  // first visible under it.
  function chartOptions(width, left, right) {
    return {
      width,
      height: CHART_HEIGHT,
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, [left.scale]: { range: zeroBased }, [right.scale]: { range: zeroBased } },
      series: [
        { label: "time", value: legendValue(fmtTime) },
        { label: left.label, scale: left.scale, stroke: left.color, fill: left.fill, width: 2, points: { show: false }, value: legendValue(left.fmt) },
        { label: right.label, scale: right.scale, stroke: right.color, width: 2, dash: [6, 4], points: { show: false }, value: legendValue(right.fmt) },
      ],
      axes: [
        { stroke: "#555", grid: { stroke: "#eee" } },
        { scale: left.scale, stroke: left.color, grid: { stroke: "#eee" }, size: 78, values: axisValues(left.fmt) },
        // Two series on one scale (the latency chart's) need one axis.
        { scale: right.scale, show: right.scale !== left.scale, stroke: right.color, side: 1, grid: { show: false }, size: 70, values: axisValues(right.fmt) },
      ],
    };
  }

  const THROUGHPUT = [
    { label: "bytes/s", scale: "bytes", color: "#2563eb", fill: "rgba(37,99,235,0.08)", fmt: (v) => fmtBytes(v) + "/s" },
    { label: "records/s", scale: "records", color: "#0f9d58", fmt: (v) => fmtCompact(v) + "/s" },
  ];
  const LAG = [
    { label: "lag records", scale: "lagrec", color: "#c2410c", fill: "rgba(194,65,12,0.08)", fmt: fmtCompact },
    { label: "lag seconds", scale: "lagsec", color: "#7c3aed", fmt: fmtDuration },
  ];
  // Both latency series share one scale: the mean under the highest.
  const LATENCY = [
    { label: "mean latency", scale: "latency", color: "#0e7490", fill: "rgba(14,116,144,0.08)", fmt: fmtMillis },
    { label: "max latency", scale: "latency", color: "#be185d", fmt: fmtMillis },
  ];

  function fmtMillis(ms) {
    return ms < 1000 ? Math.round(ms) + " ms" : fmtDuration(ms / 1000);
  }

  // ---- flow cards --------------------------------------------------------

  function fact(name, label) {
    const value = el("dd");
    const box = el("div", { class: "fact", dataset: { fact: name } }, el("dt", null, label), value);
    return { box, value };
  }

  function newCard(name) {
    const facts = {
      state: el("span", { class: "state" }),
      throughput: fact("throughput", "Throughput"),
      lag: fact("lag", "Lag (RPO)"),
      failover: fact("failover", "A failover now"),
      copied: fact("copied", "Copied"),
      partitions: fact("partitions", "Partitions"),
      checkpoint: fact("checkpoint", "Last checkpoint"),
      groups: fact("groups", "Group offsets synced"),
    };
    const backlogBar = el("progress", { max: 1, value: 0 });
    const backlogText = el("span", { class: "backlog-text" });
    const backlog = el("div", { class: "backlog", hidden: true }, el("span", { class: "backlog-label" }, "Initial copy"), backlogBar, backlogText);
    const throughputBox = el("div", { class: "chart", dataset: { chart: "throughput" } });
    const lagBox = el("div", { class: "chart", dataset: { chart: "lag" } });
    const latencyBox = el("div", { class: "chart", dataset: { chart: "latency" } });
    const note = el("p", { class: "chart-note quiet" }, "Collecting samples (one every few seconds)…");
    const root = el(
      "article",
      { class: "card", dataset: { flow: name } },
      el("header", null, el("h3", null, name), facts.state),
      // The failover answer is a sentence: it takes a row of its own, last.
      el("dl", { class: "facts" }, facts.throughput.box, facts.lag.box, facts.copied.box, facts.partitions.box, facts.checkpoint.box, facts.groups.box, facts.failover.box),
      backlog,
      el(
        "div",
        { class: "charts" },
        el("div", null, el("h4", null, "Throughput"), throughputBox),
        el("div", null, el("h4", null, "Lag"), lagBox),
        el("div", null, el("h4", null, "Replication latency"), latencyBox),
      ),
      note,
    );
    $("flow-cards").append(root);
    const width = Math.max(throughputBox.clientWidth, 200);
    const empty = [[], [], []];
    const card = {
      root,
      facts,
      backlog,
      backlogBar,
      backlogText,
      note,
      throughputBox,
      lagBox,
      latencyBox,
      throughput: new uPlot(chartOptions(width, THROUGHPUT[0], THROUGHPUT[1]), empty, throughputBox),
      lag: new uPlot(chartOptions(width, LAG[0], LAG[1]), empty, lagBox),
      latency: new uPlot(chartOptions(width, LATENCY[0], LATENCY[1]), empty, latencyBox),
    };
    resizer.observe(throughputBox);
    return card;
  }

  // Charts follow their card's width.
  const resizer = new ResizeObserver(() => {
    for (const c of cards.values()) {
      const width = Math.max(c.throughputBox.clientWidth, 200);
      if (c.throughput.width !== width) c.throughput.setSize({ width, height: CHART_HEIGHT });
      if (c.lag.width !== width) c.lag.setSize({ width, height: CHART_HEIGHT });
      if (c.latency.width !== width) c.latency.setSize({ width, height: CHART_HEIGHT });
    }
  });

  function dropCard(name) {
    const c = cards.get(name);
    resizer.unobserve(c.throughputBox);
    c.throughput.destroy();
    c.lag.destroy();
    c.latency.destroy();
    c.root.remove();
    cards.delete(name);
  }

  function renderFlow(c, f) {
    c.facts.state.className = stateClass(FLOW_STATES, f.state);
    c.facts.state.textContent = f.state;
    c.facts.throughput.value.textContent = fmtBytes(f.bytes_per_second) + "/s · " + fmtCompact(f.records_per_second) + " records/s";
    c.facts.lag.value.textContent = fmtInt(f.lag_records) + " records · " + fmtDuration(f.lag_seconds);
    c.facts.failover.value.textContent = f.failover_now || "";
    c.facts.copied.value.textContent = fmtCompact(f.records) + " records · " + fmtBytes(f.bytes);
    const parts = [f.fast_path_partitions + " fast", f.record_path_partitions + " record"];
    if (f.stopped_partitions > 0) parts.push(f.stopped_partitions + " stopped");
    c.facts.partitions.value.textContent = fmtInt(f.partitions) + " (" + parts.join(", ") + ")";
    c.facts.partitions.box.classList.toggle("bad", f.stopped_partitions > 0);

    const age = f.checkpoint_age_seconds;
    const stale = age != null && age > CHECKPOINT_STALE_SECONDS;
    // A checkpointer that ran with no group to checkpoint wrote nothing.
    c.facts.checkpoint.value.textContent = age == null || !f.checkpoints_emitted ? "none written yet" : fmtDuration(age) + " ago";
    c.facts.checkpoint.box.classList.toggle("warn", stale);
    c.facts.checkpoint.box.dataset.stale = String(stale);
    c.facts.checkpoint.box.title = stale ? "No checkpoint for over " + CHECKPOINT_STALE_SECONDS / 60 + " minutes: consumers that fail over now land further back" : "";
    c.facts.groups.value.textContent = fmtInt(f.group_offsets_synced) + " (" + fmtInt(f.checkpoints_emitted) + " checkpoints)";

    const b = f.backlog;
    c.backlog.hidden = !b;
    if (b) {
      c.backlogBar.value = b.fraction;
      let text = Math.floor(b.fraction * 100) + "% of " + fmtInt(b.total_records) + " records";
      if (b.eta_seconds != null) text += " · ETA " + fmtDuration(b.eta_seconds);
      c.backlogText.textContent = text;
    }
  }

  // seriesOf turns the history's points into one flow's chart columns;
  // a point without the flow is a gap (null).
  function seriesOf(points, name) {
    const s = { t: [], bytesPerSecond: [], recordsPerSecond: [], lagRecords: [], lagSeconds: [], latencyAvg: [], latencyMax: [] };
    for (const p of points) {
      const v = (p.flows || {})[name];
      s.t.push(p.t);
      s.bytesPerSecond.push(v ? v.bytes_per_second : null);
      s.recordsPerSecond.push(v ? v.records_per_second : null);
      s.lagRecords.push(v ? v.lag_records : null);
      s.lagSeconds.push(v ? v.lag_seconds : null);
      s.latencyAvg.push(v ? v.latency_avg_ms : null);
      s.latencyMax.push(v ? v.latency_max_ms : null);
    }
    return s;
  }

  function renderFlows(flows, points) {
    const names = new Set(flows.map((f) => f.name));
    for (const name of [...cards.keys()]) if (!names.has(name)) dropCard(name);
    const series = {};
    for (const f of flows) {
      let c = cards.get(f.name);
      if (!c) {
        c = newCard(f.name);
        cards.set(f.name, c);
      }
      $("flow-cards").append(c.root); // keeps the API's order
      renderFlow(c, f);
      const s = seriesOf(points, f.name);
      series[f.name] = s;
      c.throughput.setData([s.t, s.bytesPerSecond, s.recordsPerSecond]);
      c.lag.setData([s.t, s.lagRecords, s.lagSeconds]);
      c.latency.setData([s.t, s.latencyAvg, s.latencyMax]);
      c.note.hidden = s.t.length > 1;
    }
    state.series = series;
    $("no-flows").hidden = flows.length > 0;
  }

  // ---- problems and the partition table ------------------------------------

  function where(p) {
    return p.flow + " · " + p.topic + " [" + p.partition + "]";
  }

  function renderProblems(partitions) {
    const list = $("problem-list");
    const items = [];
    for (const p of partitions) {
      const stopped = p.state === "stopped";
      if (!stopped && !p.last_error) continue;
      items.push(
        el(
          "li",
          { class: stopped ? "problem stopped" : "problem warning", dataset: { flow: p.flow, topic: p.topic, partition: p.partition } },
          el("span", { class: "where" }, where(p)),
          el("span", { class: stateClass(PARTITION_STATES, p.state) }, p.state),
          el("span", { class: "reason" }, p.last_error || "no reason given"),
        ),
      );
    }
    list.replaceChildren(...items);
    $("no-problems").hidden = items.length > 0;
  }

  function matches(p, filter) {
    if (!filter) return true;
    return (p.flow + " " + p.topic + " " + p.remote + " " + p.state + " " + (p.last_error || "")).toLowerCase().includes(filter);
  }

  function cell(text, cls) {
    return el("td", { class: cls }, text);
  }

  function renderPartitions(partitions) {
    const filter = $("filter").value.trim().toLowerCase();
    const shown = partitions.filter((p) => matches(p, filter));
    const frag = document.createDocumentFragment();
    for (const p of shown.slice(0, MAX_ROWS)) {
      const topic = cell(p.topic);
      const row = el(
        "tr",
        { class: p.state === "stopped" ? "stopped" : p.last_error ? "warning" : null, dataset: { flow: p.flow, topic: p.topic, partition: p.partition } },
        cell(p.flow),
        topic,
        cell(p.remote || ""),
        cell(p.partition, "num"),
        el("td", null, el("span", { class: stateClass(PARTITION_STATES, p.state) }, p.state)),
        cell(p.path),
        cell(fmtInt(p.lag_records), "num"),
        cell(fmtDuration(p.lag_seconds), "num"),
        cell(fmtInt(p.records), "num"),
        cell(p.last_error || "", "error"),
      );
      for (const [i, col] of ["flow", "topic", "remote", "partition", "state", "path", "lag_records", "lag_seconds", "records", "last_error"].entries()) {
        row.children[i].dataset.col = col;
      }
      frag.append(row);
    }
    $("partition-rows").replaceChildren(frag);
    let note = fmtInt(partitions.length) + " partitions";
    if (filter) note = fmtInt(shown.length) + " of " + note + " match";
    if (shown.length > MAX_ROWS) note += "; showing the first " + fmtInt(MAX_ROWS) + ", filter to narrow";
    $("partition-note").textContent = note;
  }

  function byPlace(a, b) {
    return a.flow < b.flow ? -1 : a.flow > b.flow ? 1 : a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.partition - b.partition;
  }

  // ---- status and errors ---------------------------------------------------

  function showStatus() {
    const s = $("status");
    if (state.error && state.lastUpdate == null) {
      s.dataset.state = "error";
      s.textContent = "no data";
    } else if (state.error) {
      s.dataset.state = "stale";
      s.textContent = "last update " + fmtDuration((Date.now() - state.lastUpdate) / 1000) + " ago";
    } else {
      s.dataset.state = "ok";
      s.textContent = "live · updated " + new Date(state.lastUpdate).toLocaleTimeString();
    }
  }

  function showBanner(err) {
    const b = $("banner");
    if (!err) {
      b.hidden = true;
      b.replaceChildren();
      return;
    }
    b.hidden = false;
    if (err.status === 401) {
      b.dataset.kind = "auth";
      const lead = token() ? "The node refused the token this tab holds." : "The node asks for a bearer token.";
      b.replaceChildren(
        el("strong", null, lead + " "),
        "Open this page as ",
        el("code", null, location.origin + location.pathname + "#token=<strait.api.token>"),
        " (the value of strait.api.token); the page keeps it for this tab only. The node said: ",
        el("q", null, err.message),
      );
    } else if (err.drawing) {
      b.dataset.kind = "error";
      b.replaceChildren(el("strong", null, "The page could not draw the node's answer: "), err.message, ". The browser's console has the details.");
    } else {
      b.dataset.kind = "error";
      b.replaceChildren(el("strong", null, "Cannot read the node's API: "), err.message, err.status ? " (HTTP " + err.status + ")" : "", ". Retrying every 2 s; the figures below are from the last good answer.");
    }
  }

  // ---- the poll loop -------------------------------------------------------

  let timer = null;
  let polling = false; // one poll at a time
  let again = false; // a poll was asked for while one ran

  async function poll() {
    if (polling) {
      again = true;
      return;
    }
    polling = true;
    clearTimeout(timer);
    try {
      const [flows, parts, hist] = await Promise.all([get("api/v1/flows"), get("api/v1/partitions"), get("api/v1/history")]);
      state.flows = flows.flows || [];
      state.partitions = (parts.partitions || []).slice().sort(byPlace);
      state.history = { interval_seconds: hist.interval_seconds, points: hist.points || [] };
      renderFlows(state.flows, state.history.points);
      renderProblems(state.partitions);
      renderPartitions(state.partitions);
      state.error = null;
      state.lastUpdate = Date.now();
      state.okPolls++;
    } catch (e) {
      const drawing = !(e instanceof APIError); // a defect of this page, not of the node
      if (drawing) console.error("dashboard: drawing the node's answer:", e);
      state.error = { status: e.status || 0, message: e.message || String(e), drawing };
    }
    state.polls++;
    showBanner(state.error);
    showStatus();
    polling = false;
    timer = setTimeout(poll, again ? 0 : POLL_MS);
    again = false;
  }

  takeTokenFromFragment();
  window.addEventListener("hashchange", () => {
    takeTokenFromFragment();
    poll();
  });
  $("filter").addEventListener("input", () => renderPartitions(state.partitions));
  poll();
})();
