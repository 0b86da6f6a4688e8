// The phone window (phone-<presetId>): one character's conversation as a messaging thread —
// the user, the character, and what other characters said to it — loaded from the transcript in
// pages (scroll up or "Earlier messages" for older ones), and an input whose turns run as the
// phone window (generate_express only). The reply also plays on the character's own window (the
// shell mirrors it there). Presentation only: history and turns live in the core.

import { invoke, channel, windowContext, listen, EVENTS } from "./ipc.js";
import { forgetTyping, restCaret, setForgetsInput } from "./typing.js";

const PAGE = 30;
/** Colours of the avatar dot per built-in palette (ui/character/character.js PALETTES). */
const DOT = { rose: "#f4a3bd", sky: "#86bdf2", mint: "#7fd6b5", amber: "#f2c46d", lilac: "#c3a6f0", slate: "#7d8aa3" };

const $ = (id) => document.getElementById(id);
const thread = $("thread");
const list = $("messages");
const olderRow = $("older");
const compose = $("compose");
const input = $("compose-input");
const status = $("status");

let preset = null;
let oldestId = null;
let loaded = false;
let loading = false;
let more = false;
let turnRunning = false;
/** The id of the newest line shown (so a reload only appends what is new). */
let newestId = 0;
/** Settles once the ids of the last phone turn's lines are known. */
let synced = Promise.resolve();

const time = (at) => {
  const d = new Date(at);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
};

/**
 * One message bubble. `entry`: a transcript line ({id, role, text, at, speaker?}) or a live one;
 * `speaker` names the other character who said a line to this one (an addressed turn).
 */
function bubble(entry) {
  const li = document.createElement("li");
  const other = !!entry.speaker;
  li.className = `msg ${other ? "other" : entry.role}`;
  if (entry.id) li.dataset.id = entry.id;
  li.dataset.role = entry.role;
  if (other) {
    const from = document.createElement("span");
    from.className = "from";
    from.textContent = entry.speaker;
    li.append(from);
  }
  const text = document.createElement("span");
  text.className = "text";
  text.textContent = entry.text;
  const meta = document.createElement("span");
  meta.className = "meta";
  meta.textContent = entry.at ? time(entry.at) : "";
  li.append(text, meta);
  return li;
}

function showEmpty() {
  const empty = list.querySelector(".empty");
  if (list.querySelector(".msg")) empty?.remove();
  else if (!empty) {
    const p = document.createElement("li");
    p.className = "empty";
    p.textContent = `No messages with ${preset?.name ?? "this character"} yet. Say hello!`;
    list.append(p);
  }
}

const atBottom = () => thread.scrollHeight - thread.scrollTop - thread.clientHeight < 40;
const toBottom = () => { thread.scrollTop = thread.scrollHeight; };

/** Load the page before the oldest line shown, keeping the view where it was. */
async function loadOlder() {
  if (loading || (loaded && !more)) return;
  loading = true;
  try {
    const first = !loaded;
    const page = await invoke("phone_history", { before: first ? null : oldestId, limit: PAGE });
    loaded = true;
    const keep = thread.scrollHeight - thread.scrollTop;
    list.prepend(...page.entries.map(bubble));
    if (page.entries.length) {
      oldestId = page.entries[0].id;
      if (first) newestId = page.entries[page.entries.length - 1].id;
    }
    more = page.more;
    olderRow.hidden = !more;
    showEmpty();
    if (first) toBottom();
    else thread.scrollTop = thread.scrollHeight - keep;
    document.body.dataset.pages = String(Number(document.body.dataset.pages ?? 0) + 1);
  } catch (err) {
    status.textContent = err.message;
  } finally {
    loading = false;
  }
}

