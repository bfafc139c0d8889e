"use strict";
// The single-file page: the run table is built at load from the embedded rows (filtered and sorted here); a
// trajectory's JSON is parsed only when it is opened (#t=<index>).
const RUN = JSON.parse(document.getElementById("run-data").textContent);
const parsed = {};
let sortKey = null, sortDir = 1;
let only = null;  // [key, value]: the rows of one repository or language (a summary row clicked)

const embeddedSource = {
  async detail(index) {
    if (!(index in parsed)) parsed[index] = JSON.parse(document.getElementById("t-" + index).textContent);
    return parsed[index];
  },
  async tokens(d, index, offset, limit) {  // the slice shown.token_page gives
    const a = d.arrays, end = offset + limit;
    return {offset, ids: a.ids.slice(offset, end), mask: (a.mask || []).slice(offset, end),
      previous_mask: offset > 0 ? (a.mask || [])[offset - 1] : null,
      logprobs: a.logprobs ? a.logprobs.slice(offset, end) : null, tokens: a.tokens ? a.tokens.slice(offset, end) : null,
      bad: a.bad.filter((p) => p >= offset && p < end), roles: a.spans.filter((s) => s.start >= offset && s.start < end).map((s) => [s.start, s.role])};
  },
};

function renderTable() {
  const filter = document.getElementById("filter").value.trim().toLowerCase();
  let rows = RUN.rows.map((row, index) => [row, index]);
  if (filter) rows = rows.filter(([row]) => row.search.includes(filter));
  if (only) rows = rows.filter(([row]) => row[only[0]] === only[1]);
  if (sortKey) rows.sort(([a], [b]) => compare(a[sortKey], b[sortKey]) * sortDir);
  const fragment = document.createDocumentFragment();
  for (const [row, index] of rows) fragment.append(tableRow(row, {"data-index": index}));
  document.querySelector("#run-table tbody").replaceChildren(fragment);
  const chip = document.getElementById("group-chip");
  chip.replaceChildren();
  if (only) {
    const node = el("span", {class: "chip", title: "show every trajectory"}, `${only[0] === "repo" ? "repository" : only[0]}: ${only[1]} ✕`);
    node.addEventListener("click", () => { only = null; renderTable(); });
    chip.append(node);
  }
  document.getElementById("shown").textContent = `${rows.length} of ${RUN.rows.length} trajectories`;
}

function barChart(id, title, items) {
  const width = 320, rowHeight = 16, labelWidth = 130;
  const most = Math.max(1, ...items.map(([, count]) => count));
  const svg = svgEl("svg", {width, height: items.length * rowHeight + 4, role: "img"});
  items.forEach(([label, count], row) => {
    const y = row * rowHeight;
    const label_ = svgEl("text", {x: 0, y: y + 12});
    label_.textContent = String(label).slice(0, 20);
    const bar = svgEl("rect", {x: labelWidth, y: y + 2, height: rowHeight - 4, width: Math.max(1, (width - labelWidth - 40) * count / most)});
    const value = svgEl("text", {x: labelWidth + (width - labelWidth - 40) * count / most + 4, y: y + 12});
    value.textContent = count;
    svg.append(label_, bar, value);
  });
  return el("div", {class: "chart", id}, el("h3", {}, title), svg);
}

