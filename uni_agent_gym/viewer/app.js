"use strict";
// The served run page: the table is a page of rows the server sorted and filtered, the charts are points
// the server counted, and the filters live in the address (?exit_reason=...&offset=50), so a refresh keeps
// them and shows what landed meanwhile. A trajectory (#t=<id>) is fetched when opened, its tokens a page at a time.
const RUN = JSON.parse(document.getElementById("run-data").textContent);
const PAGE_ROWS = 50;
const FILTERS = ["instance", "exit_reason", "kind", "reward_min", "reward_max", "masked", "flags", "language", "repo", "v_from", "v_to", "v_of", "t_from", "t_to"];
const CATEGORIES = {repo: "repository", language: "language"};  // charts with one point per value (an eval run's)
const PALETTE = ["#5b8def", "#e8743b", "#19a979", "#ed4a7b", "#945ecf", "#13a4b4", "#525df4", "#bf399e", "#6c8893", "#ee6868"];
const CAUSE_COLORS = {env_error: "#d33", aborted: "#e8a33b", timeout: "#945ecf", harness_error: "#13a4b4"};
let state = Object.fromEntries(new URLSearchParams(location.search));
let summaryData = null, chartData = null, typing = null, firstTable = true;

const served = {
  detail: (id) => getJSON(`api/trajectories/${id}`),
  tokens: (d, id, offset, limit) => getJSON(`api/trajectories/${id}/tokens?offset=${offset}&limit=${limit}`),
};

async function getJSON(url) {
  const response = await fetch(url);
  const body = await response.json();
  if (!response.ok) throw new Error(body.detail || `${response.status} ${url}`);
  return body;
}

function saveState() {
  const query = new URLSearchParams(Object.entries(state).filter(([, value]) => value !== "" && value !== null && value !== undefined));
  history.replaceState(null, "", "?" + query.toString() + location.hash);
}

function showError(error) {
  document.getElementById("status").textContent = "error: " + error.message;
}

// ---- summary and filters ----

function fillChoices(name, values) {
  const select = document.querySelector(`#filters [name=${name}]`);
  select.replaceChildren(el("option", {value: ""}, "any"), ...values.map((value) => el("option", {value}, value)));
  select.value = state[name] || "";
}

async function loadSummary() {
  summaryData = await getJSON("api/summary");
  const s = summaryData;
  document.getElementById("status").textContent = `${s.total.toLocaleString()} trajectories indexed` +
    (s.skipped ? ` · ${s.skipped.toLocaleString()} skipped (below)` : "") +
    (s.unchecked ? ` · ${s.unchecked.toLocaleString()} not checked for masks (flags: masks not checked)` : "");
  for (const name of ["exit_reason", "kind", "language", "repo"]) fillChoices(name, s.choices[name]);
  const problems = s.problems.map((problem) => el("li", {class: "skipped"}, "skipped: " + problem));
  if (s.skipped > s.problems.length) problems.push(el("li", {}, `and ${s.skipped - s.problems.length} more`));
  document.getElementById("problems").replaceChildren(...problems);
}

function syncForm() {
  for (const field of document.getElementById("filters").elements) {
    if (field.name && field.name in state) field.value = state[field.name];
    else if (field.name) field.value = field.name === "v_of" ? "max_global_steps" : "";
  }
  const chip = document.getElementById("time-chip");
  chip.replaceChildren();
  if (state.t_from) {
    const label = `recorded ${timeLabel(+state.t_from, true)} – ${timeLabel(+state.t_to, true)} ✕`;
    const node = el("span", {class: "chip", title: "clear the time range"}, label);
    node.addEventListener("click", () => { delete state.t_from; delete state.t_to; filtersChanged(); });
    chip.append(node);
  }
}

function filtersChanged() {
  state.offset = 0;
  syncForm();
  saveState();
  loadRows().catch(showError);
}

