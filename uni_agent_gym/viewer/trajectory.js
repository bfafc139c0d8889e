"use strict";
// One trajectory's page, for both pages: `source.detail(key)` gives its data and `source.tokens(d, key,
// offset, limit)` a page of its tokens (the single file slices its embedded arrays; the served app fetches
// each page), drawn a page at a time so a 32k-token record paints its first tokens at once.
const TOKEN_PAGE = 2000;
let tokenJob = 0;

function renderFacts(d) {
  const facts = [["source", d.source], ["kind", d.kind], ["exit reason", d.exit_reason], ["reward", d.reward],
    ["resolved", d.resolved], ["masked", d.masked], ["model turns", d.turns], ["seconds", d.seconds], ["error", d.error],
    ["usage", d.usage && Object.keys(d.usage).length ? JSON.stringify(d.usage) : null], ["prompt tokens", d.prompt_length],
    ["response tokens", d.token_count], ["repository", d.repo], ["language", d.language],
    ["weight versions", d.weight_versions ? JSON.stringify(d.weight_versions) : null]];
  const banner = document.getElementById("t-error");
  banner.hidden = !d.error;
  banner.textContent = d.error ? `${d.exit_reason ?? "error"}: ${d.error}` : "";
  const list = document.getElementById("t-facts");
  list.replaceChildren();
  for (const [label, value] of facts) {
    if (value !== null && value !== undefined && value !== "") list.append(el("dt", {}, label), el("dd", {}, fmt(label, value)));
  }
}

function renderFlags(d) {
  const counts = Object.entries(d.check.counts).map(([mask, count]) => `mask ${mask}: ${count}`).join(" · ");
  const hasTokens = d.token_count !== null && d.token_count !== undefined;
  document.getElementById("mask-counts").textContent = hasTokens ? (counts || "no tokens") : "no token ids in this record";
  const list = document.getElementById("flags");
  list.replaceChildren(...d.check.flags.map((flag) => el("li", {}, flag)));
  if (hasTokens && !d.check.flags.length) list.append(el("li", {class: "ok"}, "no flags"));
  const notes = d.check.notes.map((note) => el("li", {class: "note"}, note));
  if (d.check.unchecked) notes.unshift(el("li", {class: "unchecked", id: "unchecked"}, "masks not checked against the messages: " + d.check.unchecked));
  document.getElementById("check-notes").replaceChildren(...notes);
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

function renderPatch(d) {
  const box = document.getElementById("patch");
  if (d.patch === null || d.patch === undefined) {
    box.textContent = d.reward_report ? "(no patch in this record: its reward report has none; a task graded by a command records none)" : "(no patch in this record)";
    return;
  }
  if (!d.patch) { box.textContent = "(empty patch)"; return; }
  const fragment = document.createDocumentFragment();
  for (const line of d.patch.split("\n")) {
    let kind = "";
    if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")) kind = "file";
    else if (line.startsWith("+")) kind = "add";
    else if (line.startsWith("-")) kind = "del";
    else if (line.startsWith("@@")) kind = "hunk";
    fragment.append(el("span", {class: kind}, line + "\n"));
  }
  box.replaceChildren(fragment);
}

function parsedJSON(value) {
  if (typeof value !== "string") return value;
  try { return JSON.parse(value); } catch (error) { return undefined; }
}

// A tool call as the model meant it: its name, then each argument decoded from the JSON string the API carries
// them in, a string argument (a command, a heredoc) as code rather than as JSON inside JSON.
function renderCall(call) {
  const fn = call.function || call;  // a message's tool_calls entry, or a step's action
  const args = parsedJSON(fn.arguments ?? {});
  const box = el("div", {class: "call"}, el("code", {class: "tool-name"}, String(fn.name ?? "(no name)")));
  if (!args || typeof args !== "object" || Array.isArray(args)) {
    box.append(el("pre", {class: "arg raw", title: "the arguments as sent (not a JSON object)"}, text(fn.arguments)));
    return box;
  }
  for (const [key, value] of Object.entries(args)) {
    const code = typeof value === "string";
    box.append(el("div", {class: "arg", "data-key": key}, el("span", {class: "label"}, key),
      el("pre", {class: code ? "code" : "value"}, code ? value : JSON.stringify(value))));
  }
  return box;
}

// A step's action: a native call {name, arguments}, several calls (`{"tool_calls": [...]}`, refused by the env),
// or the model's text (a text-format call, or a malformed one) as it wrote it.
function renderAction(action) {
  const parsed = parsedJSON(action);
  if (parsed && typeof parsed === "object" && Array.isArray(parsed.tool_calls)) return el("div", {class: "action"}, ...parsed.tool_calls.map(renderCall));
  if (parsed && typeof parsed === "object" && !Array.isArray(parsed) && "name" in parsed) return el("div", {class: "action"}, renderCall(parsed));
  return el("pre", {class: "action"}, text(action));
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
    div.append(el("div", {class: "label"}, "tool call"), renderAction(step.action));
    div.append(el("div", {class: "label"}, "observation"), el("pre", {class: "observation"}, text(step.observation)));
    box.append(div);
  });
  for (const message of d.messages) {
    box.append(el("div", {class: "step message"}, el("span", {class: "label"}, message.role),
      el("pre", {}, text(message.content)), ...(message.tool_calls || []).map(renderCall)));
  }
  if (!box.children.length) box.append(el("p", {}, "no steps or messages recorded"));
}

