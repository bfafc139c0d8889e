"use strict";
// The run table is built at load; a trajectory's JSON is parsed and its tokens turned into spans only when
// it is opened (#t=<index>), in chunks, so a 32k-token record does not freeze the page.
const RUN = JSON.parse(document.getElementById("run-data").textContent);
const COLUMNS = [["instance", "instance"], ["kind", "kind"], ["exit_reason", "exit reason"], ["reward", "reward"],
  ["masked", "masked"], ["turns", "turns"], ["tokens", "tokens"], ["seconds", "seconds"], ["flags", "flags"]];
const TOKEN_CHUNK = 2000;
const details = {};
let sortKey = null, sortDir = 1, tokenJob = 0;

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function svgEl(tag, attrs) {
  const node = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, value);
  return node;
}

function fmt(key, value) {
  if (value === null || value === undefined) return "";
  if (typeof value === "boolean") return value ? "yes" : "no";
  if (key === "seconds" && typeof value === "number") return value.toFixed(1);
  if (key === "reward" && typeof value === "number") return String(+value.toFixed(3));
  return String(value);
}

function compare(a, b) {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return typeof a === "number" && typeof b === "number" ? a - b : String(a).localeCompare(String(b));
}

function detail(index) {
  if (!(index in details)) details[index] = JSON.parse(document.getElementById("t-" + index).textContent);
  return details[index];
}

// ---- run page ----

function renderTable() {
  const filter = document.getElementById("filter").value.trim().toLowerCase();
  let rows = RUN.rows.map((row, index) => [row, index]);
  if (filter) rows = rows.filter(([row]) => row.search.includes(filter));
  if (sortKey) rows.sort(([a], [b]) => compare(a[sortKey], b[sortKey]) * sortDir);
  const fragment = document.createDocumentFragment();
  for (const [row, index] of rows) {
    const tr = document.createElement("tr");
    tr.dataset.index = index;
    if (row.resolved) tr.classList.add("resolved");
    if (row.flags) tr.classList.add("flagged");
    for (const [key] of COLUMNS) {
      const td = document.createElement("td");
      td.className = "c-" + key;
      td.textContent = fmt(key, row[key]);
      tr.appendChild(td);
    }
    fragment.appendChild(tr);
  }
  document.querySelector("#run-table tbody").replaceChildren(fragment);
  document.getElementById("shown").textContent = `${rows.length} of ${RUN.rows.length} trajectories`;
}