function setUpFilters() {
  const form = document.getElementById("filters");
  const changed = (event) => {
    const field = event.target;
    if (!field.name || state[field.name] === field.value) return;
    state[field.name] = field.value;
    clearTimeout(typing);
    typing = setTimeout(filtersChanged, field.tagName === "INPUT" ? 250 : 0);
  };
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);  // a select set by a script fires only this
  form.addEventListener("submit", (event) => event.preventDefault());
  document.getElementById("clear").addEventListener("click", () => {
    for (const key of FILTERS) delete state[key];
    filtersChanged();
  });
  document.getElementById("prev").addEventListener("click", () => { state.offset = Math.max(0, (+state.offset || 0) - PAGE_ROWS); saveState(); loadRows().catch(showError); });
  document.getElementById("next").addEventListener("click", () => { state.offset = (+state.offset || 0) + PAGE_ROWS; saveState(); loadRows().catch(showError); });
}

// ---- table ----

function setUpTable() {
  const head = document.querySelector("#run-table thead tr");
  for (const [key, label, title] of COLUMNS) {
    const th = el("th", {"data-key": key}, label);
    if (title) th.title = title;
    th.addEventListener("click", () => {
      state.descending = state.sort === key && state.descending !== "1" ? "1" : "";
      state.sort = key;
      state.offset = 0;
      saveState();
      loadRows().catch(showError);
    });
    head.appendChild(th);
  }
  document.querySelector("#run-table tbody").addEventListener("click", (event) => {
    const tr = event.target.closest("tr");
    if (tr) location.hash = "#t=" + tr.dataset.id;
  });
}

async function loadRows() {
  const query = new URLSearchParams();
  for (const key of FILTERS) if (state[key]) query.set(key, state[key]);
  query.set("sort", state.sort || "id");
  if (state.descending === "1") query.set("descending", "true");
  query.set("offset", state.offset || 0);
  query.set("limit", PAGE_ROWS);
  const data = await getJSON("api/rows?" + query);
  const fragment = document.createDocumentFragment();
  for (const row of data.rows) fragment.append(tableRow(row, {"data-id": row.id}));
  document.querySelector("#run-table tbody").replaceChildren(fragment);
  document.querySelectorAll("#run-table th").forEach((th) => {
    th.classList.toggle("asc", th.dataset.key === state.sort && state.descending !== "1");
    th.classList.toggle("desc", th.dataset.key === state.sort && state.descending === "1");
  });
  const first = data.total ? data.offset + 1 : 0, last = data.offset + data.rows.length;
  document.getElementById("shown").textContent = `${first}–${last} of ${data.total.toLocaleString()} trajectories`;
  document.getElementById("shown").dataset.total = data.total;
  document.getElementById("prev").disabled = data.offset === 0;
  document.getElementById("next").disabled = last >= data.total;
  if (firstTable) { firstTable = false; requestAnimationFrame(() => { window.__uagRendered = performance.now(); }); }
}

// ---- charts ----

function timeLabel(seconds, full) {
  const date = new Date(seconds * 1000), pad = (n) => String(n).padStart(2, "0");
  const clock = `${pad(date.getHours())}:${pad(date.getMinutes())}` + (full || chartData.step < 60 ? `:${pad(date.getSeconds())}` : "");
  return (full || chartData.step >= 86400 ? `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` : "") + clock;
}

function xLabel(x) {
  return chartData.by === "time" ? timeLabel(x, false) : String(x);
}

function listPoint(x, extra) {
  for (const key of ["v_from", "v_to", "v_of", "t_from", "t_to", "exit_reason", "masked", "flags", "repo", "language"]) delete state[key];
  if (chartData.by in CATEGORIES) state[chartData.by] = x;
  else if (chartData.by === "time") { state.t_from = x; state.t_to = x + chartData.step; }
  else { state.v_of = chartData.by; state.v_from = x; state.v_to = x; }
  Object.assign(state, extra || {});
  filtersChanged();
  document.getElementById("filters").scrollIntoView();
}

const WIDTH = 380, HEIGHT = 150, LEFT = 42, BOTTOM = 20, TOP = 6;
const NAME_STEP = 22, NAME_CHARS = 20, NAME_ROOM = 130;  // a chart by name: every name shown, upright, none over another

