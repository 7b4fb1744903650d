// bunco-pi console: one snapshot of the night per server-sent event; no library needed.
"use strict";
let snap = null;
let csrf = null;
let roster = null; // the host's roster being edited, before the night
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
function route() { show((location.hash || "#board").slice(1) || "board"); }

const PHASES = {lobby: "waiting for tables", ready: "ready: the bell starts the round", playing: "playing",
  finishing: "the bell has rung: finishing turns", results: "round over: players move",
  break: "the break", prizes: "settling prizes", ended: "the night is over"};

function renderBoard() {
  $("title").textContent = `Bunco night: ${snap.night}`;
  let status = PHASES[snap.phase] || snap.phase;
  if (snap.round) status = `Set ${snap.set}, round ${snap.round} (target ${snap.target}) · ${status}`;
  if (snap.waiting_for && snap.waiting_for.length && snap.phase !== "lobby")
    status = snap.phase === "finishing" ? `${status} · the round waits for table ${snap.waiting_for.join(", ")}`
      : status.replace(/playing$/, `playing at table ${snap.waiting_for.join(", ")}`);
  if (snap.phase === "lobby") status += ` · online: ${snap.online.length} of ${snap.tables}`;
  if (snap.traveler) status += ` · fuzzy die: ${snap.traveler}`;
  $("status").textContent = status;
  const tables = $("tables");
  tables.replaceChildren();
  for (const t of snap.board) {
    const tags = [];
    if (!t.online) tags.push(el("span", {class: "tag off"}, "offline"));
    if (t.waiting) tags.push(el("span", {class: "tag wait"}, "playing"));
    if (t.ended_round) tags.push(el("span", {class: "tag bell"}, "rang the bell"));
    const seats = el("ul", {class: "seats"});
    t.seats.forEach((s, i) => seats.append(el("li", {class: (s.name === t.roller ? "roller " : "") + (s.ghost ? "ghost" : "")},
      `${i + 1}. ${s.name}${s.name === t.roller ? " ◀ rolls" : ""}`)));
    const score = t.last_score && snap.phase !== "playing" && snap.phase !== "finishing" ? t.last_score : t.score;
    tables.append(el("div", {class: "table" + (t.waiting ? " waiting" : "") + (t.online ? "" : " offline"), id: `table-${t.table}`},
      el("h2", {}, t.table === 1 ? "Head table" : `Table ${t.table}`, el("span", {}, ...tags)),
      el("div", {class: "score", "data-score": score.join("-")}, `${score[0]} – ${score[1]}`), seats,
      ...(t.next_seats ? [el("p", {class: "next"}, "Next round: " + t.next_seats.map((s, i) => `${i + 1}. ${s.name}${s.ghost ? " (ghost)" : ""}`).join(", "))] : [])));
  }
  if (!snap.board.length && snap.phase === "lobby") {
    for (let n = 1; n <= snap.tables; n++) {
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
    el("td", {}, p.cash ? `$${p.amount.toFixed(2)}` : "")));
  return el("table", {}, body);
}

function renderStandings() {
  $("standings-note").textContent = snap.final ? "Final standings." :
    "As they stand now; the prizes column is what each player would take if the night ended now.";
  const body = $("standings").tBodies[0];
  body.replaceChildren();
  for (const r of snap.standings) body.append(el("tr", {}, el("td", {}, r.name + (r.traveler ? " (fuzzy die)" : "")),
    el("td", {}, r.wins), el("td", {}, r.losses), el("td", {}, r.buncos), el("td", {}, r.baby_buncos),
    el("td", {}, r.points), el("td", {class: "prizes"}, r.prizes.join(", "))));
  $("prizes-final").classList.toggle("hidden", !snap.final);
  const prizes = $("prizes").tBodies[0];
  prizes.replaceChildren();
  if (snap.final) for (const row of prizeTable().tBodies[0].rows) prizes.append(row.cloneNode(true));
}

