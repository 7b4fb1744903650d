// bunco-pi console: one snapshot of the night per server-sent event; no library needed.
"use strict";
let snap = null;
// The CSRF token comes only with the log-in's answer (the server never hands it out again for
// the cookie): this tab keeps it for as long as the tab lives.
let csrf = sessionStorage.getItem("bunco-csrf");
function keepCsrf(token) {
  csrf = token;
  if (token) sessionStorage.setItem("bunco-csrf", token); else sessionStorage.removeItem("bunco-csrf");
}
let roster = null; // the host's roster being edited, before the night
let pending = null; // a confirmed destructive action, held back UNDO_SECONDS for an Undo
const UNDO_SECONDS = 5;
// A hall of 500 tables: the board draws one page of PAGE tables (as the Pi's /board does), the
// desk at most DESK_TABLES of those its filter picks, and a patch redraws only what it touched.
const PAGE = 20;
const DESK_TABLES = 20;
let boardPage = 1;
let foundTable = null; // the table "find my table" last pointed at
let dirty = {standings: true};
const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") node.className = v; else if (k.startsWith("data-")) node.setAttribute(k, v);
    else node[k] = v;
  }
  for (const c of children) node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return node;
}

function show(view) {
  for (const v of ["board", "standings", "host"]) {
    $("view-" + v).classList.toggle("hidden", v !== view);
  }
  document.querySelectorAll("nav a[data-view]").forEach((a) => a.classList.toggle("on", a.dataset.view === view));
}
function route() { show(view()); render(); }
function view() { return (location.hash || "#board").slice(1) || "board"; }
const pages = () => Math.max(1, Math.ceil(snap.tables / PAGE));

function pagerLinks() {
  const pager = $("pager");
  pager.replaceChildren();
  const count = pages();
  if (count === 1) { $("page-of").textContent = ""; return; }
  boardPage = Math.min(boardPage, count);
  const low = (boardPage - 1) * PAGE + 1, high = Math.min(boardPage * PAGE, snap.tables);
  $("page-of").textContent = `Tables ${low}–${high} of ${snap.tables}`;
  pager.append("Tables: ");
  for (let n = 1; n <= count; n++) {
    const a = el("a", {href: `/board?group=${n}`, class: n === boardPage ? "on" : "", id: `page-${n}`},
      `${(n - 1) * PAGE + 1}–${Math.min(n * PAGE, snap.tables)}`);
    a.addEventListener("click", (e) => { e.preventDefault(); boardPage = n; renderBoard(); });
    pager.append(a, " ");
  }
}

function renderBoard() {
  $("title").textContent = `Bunco night: ${snap.night}`;
  $("status").textContent = snap.status;
  const tables = $("tables");
  tables.replaceChildren();
  pagerLinks();
  const low = (boardPage - 1) * PAGE + 1, high = boardPage * PAGE;
  for (const t of snap.board) {
    if (t.table < low || t.table > high) continue;
    const tags = [];
    if (!t.online) tags.push(el("span", {class: "tag off"}, "offline"));
    if (t.waiting) tags.push(el("span", {class: "tag wait"}, "playing"));
    if (t.ended_round) tags.push(el("span", {class: "tag bell"}, "rang the bell"));
    const seats = el("ul", {class: "seats"});
    t.seats.forEach((s, i) => seats.append(el("li", {class: (s.name === t.roller ? "roller " : "") + (s.ghost ? "ghost" : "")},
      `${i + 1}. ${s.name}${s.name === t.roller ? " ◀ rolls" : ""}`)));
    const score = t.last_score && snap.phase !== "playing" && snap.phase !== "finishing" ? t.last_score : t.score;
    tables.append(el("div", {class: "table" + (t.waiting ? " waiting" : "") + (t.online ? "" : " offline") + (t.table === foundTable ? " found-here" : ""), id: `table-${t.table}`},
      el("h2", {}, t.table === 1 ? "Head table" : `Table ${t.table}`, el("span", {}, ...tags)),
      el("div", {class: "score", "data-score": score.join("-")}, `${score[0]} – ${score[1]}`), seats,
      ...(t.next_seats ? [el("p", {class: "next"}, "Next round: " + t.next_seats.map((s, i) => `${i + 1}. ${s.name}${s.ghost ? " (ghost)" : ""}`).join(", "))] : [])));
  }
  if (!snap.board.length && snap.phase === "lobby") {
    for (let n = low; n <= Math.min(high, snap.tables); n++) {
      const on = snap.online.includes(n);
      tables.append(el("div", {class: "table" + (on ? "" : " offline"), id: `table-${n}`},
        el("h2", {}, n === 1 ? "Head table" : `Table ${n}`, el("span", {class: "tag" + (on ? "" : " off")}, on ? "online" : "offline"))));
    }
  }
  const final = $("final");
  final.replaceChildren();
  if (snap.final) final.append(el("h2", {}, "Prizes"), prizeTable());
}