/** Append lines newer than the newest shown (a turn ran in the character's own window). */
async function loadNewer() {
  await synced;
  if (loading || turnRunning || !loaded) return;
  try {
    const page = await invoke("phone_history", { before: null, limit: PAGE });
    const fresh = page.entries.filter((e) => e.id > newestId);
    if (!fresh.length) return;
    const stick = atBottom();
    list.append(...fresh.map(bubble));
    newestId = fresh[fresh.length - 1].id;
    oldestId ??= fresh[0].id;
    showEmpty();
    if (stick) toBottom();
  } catch (err) {
    status.textContent = err.message;
  }
}

function onTurnEvent(ev, live) {
  switch (ev.type) {
    case "speech":
      live.acc += ev.delta ?? "";
      live.el.querySelector(".text").textContent = live.acc;
      if (atBottom()) toBottom();
      break;
    case "turn_end": {
      turnRunning = false;
      live.el.classList.remove("pending");
      const text = live.el.querySelector(".text");
      if (ev.status === "error") {
        live.el.classList.add("error");
        text.textContent = ev.error ?? "the turn failed";
      } else {
        text.textContent = (ev.status === "ok" ? ev.text : live.acc) || (ev.status === "ok" ? "…" : "(stopped)");
      }
      live.el.querySelector(".meta").textContent = time(new Date().toISOString());
      status.textContent = "";
      toBottom();
      // The turn's lines are stored now (before turn_end): note their ids first, so a reload
      // appends only later ones, then report the bubble done.
      synced = invoke("phone_history", { before: null, limit: 2 })
        .then((p) => {
          if (p.entries.length) newestId = Math.max(newestId, p.entries[p.entries.length - 1].id);
        })
        .catch(() => {});
      synced.then(() => live.started).then((turnId) => invoke("playback_bubble_done", { turnId })).catch(() => {});
      break;
    }
    default:
      break;
  }
}

compose.addEventListener("submit", async (e) => {
  e.preventDefault();
  const text = input.value.trim();
  if (!text || turnRunning) return;
  input.value = "";
  forgetTyping();
  turnRunning = true;
  list.append(bubble({ role: "user", text, at: new Date().toISOString() }));
  const el = bubble({ role: "assistant", text: "…" });
  el.classList.add("pending");
  list.append(el);
  showEmpty();
  toBottom();
  status.textContent = `${preset.name} is typing…`;
  const live = { acc: "", el };
  try {
    live.started = invoke("turn_start", { text, onEvent: channel((ev) => onTurnEvent(ev, live)) });
    document.body.dataset.turnId = await live.started;
  } catch (err) {
    turnRunning = false;
    el.classList.remove("pending");
    el.classList.add("error");
    el.querySelector(".text").textContent = err.message;
    status.textContent = "";
  }
});

document.addEventListener("keydown", (e) => {
  if (e.key === "Escape" && turnRunning) invoke("turn_stop").catch(() => {});
});
restCaret(input);

thread.addEventListener("scroll", () => {
  if (thread.scrollTop < 60 && more) loadOlder();
});
$("load-older").addEventListener("click", () => loadOlder());

function showPreset(p) {
  preset = p;
  $("title").textContent = p.name;
  document.title = `${p.name} — YUI phone`;
  const palette = p.avatar?.kind === "builtin" ? p.avatar.palette : null;
  $("avatar").style.setProperty("--avatar", DOT[palette] ?? "#c9bcd0");
}

async function main() {
  let ctx;
  try {
    ctx = await windowContext();
  } catch (err) {
    status.textContent = err.message;
    return;
  }
  setForgetsInput(ctx.forgets_input);
  showPreset(ctx.preset);
  listen(EVENTS.presetsChanged, (all) => {
    const me = Array.isArray(all) ? all.find((p) => p.id === preset.id) : null;
    if (me) showPreset(me);
  }).catch(() => {});
  // A turn in the character's own window adds lines: show them when it has played.
  listen(EVENTS.playbackFinished, () => loadNewer()).catch(() => {});
  window.addEventListener("focus", () => loadNewer());
  await loadOlder();
  document.body.dataset.loaded = "true";
  input.focus();
}

main();