function barChart(id, title, items) {
  const width = 320, rowHeight = 16, labelWidth = 130;
  const most = Math.max(1, ...items.map(([, count]) => count));
  const svg = svgEl("svg", {width, height: items.length * rowHeight + 4, role: "img"});
  items.forEach(([label, count], row) => {
    const y = row * rowHeight;
    const text = svgEl("text", {x: 0, y: y + 12});
    text.textContent = String(label).slice(0, 20);
    const bar = svgEl("rect", {x: labelWidth, y: y + 2, height: rowHeight - 4, width: Math.max(1, (width - labelWidth - 40) * count / most)});
    const value = svgEl("text", {x: labelWidth + (width - labelWidth - 40) * count / most + 4, y: y + 12});
    value.textContent = count;
    svg.append(text, bar, value);
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

function renderCharts() {
  const rows = RUN.rows, graded = rows.filter((row) => row.resolved !== null && row.resolved !== undefined);
  const resolved = graded.filter((row) => row.resolved).length;
  const exits = new Map();
  for (const row of rows) exits.set(row.exit_reason ?? "none", (exits.get(row.exit_reason ?? "none") || 0) + 1);
  const rate = graded.length ? (100 * resolved / graded.length).toFixed(1) + "%" : "n/a";
  document.getElementById("charts").replaceChildren(
    barChart("chart-resolved", `resolved ${resolved} / ${graded.length} (${rate})`, [["resolved", resolved], ["not resolved", graded.length - resolved]]),
    barChart("chart-exit", "exit reasons", [...exits.entries()].sort((a, b) => b[1] - a[1])),
    barChart("chart-turns", "turns", histogram(rows.map((row) => row.turns), 10)),
    barChart("chart-tokens", "tokens", histogram(rows.map((row) => row.tokens), 10)));
}

function setUpRunPage() {
  document.getElementById("title").textContent = RUN.title;
  for (const problem of RUN.problems) document.getElementById("problems").append(el("li", {}, problem));
  for (const row of RUN.rows) row.search = [row.instance, row.exit_reason, row.kind].join(" ").toLowerCase();
  const head = document.querySelector("#run-table thead tr");
  for (const [key, label] of COLUMNS) {
    const th = el("th", {"data-key": key}, label);
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

// ---- trajectory page ----

function text(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function renderFacts(d) {
  const facts = [["source", d.source], ["kind", d.kind], ["exit reason", d.exit_reason], ["reward", d.reward],
    ["resolved", d.resolved], ["masked", d.masked], ["turns", d.turns], ["seconds", d.seconds], ["error", d.error],
    ["usage", d.usage && Object.keys(d.usage).length ? JSON.stringify(d.usage) : null], ["prompt tokens", d.prompt_length],
    ["response tokens", d.response_ids ? d.response_ids.length : null],
    ["weight versions", d.weight_versions ? JSON.stringify(d.weight_versions) : null]];
  const list = document.getElementById("t-facts");
  list.replaceChildren();
  for (const [label, value] of facts) {
    if (value !== null && value !== undefined && value !== "") list.append(el("dt", {}, label), el("dd", {}, fmt(label, value)));
  }
}

function renderFlags(d) {
  const counts = Object.entries(d.check.counts).map(([mask, count]) => `mask ${mask}: ${count}`).join(" · ");
  document.getElementById("mask-counts").textContent = d.response_ids ? (counts || "no tokens") : "no token ids in this record";
  const list = document.getElementById("flags");
  list.replaceChildren(...d.check.flags.map((flag) => el("li", {}, flag)));
  if (d.response_ids && !d.check.flags.length) list.append(el("li", {class: "ok", style: "color:#070"}, "no flags"));
}

function outcomeRows(report) {
  const rows = [];
  for (const [kind, result] of Object.entries(report.tests || {})) {
    for (const test of result.success || []) rows.push([kind, test, "pass"]);
    for (const test of result.failure || []) rows.push([kind, test, "fail"]);
  }
  return rows;
}

function renderReport(report) {
  const box = document.getElementById("report");
  if (!report) { box.replaceChildren(el("p", {}, "no reward report")); return; }
  const facts = el("dl", {id: "report-facts"});
  for (const key of ["status", "resolved", "reward", "caused_by", "sandbox", "exit_code", "error"]) {
    if (report[key] !== null && report[key] !== undefined) facts.append(el("dt", {}, key), el("dd", {"data-key": key}, fmt(key, report[key])));
  }
  const table = el("table", {id: "tests"}, el("tr", {}, el("th", {}, "set"), el("th", {}, "test"), el("th", {}, "outcome"), el("th", {}, "parsed status")));
  for (const [kind, test, outcome] of outcomeRows(report)) {
    const status = (report.test_statuses || {})[test];
    table.append(el("tr", {"data-outcome": outcome, "data-kind": kind, "data-test": test},
      el("td", {}, kind), el("td", {class: "test"}, test), el("td", {class: "outcome"}, outcome), el("td", {}, status ?? "missing")));
  }
  const restored = Object.entries(report.restored || {}).map(([file, why]) => el("li", {}, `${file}: ${why}`));
  const integrity = (report.integrity_problems || []).map((problem) => el("li", {}, problem));
  const tests = table.children.length > 1 ? table : el("p", {id: "tests-none"}, "no per-test outcomes in this report (its task is graded by a command)");
  box.replaceChildren(facts, tests,
    el("h3", {}, "restored runner files"), restored.length ? el("ul", {id: "restored"}, ...restored) : el("p", {}, "none"),
    el("h3", {}, "integrity problems"), integrity.length ? el("ul", {id: "integrity"}, ...integrity) : el("p", {}, "none"));
  const rerun = report.runner_rerun;
  if (rerun) box.append(el("h3", {}, "graded again with the runner's modules as at the start"),
    el("p", {id: "runner-rerun"}, `${rerun.modules.join(", ")}: ${rerun.status}` + (rerun.not_passed.length ? `; not passed: ${rerun.not_passed.join(", ")}` : "")));
  if (report.log) box.append(el("details", {}, el("summary", {}, "test log"), el("pre", {}, report.log)));
}

function renderPatch(patch) {
  const box = document.getElementById("patch");
  if (!patch) { box.textContent = "(empty patch)"; return; }
  const fragment = document.createDocumentFragment();
  for (const line of patch.split("\n")) {
    let kind = "";
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")) kind = "file";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    else if (line.startsWith("@@")) kind = "hunk";
    fragment.append(el("span", {class: kind}, line + "\n"));
  }
  box.replaceChildren(fragment);
}

function renderSteps(d) {
  const box = document.getElementById("steps");
  box.replaceChildren();
  d.steps.forEach((step, index) => {
    const wrong = step.error === "format_error";
    const div = el("div", {class: "step" + (wrong ? " format-error" : ""), "data-turn": step.turn ?? index + 1},
      el("div", {}, el("b", {}, `turn ${step.turn ?? index + 1}`), " ", step.tool ? `tool ${step.tool}` : "",
        wrong ? el("span", {class: "badge"}, "format error") : null,
        step.error && !wrong ? el("span", {class: "badge"}, step.error) : null,
        step.exit_code !== null && step.exit_code !== undefined ? ` · exit code ${step.exit_code}` : ""));
    if (step.assistant && step.assistant.content) div.append(el("div", {class: "label"}, "assistant"), el("pre", {class: "assistant"}, text(step.assistant.content)));
    div.append(el("div", {class: "label"}, "tool call"), el("pre", {class: "action"}, text(step.action)));
    div.append(el("div", {class: "label"}, "observation"), el("pre", {class: "observation"}, text(step.observation)));
    box.append(div);
  });
  for (const message of d.messages) {
    box.append(el("div", {class: "step message"}, el("span", {class: "label"}, message.role),
      el("pre", {}, text(message.content) + (message.tool_calls ? "\n" + text(message.tool_calls) : ""))));
  }
  if (!box.children.length) box.append(el("p", {}, "no steps or messages recorded"));
}

function renderTokens(d) {
  const box = document.getElementById("tokens");
  box.replaceChildren();
  delete box.dataset.done;
  const job = ++tokenJob;
  const ids = d.response_ids || [], mask = d.response_mask || [], logprobs = d.response_logprobs, texts = d.tokens;
  const bad = new Set(d.check.bad), roles = new Map(d.spans.map((span) => [span.start, span.role]));
  if (!ids.length) { box.textContent = "no token ids"; box.dataset.done = "1"; return; }
  let index = 0;
  function chunk() {
    if (job !== tokenJob) return;  // another trajectory was opened meanwhile
    const fragment = document.createDocumentFragment(), end = Math.min(index + TOKEN_CHUNK, ids.length);
    for (; index < end; index++) {
      const m = mask[index], logprob = logprobs ? logprobs[index] : null;
      if (roles.has(index)) fragment.append(el("span", {class: "turn-mark role"}, roles.get(index)));
      else if (m === 1 && mask[index - 1] !== 1) fragment.append(el("span", {class: "turn-mark"}, "turn"));
      const span = document.createElement("span");
      span.className = "tok m" + (m === undefined ? "x" : m) + (bad.has(index) ? " bad" : "");
      if (m === 1 && typeof logprob === "number") span.style.background = `hsl(${Math.round(120 * Math.exp(logprob))},70%,82%)`;
      const shown = texts ? texts[index] : ids[index] + " ";
      span.textContent = shown;
      span.title = `#${index} id ${ids[index]} ${JSON.stringify(texts ? texts[index] : null)} mask ${m} logprob ${logprob ?? "none"}`;
      fragment.append(span);
    }
    box.append(fragment);
    if (index < ids.length) setTimeout(chunk, 0);
    else { box.dataset.done = "1"; window.__uagTokensRendered = performance.now(); }
  }
  chunk();
}

function showTrajectory(index) {
  const d = detail(index);
  document.getElementById("run-page").hidden = true;
  document.getElementById("trajectory-page").hidden = false;
  document.getElementById("t-title").textContent = d.instance_id;
  renderFacts(d);
  renderFlags(d);
  renderReport(d.reward_report);
  renderPatch(d.patch);
  renderSteps(d);
  renderTokens(d);
  window.scrollTo(0, 0);
}

function route() {
  const match = location.hash.match(/^#t=(\d+)$/);
  if (match && +match[1] < RUN.rows.length) { showTrajectory(+match[1]); return; }
  tokenJob++;
  document.getElementById("trajectory-page").hidden = true;
  document.getElementById("run-page").hidden = false;
}

setUpRunPage();
window.addEventListener("hashchange", route);
route();
window.__uagTableRows = document.querySelectorAll("#run-table tbody tr").length;
requestAnimationFrame(() => { window.__uagRendered = performance.now(); });