function prizeTable() {
  const body = el("tbody");
  for (const p of snap.prizes) body.append(el("tr", {}, el("td", {}, p.name), el("td", {}, p.winner),
    el("td", {class: "money"}, p.cash ? `$${p.amount.toFixed(2)}` : "")));
  return el("table", {class: "prize-list"}, body);
}

function renderStandings() {
  dirty.standings = false;
  $("standings-note").textContent = snap.final ? "Final standings." :
    "As they stand now; the prizes column is what each player would take if the night ended now.";
  const body = $("standings").tBodies[0];
  body.replaceChildren();
  for (const r of snap.standings) body.append(el("tr", {}, el("td", {class: "name"}, r.name + (r.traveler ? " (fuzzy die)" : "")),
    el("td", {}, r.wins), el("td", {}, r.losses), el("td", {}, r.buncos), el("td", {}, r.baby_buncos),
    el("td", {}, r.points), el("td", {class: "prizes"}, r.prizes.join(", "))));
  $("prizes-final").classList.toggle("hidden", !snap.final);
  const prizes = $("prizes").tBodies[0];
  prizes.replaceChildren();
  if (snap.final) for (const row of prizeTable().tBodies[0].rows) prizes.append(row.cloneNode(true));
}

// A timed round's minutes left: the head's "left" counted down from when this page received
// it, by the page's own clock (the phone's clock and the head's need not agree).
let timerAt = 0;
const TIMER_WORDS = {round: "left", warn: "left: nearly time!", pause: "paused", move: "to move"};
function renderTimer() {
  const t = snap && snap.timer;
  const p = $("timer");
  p.classList.toggle("hidden", !t);
  if (!t) return;
  const gone = t.phase === "pause" ? 0 : (performance.now() - timerAt) / 1000;
  const left = Math.max(0, Math.ceil(t.left - gone - 0.001));
  const clock = `${Math.floor(left / 60)}:${String(left % 60).padStart(2, "0")}`;
  p.textContent = `${clock} ${TIMER_WORDS[t.phase] || ""}`;
  p.className = `timer ${t.phase}`;
}

function renderHost() {
  $("login").classList.toggle("hidden", !!csrf);
  $("desk").classList.toggle("hidden", !csrf);
  if (!csrf || !snap) return;
  const lobby = snap.phase === "lobby";
  $("host-status").textContent = snap.status;
  $("roster-card").classList.toggle("hidden", !lobby);
  $("act-start").classList.toggle("hidden", !lobby);
  const over = lobby || snap.phase === "ended"; // nothing to ring, undo, seat or end
  for (const id of ["act-bell", "danger-card", "undo-card"]) $(id).classList.toggle("hidden", over);
  const t = snap.timer;
  $("act-pause").classList.toggle("hidden", !t || t.phase === "pause");
  $("act-resume").classList.toggle("hidden", !t || t.phase !== "pause");
  if (lobby && roster === null) roster = snap.roster.map((r) => ({...r}));
  renderRoster();
  renderGroups();
  const shown = deskTables();
  const typed = {}; // what the host is typing for a late arrival survives the redraw
  document.querySelectorAll("#seats input").forEach((i) => { if (i.value) typed[i.id] = i.value; });
  const focused = document.activeElement && document.activeElement.closest("#seats") ? document.activeElement.id : null;
  const seats = $("seats").tBodies[0];
  seats.replaceChildren();
  $("seats-card").classList.toggle("hidden", over);
  $("tables-card").classList.toggle("hidden", lobby);
  const players = new Map((snap.players || []).map((p) => [p.id, p]));
  for (const t of shown) {
    for (const s of t.seats) {
      const p = players.get(s.id);
      if (p) seats.append(seatRow(p, t.table));
    }
  }
  for (const [id, value] of Object.entries(typed)) if ($(id)) $(id).value = value;
  if (focused && $(focused)) $(focused).focus();
  const undo = $("undo-buttons");
  undo.replaceChildren();
  for (const t of shown)
    undo.append(el("button", {id: `undo-${t.table}`, onclick: () => undoTable(t.table)}, `Table ${t.table}`));
}