function appendTokens(box, page) {
  const bad = new Set(page.bad), roles = new Map(page.roles), fragment = document.createDocumentFragment();
  for (let i = 0; i < page.ids.length; i++) {
    const index = page.offset + i, m = page.mask[i], logprob = page.logprobs ? page.logprobs[i] : null;
    const before = i > 0 ? page.mask[i - 1] : page.previous_mask;
    if (roles.has(index)) fragment.append(el("span", {class: "turn-mark role"}, roles.get(index)));
    else if (m === 1 && before !== 1) fragment.append(el("span", {class: "turn-mark"}, "turn"));
    const span = document.createElement("span");
    span.className = "tok m" + (m === undefined ? "x" : m) + (bad.has(index) ? " bad" : "");
    if (m === 1 && typeof logprob === "number") span.style.background = `hsl(${Math.round(120 * Math.exp(logprob))},70%,82%)`;
    span.textContent = page.tokens ? page.tokens[i] : page.ids[i] + " ";
    span.title = `#${index} id ${page.ids[i]} ${JSON.stringify(page.tokens ? page.tokens[i] : null)} mask ${m} logprob ${logprob ?? "none"}`;
    fragment.append(span);
  }
  box.append(fragment);
}

async function renderTokens(source, key, d) {
  const box = document.getElementById("tokens"), progress = document.getElementById("tokens-progress");
  box.replaceChildren();
  delete box.dataset.done;
  const job = ++tokenJob, total = d.token_count || 0;
  if (!total) { box.textContent = "no token ids"; box.dataset.done = "1"; progress.textContent = ""; return; }
  for (let offset = 0; offset < total; offset += TOKEN_PAGE) {
    const page = await source.tokens(d, key, offset, TOKEN_PAGE);
    if (job !== tokenJob) return;  // another trajectory was opened meanwhile
    appendTokens(box, page);
    progress.textContent = offset + TOKEN_PAGE < total ? `${offset + page.ids.length} of ${total} tokens drawn` : "";
    if (offset === 0) requestAnimationFrame(() => { window.__uagTokensFirstPaint = performance.now(); });
    await new Promise((resolve) => setTimeout(resolve, 0));  // let the browser paint between pages
  }
  if (job !== tokenJob) return;
  box.dataset.done = "1";
  window.__uagTokensRendered = performance.now();
}

async function showTrajectory(source, key) {
  const job = tokenJob + 1;
  const d = await source.detail(key);
  if (tokenJob >= job) return;  // left (or another opened) while it loaded
  document.getElementById("run-page").hidden = true;
  document.getElementById("trajectory-page").hidden = false;
  document.getElementById("t-title").textContent = d.instance_id;
  renderFacts(d);
  renderFlags(d);
  renderReport(d.reward_report);
  renderPatch(d);
  renderSteps(d);
  window.scrollTo(0, 0);
  await renderTokens(source, key, d);
}

function hideTrajectory() {
  tokenJob++;
  document.getElementById("trajectory-page").hidden = true;
  document.getElementById("run-page").hidden = false;
}