function renderHost() {
  $("login").classList.toggle("hidden", !!csrf);
  $("desk").classList.toggle("hidden", !csrf);
  if (!csrf || !snap) return;
  const lobby = snap.phase === "lobby";
  $("roster-card").classList.toggle("hidden", !lobby);
  $("act-start").classList.toggle("hidden", !lobby);
  if (lobby && roster === null) roster = snap.roster.map((r) => ({...r}));
  renderRoster();
  const seats = $("seats").tBodies[0];
  seats.replaceChildren();
  $("seats-card").classList.toggle("hidden", lobby);
  for (const p of snap.players || []) {
    const cell = el("td");
    if (p.left) {
      cell.append("left (a ghost plays her seat)");
    } else if (p.ghost) {
      const name = el("input", {placeholder: "late arrival's name", id: `arrive-name-${p.id}`, maxLength: 40});
      cell.append(name, el("button", {id: `arrive-${p.id}`, onclick: () => act("arrive", {player: p.id, name: name.value})}, "Seat"));
    } else {
      cell.append(el("button", {id: `leave-${p.id}`, onclick: () => act("leave", {player: p.id})}, "Leaves"));
    }
    seats.append(el("tr", {}, el("td", {}, p.ghost && !p.left ? `${p.name} (ghost)` : p.name), cell));
  }
  const undo = $("undo-buttons");
  undo.replaceChildren();
  for (let n = 1; n <= snap.tables; n++)
    undo.append(el("button", {id: `undo-${n}`, onclick: () => act("undo", {table: n})}, `Table ${n}`));
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
  renderBoard();
  renderStandings();
  renderHost();
}

function say(text, error = false) {
  const m = $("message");
  m.textContent = text;
  m.className = error ? "error" : "";
}

async function act(action, body = {}) {
  const res = await fetch(`/api/host/${action}`, {method: "POST", credentials: "same-origin",
    headers: {"Content-Type": "application/json", "X-CSRF-Token": csrf || ""}, body: JSON.stringify(body)});
  const data = await res.json().catch(() => ({error: `HTTP ${res.status}`}));
  if (res.status === 401) { csrf = null; renderHost(); }
  say(data.ok ? data.message : data.error, !data.ok);
  if (action === "roster" && data.ok) roster = null;
  return data;
}

async function session() {
  const res = await fetch("/api/session", {credentials: "same-origin"});
  const data = await res.json();
  csrf = data.host ? data.csrf : null;
  renderHost();
}

function connect() {
  const source = new EventSource("/events");
  source.onopen = () => { $("banner").classList.remove("show"); session().catch(() => {}); };
  source.onmessage = (event) => { snap = JSON.parse(event.data); if (snap.night !== undefined) render(); };
  source.onerror = () => {
    $("banner").classList.add("show");
    if (source.readyState === EventSource.CLOSED) { setTimeout(connect, 1000); }
  };
}

document.addEventListener("DOMContentLoaded", () => {
  window.addEventListener("hashchange", route);
  route();
  $("login").addEventListener("submit", async (e) => {
    e.preventDefault();
    const res = await fetch("/api/login", {method: "POST", credentials: "same-origin",
      headers: {"Content-Type": "application/json"}, body: JSON.stringify({password: $("password").value})});
    const data = await res.json().catch(() => ({}));
    if (data.host) { csrf = data.csrf; say("Logged in as the host"); } else say(data.error || "login failed", true);
    $("password").value = "";
    renderHost();
  });
  document.querySelectorAll("button[data-act]").forEach((b) => b.addEventListener("click", () => act(b.dataset.act)));
  $("logout").addEventListener("click", async () => {
    await fetch("/api/logout", {method: "POST", credentials: "same-origin", headers: {"X-CSRF-Token": csrf || ""}});
    csrf = null; say("Logged out"); renderHost();
  });
  $("add-name").addEventListener("click", () => {
    const name = $("new-name").value.trim();
    if (name) { roster.push({name, here: true}); $("new-name").value = ""; renderRoster(); }
  });
  $("save-roster").addEventListener("click", () => act("roster", {roster}));
  connect();
});