function seatRow(p, table) {
  const cell = el("td");
  if (p.left) {
    cell.append("left (a ghost plays her seat)");
  } else if (p.ghost) {
    const name = el("input", {placeholder: "late arrival's name", id: `arrive-name-${p.id}`, maxLength: 32});
    cell.append(name, el("button", {id: `arrive-${p.id}`, onclick: () => act("arrive", {player: p.id, name: name.value})}, "Seat"));
  } else {
    cell.append(el("button", {id: `leave-${p.id}`, class: "danger-quiet", onclick: () => guarded("leave", {player: p.id}, {
      title: `${p.name} leaves?`,
      text: `A ghost plays ${p.name}'s seat from now on; her card keeps what she has won. ` +
        "Once done it cannot be taken back: she cannot have this seat again tonight.",
      yes: `Yes, ${p.name} leaves`, label: `${p.name} leaves`})}, "Leaves"));
  }
  return el("tr", {}, el("td", {class: "at"}, table), el("td", {}, p.ghost && !p.left ? `${p.name} (ghost)` : p.name), cell);
}

// The desk's tables: those the filter picks (a table number, or part of a player's name, case
// and accents aside), in the order the host sorts by, DESK_TABLES at most.
const fold = (text) => text.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(/\s+/g, " ").trim();
const held = (t) => t.waiting && snap.phase === "finishing";
const lateSeats = (t, left) => t.seats.filter((s) => s.ghost && !left.has(s.id)).length;

function deskTables() {
  const query = fold($("desk-filter").value);
  const number = /^\d+$/.test(query) ? Number(query) : null;
  let rows = snap.board.filter((t) => !query || (number !== null ? t.table === number :
    t.seats.some((s) => fold(s.name).includes(query))));
  const sort = $("desk-sort").value;
  const left = new Set((snap.players || []).filter((p) => p.left).map((p) => p.id));
  const key = {held: (t) => (held(t) ? 0 : t.waiting ? 1 : 2), offline: (t) => (t.online ? 1 : 0),
    late: (t) => -lateSeats(t, left), table: () => 0}[sort] || (() => 0);
  rows = rows.map((t) => [key(t), t]).sort((a, b) => a[0] - b[0] || a[1].table - b[1].table).map((r) => r[1]);
  const list = $("desk-tables");
  list.replaceChildren();
  const shown = rows.slice(0, DESK_TABLES);
  for (const t of shown) {
    const tags = [];
    if (!t.online) tags.push(el("span", {class: "tag off"}, "offline"));
    if (held(t)) tags.push(el("span", {class: "tag wait"}, "holds the round"));
    else if (t.waiting) tags.push(el("span", {class: "tag"}, "playing"));
    const late = lateSeats(t, left);
    if (late) tags.push(el("span", {class: "tag bell"}, `${late} seat${late === 1 ? "" : "s"} for late arrivals`));
    list.append(el("li", {id: `desk-table-${t.table}`}, el("b", {}, `Table ${t.table}`), " ",
      `${t.score[0]} – ${t.score[1]} `, ...tags, " ",
      el("span", {class: "names"}, t.seats.map((s) => s.name).join(", "))));
  }
  $("desk-shown").textContent = rows.length > shown.length ?
    `${shown.length} of the ${rows.length} tables shown: type a table number or a name to find the others` :
    `${rows.length} table${rows.length === 1 ? "" : "s"}`;
  return shown;
}

function renderGroups() {
  const groups = snap.groups || [];
  $("groups-card").classList.toggle("hidden", !groups.length);
  const list = $("groups");
  list.replaceChildren();
  for (const g of groups) {
    const down = g.offline.length;
    const all = g.down; // the access point, not its boxes (the head's word: groups.presence)
    list.append(el("li", {class: all ? "down" : down ? "some" : ""},
      el("b", {}, g.name), ` ${g.online} of ${g.count} tables online`,
      ...(all ? [el("span", {class: "offline-list"}, ` · tables ${g.tables} all offline: is the access point down?`)] :
        down ? [el("span", {class: "offline-list"}, ` · offline: ${g.offline.join(", ")}`)] : [])));
  }
}