function frame(points, top, format) {
  const named = chartData.by in CATEGORIES;
  const width = named ? Math.max(WIDTH, LEFT + 8 + NAME_STEP * points.length) : WIDTH;
  const svg = svgEl("svg", {width, height: HEIGHT - BOTTOM + (named ? NAME_ROOM : BOTTOM), role: "img"});
  const plot = width - LEFT - 8, height = HEIGHT - BOTTOM - TOP;
  svg.append(svgEl("line", {class: "axis", x1: LEFT, y1: TOP + height, x2: width - 8, y2: TOP + height}));
  for (const share of [0, 0.5, 1]) {
    const label = svgEl("text", {x: LEFT - 4, y: TOP + height - share * height + 4, "text-anchor": "end"});
    label.textContent = format(top * share);
    svg.append(label);
  }
  const every = named ? 1 : Math.max(1, Math.ceil(points.length / 6));
  points.forEach((point, i) => {
    if (i % every) return;
    const x = LEFT + (i + 0.5) * plot / points.length, y = TOP + height + 6;
    const label = named ? svgEl("text", {class: "name", x: x + 4, y, "text-anchor": "end", transform: `rotate(-90 ${x + 4} ${y})`})
      : svgEl("text", {x, y: HEIGHT - 6, "text-anchor": "middle"});
    const name = xLabel(point.x);
    label.textContent = named && name.length > NAME_CHARS ? name.slice(0, NAME_CHARS - 1) + "…" : name;
    if (named) label.append(Object.assign(svgEl("title", {}), {textContent: name}));
    svg.append(label);
  });
  return {svg, at: (i) => LEFT + (i + 0.5) * plot / points.length, y: (value) => TOP + height - (top ? value / top : 0) * height, height, plot};
}

function lineChart(id, title, points, series, format) {
  const values = points.flatMap((p) => series.map((s) => s.value(p))).filter((v) => typeof v === "number");
  const top = Math.max(format === percent ? 1 : 0, ...values) || 1;
  const {svg, at, y} = frame(points, top, format);
  series.forEach((s, k) => {
    const color = PALETTE[k];
    const coords = points.map((p, i) => [at(i), s.value(p)]).filter(([, v]) => typeof v === "number");
    if (!(chartData.by in CATEGORIES)) svg.append(svgEl("polyline", {class: "line", stroke: color, points: coords.map(([x, v]) => `${x},${y(v)}`).join(" ")}));
    points.forEach((p, i) => {
      const value = s.value(p);
      if (typeof value !== "number") return;
      const dot = svgEl("circle", {class: "pt", cx: at(i), cy: y(value), r: 3.5, fill: color, "data-chart": id, "data-series": s.name,
        "data-x": p.x, "data-value": value, "data-n": p.n, ...(s.count ? {"data-count": s.count(p)} : {})});
      const tip = svgEl("title", {});
      tip.textContent = `${xLabel(p.x)}: ${s.name} ${format(value)}` + (s.count ? ` (${s.count(p)} of ${s.of(p)})` : "") + ` · ${p.n} trajectories`;
      dot.append(tip);
      dot.addEventListener("click", () => listPoint(p.x, s.filter));
      svg.append(dot);
    });
  });
  const legend = series.length > 1 ? el("div", {class: "legend"}, ...series.map((s, k) => el("span", {}, el("i", {style: `background:${PALETTE[k]}`}), s.name))) : null;
  return el("div", {class: "chart", id: "chart-" + id}, el("h3", {}, title), svg, legend);
}

