"use strict";
// Helpers both pages use (the single file's page.js and the served app's app.js).

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

function text(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

// The run table's columns: [key, label, title]
const COLUMNS = [["instance", "instance"], ["kind", "kind"], ["exit_reason", "exit reason"], ["reward", "reward"],
  ["masked", "masked"], ["turns", "model turns", "the model's turns: sampled assistant turns (an eval run's steps)"],
  ["tokens", "tokens", "prompt + response tokens"], ["seconds", "seconds"], ["flags", "flags"],
  ["error", "error", "why the episode failed (an eval's env_error: its sandbox failed); hover for all of it"]];

// One row of the run table. A failed episode (one with an error: its sandbox failed) is marked, its error shown.
function tableRow(row, attrs) {
  const tr = el("tr", attrs);
  if (row.resolved) tr.classList.add("resolved");
  if (row.flags) tr.classList.add("flagged");
  if (row.error) tr.classList.add("failed");
  for (const [key] of COLUMNS) {
    const td = el("td", {class: "c-" + key}, fmt(key, row[key]));
    if (key === "error" && row.error) td.title = row.error;
    tr.append(td);
  }
  return tr;
}