// A table's undo is asked about but sent at once: held back, it would undo whatever the
// table entered meanwhile instead of the entry the host saw.
function undoTable(n) {
  const t = snap.board.find((row) => row.table === n);
  const score = t ? ` Its score is ${t.score[0]} – ${t.score[1]} now.` : "";
  return guarded("undo", {table: n}, {title: `Undo table ${n}'s last entry?`,
    text: `The table's box takes back its last press, as its own Undo button does.${score}`,
    yes: `Undo table ${n}`, now: true});
}

function endNight() {
  const played = snap.played || 0;
  return guarded("end", {}, {title: "End the night?",
    text: `The prizes are settled on the ${played} round${played === 1 ? "" : "s"} played, and no more ` +
      "rounds can be played tonight. Once done it cannot be taken back.",
    yes: "End the night", label: "The night ends"});
}

function closeHeld() {
  const held = (snap.waiting_for || []).join(", ") || "-";
  return guarded("close-held", {}, {title: "Close the held round?",
    text: `Table ${held} has not finished: its turn ends where it stands, under the house rules' ` +
      "way out for a dead table. Once done it cannot be taken back.",
    yes: "Close the round", label: "The held round closes"});
}

let answer = null; // resolves the question on screen with the host's yes or no

function ask(title, text, yes) {
  const dialog = $("confirm");
  answered(); // the question before, shut but its close event not yet come
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  dialog.returnValue = "";
  dialog.showModal();
  return new Promise((resolve) => { answer = resolve; });
}

// A dialog's close event comes a moment after it shuts. A host quick enough may have asked
// again by then: ask() answers the shut question itself, and a close event that finds the
// dialog open again belongs to that old question, not to the one on screen.
function answered() {
  const dialog = $("confirm");
  if (dialog.open || !answer) return;
  const resolve = answer;
  answer = null;
  resolve(dialog.returnValue === "yes");
}

// A destructive action asks first; confirmed, it waits UNDO_SECONDS with an Undo before it is
// sent (the night itself cannot take it back), unless `now`.
async function guarded(action, body, {title, text, yes, label = "", now = false}) {
  if ($("confirm").open) return null; // a second tap while the question is up
  if (!(await ask(title, text, yes))) { say("Nothing was changed"); return null; }
  if (now) return act(action, body);
  sendPending();
  const p = {action, body, label, left: UNDO_SECONDS};
  p.timer = setInterval(() => { p.left -= 1; if (p.left <= 0) sendPending(); else showPending(); }, 1000);
  pending = p;
  showPending();
  return null;
}

function showPending() {
  $("pending").classList.toggle("hidden", !pending);
  if (pending) $("pending-text").textContent = `${pending.label} in ${pending.left} s`;
}

function sendPending(keepalive = false) {
  const p = pending;
  if (!p) return;
  clearInterval(p.timer);
  pending = null;
  showPending();
  act(p.action, p.body, keepalive);
}

function undoPending() {
  const p = pending;
  if (!p) return;
  clearInterval(p.timer);
  pending = null;
  showPending();
  say(`Undone: ${p.label.charAt(0).toLowerCase()}${p.label.slice(1)} was not sent`);
}

function renderRoster() {
  const body = $("roster").tBodies[0];
  body.replaceChildren();
  (roster || []).forEach((r, i) => {
    const here = el("input", {type: "checkbox", checked: r.here, id: `here-${i}`, onchange: () => { r.here = here.checked; }});
    body.append(el("tr", {}, el("td", {}, r.name), el("td", {}, el("label", {}, here, " here")),
      el("td", {}, el("button", {onclick: () => { roster.splice(i, 1); renderRoster(); }}, "Remove"))));
  });
}

function render() {
  if (!snap) return;
  const v = view();
  if (v === "board") renderBoard();
  renderTimer();
  if (v === "standings" && dirty.standings) renderStandings();
  if (v === "host") renderHost();
}

function patch(data) {
  if (!snap) return;
  const change = JSON.parse(data);
  Object.assign(snap, change.set);
  if ("timer" in change.set) timerAt = performance.now();
  for (const [i, row] of Object.entries(change.rows)) snap.board[Number(i)] = row;
  if ("standings" in change.set || "prizes" in change.set || "final" in change.set) dirty.standings = true;
  render();
}