function stackedChart(id, title, points, parts, scale, colors, filterOf, format) {
  const keys = [...new Set(points.flatMap((p) => Object.keys(parts(p))))].sort();
  const totals = points.map((p) => Object.values(parts(p)).reduce((a, b) => a + b, 0) / scale(p));
  const top = Math.max(format === percent ? 0.01 : 1, ...totals);
  const {svg, at, y, plot} = frame(points, top, format);
  const width = Math.max(2, Math.min(24, plot / points.length * 0.7));
  points.forEach((p, i) => {
    let base = 0;
    for (const key of keys) {
      const count = parts(p)[key] || 0;
      if (!count) continue;
      const value = count / scale(p);
      const rect = svgEl("rect", {class: "seg", x: at(i) - width / 2, y: y(base + value), width, height: Math.max(1, y(base) - y(base + value)),
        style: `fill:${colors(key, keys)}`, "data-chart": id, "data-x": p.x, "data-key": key, "data-count": count, "data-n": p.n});
      const tip = svgEl("title", {});
      tip.textContent = `${xLabel(p.x)}: ${key} ${count} of ${p.n} trajectories`;
      rect.append(tip);
      rect.addEventListener("click", () => listPoint(p.x, filterOf(key)));
      svg.append(rect);
      base += value;
    }
  });
  const legend = el("div", {class: "legend"}, ...keys.map((key) => el("span", {}, el("i", {style: `background:${colors(key, keys)}`}), key)));
  return el("div", {class: "chart", id: "chart-" + id}, el("h3", {}, title), svg, legend);
}

function percent(value) { return (100 * value).toFixed(value && value < 0.1 ? 1 : 0) + "%"; }
function plain(value) { return value >= 1000 ? (value / 1000).toFixed(1) + "k" : String(+value.toFixed(2)); }

function renderCharts() {
  const points = chartData.points, box = document.getElementById("charts");
  const what = CATEGORIES[chartData.by] || "weight version";
  const note = chartData.without_x ? `${chartData.without_x} trajectories carry no ${what} and are not on these charts` : "";
  document.getElementById("chart-note").textContent = note;
  if (!points.length) { box.replaceChildren(el("p", {}, "nothing to chart yet")); return; }
  const ratio = (part, whole) => (p) => p[whole] ? p[part] / p[whole] : null;
  box.replaceChildren(
    lineChart("resolved", "resolved rate", points, [{name: "resolved", value: ratio("resolved", "graded"), count: (p) => p.resolved, of: (p) => p.graded}], percent),
    lineChart("reward", "reward mean", points, [{name: "reward mean", value: (p) => p.reward_mean}], plain),
    stackedChart("exits", "exit reasons", points, (p) => p.exits, () => 1, (key, keys) => PALETTE[keys.indexOf(key) % PALETTE.length],
      (key) => (key === "(none)" ? {exit_reason: "(none)"} : {exit_reason: key}), plain),
    lineChart("turns", "model turns: median and p90", points, [{name: "median", value: (p) => p.turns_p50}, {name: "p90", value: (p) => p.turns_p90}], plain),
    lineChart("tokens", "response tokens: median and p90", points,
      [{name: "median", value: (p) => p.response_tokens_p50}, {name: "p90", value: (p) => p.response_tokens_p90}], plain),
    stackedChart("masked", "masked share, by cause", points, (p) => p.masked_by_cause, (p) => p.n, (key) => CAUSE_COLORS[key] || "#888",
      (key) => ({masked: "yes", exit_reason: key}), percent),
    lineChart("flagged", "flagged share", points, [{name: "flagged", value: ratio("flagged", "n"), count: (p) => p.flagged, of: (p) => p.n, filter: {flags: "flagged"}}], percent));
  window.__uagChartsRendered = performance.now();
}

async function loadCharts() {
  const named = summaryData && summaryData.choices.repo.some((repo) => repo !== "(none)");  // an eval run: no versions, all within seconds
  const by = state.by || (summaryData && summaryData.versioned ? "max_global_steps" : named ? "repo" : "time");
  document.getElementById("by").value = by;
  chartData = await getJSON("api/charts?by=" + by);
  renderCharts();
}

// ---- pages ----

function route() {
  const match = location.hash.match(/^#t=(\d+)$/);
  if (match) { showTrajectory(served, +match[1]).catch(showError); return; }
  hideTrajectory();
}

async function start() {
  document.getElementById("title").textContent = RUN.title;
  setUpTable();
  setUpFilters();
  syncForm();
  document.getElementById("by").addEventListener("change", (event) => { state.by = event.target.value; saveState(); loadCharts().catch(showError); });
  window.addEventListener("hashchange", route);
  route();
  await loadRows();
  await loadSummary();
  syncForm();
  await loadCharts();
}

start().catch(showError);