function histogram(values, bins) {
  values = values.filter((v) => typeof v === "number");
  if (!values.length) return [];
  const low = Math.min(...values), high = Math.max(...values);
  const size = Math.max(1, Math.ceil((high - low + 1) / bins));
  const counts = new Map();
  for (const value of values) {
    const start = low + Math.floor((value - low) / size) * size;
    counts.set(start, (counts.get(start) || 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => a[0] - b[0])
    .map(([start, count]) => [size === 1 ? String(start) : `${start}–${start + size - 1}`, count]);
}

// The per-repository and per-language summary: an eval run is judged by these (as its report.md is).
function groups(key) {
  const found = new Map();
  for (const row of RUN.rows) {
    if (row[key] === null || row[key] === undefined) continue;
    const group = found.get(row[key]) || {n: 0, graded: 0, resolved: 0, failed: 0};
    group.n++;
    if (row.resolved !== null && row.resolved !== undefined) group.graded++;
    if (row.resolved) group.resolved++;
    if (row.error) group.failed++;
    found.set(row[key], group);
  }
  return [...found.entries()].sort((a, b) => compare(a[0], b[0]));
}

function summaryTable(key, label) {
  const items = groups(key);
  if (!items.length) return null;
  const table = el("table", {class: "summary", id: "summary-" + key},
    el("tr", {}, ...[label, "trajectories", "resolved", "rate", "failed"].map((name) => el("th", {}, name))));
  for (const [value, group] of items) {
    const rate = group.graded ? (100 * group.resolved / group.graded).toFixed(1) + "%" : "n/a";
    const tr = el("tr", {"data-value": value, title: "list its trajectories"}, el("td", {}, value), el("td", {class: "n"}, String(group.n)),
      el("td", {class: "resolved"}, String(group.resolved)), el("td", {class: "rate"}, rate),
      el("td", {class: "failed" + (group.failed ? " some" : ""), title: "episodes that ended with an error (their sandbox failed)"}, String(group.failed)));
    tr.addEventListener("click", () => { only = [key, value]; renderTable(); });
    table.append(tr);
  }
  return el("div", {class: "chart"}, el("h3", {}, "by " + label), table);
}

function renderCharts() {
  const rows = RUN.rows, graded = rows.filter((row) => row.resolved !== null && row.resolved !== undefined);
  const resolved = graded.filter((row) => row.resolved).length;
  const exits = new Map();
  for (const row of rows) exits.set(row.exit_reason ?? "none", (exits.get(row.exit_reason ?? "none") || 0) + 1);
  const rate = graded.length ? (100 * resolved / graded.length).toFixed(1) + "%" : "n/a";
  document.getElementById("charts").replaceChildren(
    barChart("chart-resolved", `resolved ${resolved} / ${graded.length} (${rate})`, [["resolved", resolved], ["not resolved", graded.length - resolved]]),
    barChart("chart-exit", "exit reasons", [...exits.entries()].sort((a, b) => b[1] - a[1])),
    barChart("chart-turns", "model turns", histogram(rows.map((row) => row.turns), 10)),
    barChart("chart-tokens", "tokens", histogram(rows.map((row) => row.tokens), 10)));
  document.getElementById("summaries").replaceChildren(...[summaryTable("repo", "repository"), summaryTable("language", "language")].filter(Boolean));
}

function setUpRunPage() {
  document.getElementById("title").textContent = RUN.title;
  for (const problem of RUN.problems) document.getElementById("problems").append(el("li", {}, problem));
  for (const row of RUN.rows) row.search = [row.instance, row.exit_reason, row.kind, row.repo, row.error].join(" ").toLowerCase();
  const head = document.querySelector("#run-table thead tr");
  for (const [key, label, title] of COLUMNS) {
    const th = el("th", {"data-key": key}, label);
    if (title) th.title = title;
    th.addEventListener("click", () => {
      sortDir = sortKey === key ? -sortDir : 1;
      sortKey = key;
      head.querySelectorAll("th").forEach((cell) => cell.classList.remove("asc", "desc"));
      th.classList.add(sortDir > 0 ? "asc" : "desc");
      renderTable();
    });
    head.appendChild(th);
  }
  document.getElementById("filter").addEventListener("input", renderTable);
  document.querySelector("#run-table tbody").addEventListener("click", (event) => {
    const tr = event.target.closest("tr");
    if (tr) location.hash = "#t=" + tr.dataset.index;
  });
  renderCharts();
  renderTable();
}

function route() {
  const match = location.hash.match(/^#t=(\d+)$/);
  if (match && +match[1] < RUN.rows.length) { showTrajectory(embeddedSource, +match[1]); return; }
  hideTrajectory();
}

setUpRunPage();
window.addEventListener("hashchange", route);
route();
window.__uagTableRows = document.querySelectorAll("#run-table tbody tr").length;
requestAnimationFrame(() => { window.__uagRendered = performance.now(); });