// Find my table: the Pi searches (one rule for names, in Python) and answers a few lines.
let finding = 0;
async function findTable() {
  const query = $("find-name").value, asked = ++finding, started = performance.now();
  const found = $("found");
  if (!query.trim()) { found.replaceChildren(); return; }
  const res = await fetch(`/api/find?name=${encodeURIComponent(query)}`);
  const data = await res.json();
  if (asked !== finding) return; // a newer keystroke's answer is on its way
  found.replaceChildren();
  for (const p of data.found) {
    const item = el("li", {}, el("b", {}, p.name), `: ${p.place}`);
    if (p.table) item.addEventListener("click", () => showTable(p.table));
    found.append(item);
  }
  if (!data.found.length) found.append(el("li", {}, `No one called “${query}” tonight: try fewer letters, or ask the host.`));
  found.dataset.ms = (performance.now() - started).toFixed(1);
  found.dataset.query = query;
}

function showTable(n) {
  foundTable = n;
  boardPage = Math.ceil(n / PAGE);
  renderBoard();
  const card = $(`table-${n}`);
  if (card) card.scrollIntoView({block: "center"});
}

function say(text, error = false) {
  const m = $("message");
  m.textContent = text;
  m.className = error ? "error" : "";
}

async function act(action, body = {}, keepalive = false) {
  const res = await fetch(`/api/host/${action}`, {method: "POST", credentials: "same-origin", keepalive,
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf || ""}, body: JSON.stringify(body)});
  const data = await res.json().catch(() => ({error: `HTTP ${res.status}`}));
  if (res.status === 401 || (res.status === 403 && !data.ok && /CSRF/.test(data.error || ""))) { keepCsrf(null); renderHost(); }
  say(data.ok ? data.message : data.error, !data.ok);
  if (action === "roster" && data.ok) roster = null;
  return data;
}

async function session() {
  const res = await fetch("/api/session", {credentials: "same-origin"});
  const data = await res.json();
  if (!data.host) keepCsrf(null);
  renderHost();
}

function connect() {
  const source = new EventSource("/events");
  source.onopen = () => { $("banner").classList.remove("show"); session().catch(() => {}); };
  source.onmessage = (event) => {
    snap = JSON.parse(event.data);
    timerAt = performance.now();
    dirty.standings = true;
    if (snap.night !== undefined) render();
  };
  source.addEventListener("patch", (event) => patch(event.data));
  source.onerror = () => {
    $("banner").classList.add("show");
    if (source.readyState === EventSource.CLOSED) { setTimeout(connect, 1000); }
  };
}

document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("hashchange", route);
  setInterval(renderTimer, 250);
  route();
  $("login").addEventListener("submit", async (e) => {
    e.preventDefault();
    const res = await fetch("/api/login", {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify({password: $("password").value})});
    const data = await res.json().catch(() => ({}));
    if (data.host) { keepCsrf(data.csrf); say("Logged in as the host"); } else say(data.error || "login failed", true);
    $("password").value = "";
    renderHost();
  });
  document.querySelectorAll("button[data-act]").forEach((b) => b.addEventListener("click", () => act(b.dataset.act)));
  $("logout").addEventListener("click", async () => {
    await fetch("/api/logout", {method: "POST", credentials: "same-origin", headers: {"X-CSRF-Token": csrf || ""}});
    keepCsrf(null); say("Logged out"); renderHost();
  });
  $("add-name").addEventListener("click", () => {
    const name = $("new-name").value.trim();
    if (name) { roster.push({name, here: true}); $("new-name").value = ""; renderRoster(); }
  });
  $("save-roster").addEventListener("click", () => act("roster", {roster}));
  $("act-end").addEventListener("click", endNight);
  $("find-name").addEventListener("input", findTable);
  $("find").addEventListener("submit", (e) => { e.preventDefault(); findTable(); });
  $("desk-filter").addEventListener("input", renderHost);
  $("desk-sort").addEventListener("change", renderHost);
  $("act-close-held").addEventListener("click", closeHeld);
  $("pending-undo").addEventListener("click", undoPending);
  $("confirm").addEventListener("close", answered);
  // leaving the page sends what the host confirmed rather than dropping it
  window.addEventListener("pagehide", () => sendPending(true));
  connect();
});
