// Quick controls: open/close characters, flip switches, jump to settings. A popover: the shell
// hides it when it loses focus (windows.rs) and Escape hides it; it is hidden, not closed, so its
// rows and switches keep following the bridge events.

import { invoke, currentWindow, listen, EVENTS } from "./ipc.js";
import { setStatus, wirePresets, wireSwitches } from "./panels.js";
import { mountQuick } from "./relations-panel.js";
import { mountQuiet } from "./quiet.js";

// Quiet mode: "Quiet for 1 hour", "until tomorrow", "off" (the core stores it: manners_quiet).
const showQuiet = mountQuiet(document.getElementById("quiet-row"));
invoke("manners_get").then(showQuiet).catch((err) => setStatus(err.message, true));

const warning = document.getElementById("browser-warning");

document.getElementById("open-settings").addEventListener("click", () => {
  invoke("window_open", { which: "settings" }).catch((err) => setStatus(err.message, true));
});

document.addEventListener("keydown", (e) => {
  if (e.key === "Escape") currentWindow().hide().catch((err) => setStatus(err.message, true));
});

// Each character row gets a Phone button: its conversation in a messaging window.
document.addEventListener("yui:presets-rendered", () => {
  for (const li of document.querySelectorAll("#preset-list li[data-preset-id]")) {
    if (li.querySelector(".phone")) continue;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "phone";
    b.textContent = "Phone";
    b.title = "Open this character's phone";
    b.addEventListener("click", () => {
      invoke("window_open", { which: `phone-${li.dataset.presetId}` }).catch((err) => setStatus(err.message, true));
    });
    li.insertBefore(b, li.querySelector(".toggle-open"));
  }
});

// With the push transport each character row shows its connection, in plain words.
const connections = new Map();
const connWords = (c) => {
  switch (c?.state) {
    case "connecting": return "connecting…";
    case "connected": return "connected";
    case "reconnecting": return `reconnecting in ${Math.ceil((c.retry_in_ms ?? 0) / 1000)} s: ${c.error ?? ""}`;
    case "closed": return "disconnected";
    default: return "";
  }
};
function drawConnections() {
  for (const li of document.querySelectorAll("#preset-list li[data-preset-id]")) {
    const c = connections.get(li.dataset.presetId);
    let span = li.querySelector(".conn");
    if (!c) { span?.remove(); continue; }
    if (!span) {
      span = document.createElement("span");
      span.className = "conn";
      li.insertBefore(span, li.querySelector(".phone"));
    }
    span.dataset.state = c.state;
    span.textContent = connWords(c);
    span.title = "Connection to the push backend";
  }
}
document.addEventListener("yui:presets-rendered", drawConnections);
listen(EVENTS.connection, (p) => {
  if (!p?.preset_id) return;
  connections.set(p.preset_id, p.state);
  drawConnections();
}).catch((e) => console.warn("cannot listen for connection changes", e));

// The microphone: live or not, for whom, and one click stops it (the core's MicStatus).
const micState = document.getElementById("mic-state");
const micStop = document.getElementById("mic-stop");
const names = new Map();
function showMic(s) {
  const who = names.get(s?.preset_id) ?? s?.preset_id ?? "";
  micState.textContent = s?.live
    ? `On${who ? ` for ${who}` : ""}: ${{ hearing: "hearing you", paused: "paused while a character speaks" }[s.state] ?? s.state}`
    : s?.message ? `Off: ${s.message}` : "Off";
  micState.dataset.live = String(!!s?.live);
  micStop.hidden = !s?.live;
}
micStop.addEventListener("click", () => invoke("mic_stop").catch((err) => setStatus(err.message, true)));
listen(EVENTS.mic, showMic).catch((e) => console.warn("cannot listen for the microphone", e));
document.addEventListener("yui:presets-rendered", () => {
  for (const li of document.querySelectorAll("#preset-list li[data-preset-id]")) {
    names.set(li.dataset.presetId, li.querySelector(".name")?.textContent ?? li.dataset.presetId);
  }
});

async function main() {
  try {
    await Promise.all([
      wireSwitches((s) => { warning.hidden = !s.browser; }),
      wirePresets(document.getElementById("preset-list")),
    ]);
  } catch (err) {
    setStatus(err.message, true);
  }
  try {
    for (const c of await invoke("push_connections")) connections.set(c.preset_id, c.state);
    drawConnections();
  } catch (err) {
    setStatus(err.message, true);
  }
  invoke("mic_status").then(showMic).catch((err) => setStatus(err.message, true));
  // The band word toward the user in each preset row (rows exist now).
  await mountQuick(document.getElementById("preset-list")).catch((err) => setStatus(err.message, true));
}

main();
