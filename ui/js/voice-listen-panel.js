// Settings → Voice, the microphone's block (<section id="voice-listen">): mode (off by default,
// push-to-talk, hands-free), input device, sensitivity, hang-over, the global push-to-talk
// shortcut (and the keys the desktop bound to it), the speech-to-text server, whether echo
// cancellation was found (full or half duplex), and the microphone now with a Stop button. The core checks and applies everything
// (commands/mic.rs → yui_core::stage / voice::config); this page renders and forwards.

import { invoke, listen, EVENTS } from "./ipc.js";
import { el, setStatus } from "./panels.js";

const MODES = [
  ["off", "Off"],
  ["push_to_talk", "Push-to-talk"],
  ["hands_free", "Hands-free"],
];

const micWords = (s) => {
  if (!s?.live) return s?.message ? `Microphone off: ${s.message}` : "Microphone off.";
  const state = { listening: "listening", hearing: "hearing you", paused: "paused while a character speaks", transcribing: "transcribing" }[s.state] ?? s.state;
  return `Microphone on (${state}).`;
};

/** Mount the block into `section`. */
export async function mountVoiceListen(section) {
  if (!section) return;
  const mode = el("select", { id: "listen-mode" }, ...MODES.map(([v, t]) => el("option", { value: v }, t)));
  const device = el("select", { id: "listen-device" });
  const sensitivity = el("input", { type: "range", id: "listen-sensitivity", min: "0", max: "1", step: "0.05" });
  const hangover = el("input", { type: "number", id: "listen-hangover", min: "100", max: "5000", step: "50" });
  const shortcut = el("input", { type: "text", id: "listen-shortcut", placeholder: "e.g. Ctrl+Alt+Space" });
  const sttBase = el("input", { type: "url", id: "stt-base-url", placeholder: "the chat backend's base URL" });
  const sttModel = el("input", { type: "text", id: "stt-model" });
  const sttLanguage = el("input", { type: "text", id: "stt-language", placeholder: "detected", maxlength: "8" });
  const save = el("button", { type: "button", id: "listen-save" }, "Save");
  const stop = el("button", { type: "button", id: "listen-stop" }, "Stop microphone");
  const echo = el("p", { class: "muted small", id: "listen-echo" });
  const live = el("p", { class: "small", id: "listen-status", role: "status" });
  const shortcutNote = el("span", { class: "muted small", id: "listen-shortcut-note" });
  const row = (label, input, note) => el("label", { class: "row" }, el("span", {}, label), input, note ?? "");
  section.replaceChildren(
    el("h2", {}, "Voice — microphone"),
    el("p", { class: "muted small" }, "Off by default: nothing listens until you choose a mode. Audio is never written to disk; only the recognised text is kept, as your message."),
    row("Microphone", mode),
    row("Input device", device),
    row("Sensitivity", sensitivity),
    row("Hang-over (ms)", hangover),
    row("Push-to-talk shortcut", shortcut, shortcutNote),
    el("p", { class: "muted small" }, "Push-to-talk: hold Space in a character's window, hold the mouse on the character, or hold the shortcut anywhere."),
    row("Speech-to-text base URL", sttBase),
    row("Speech-to-text model", sttModel),
    row("Language", sttLanguage),
    echo,
    el("div", { class: "row" }, save, stop),
    live,
  );
  let stt = {};
  let listenSettings = {};
  const show = (v) => {
    listenSettings = v.listen;
    stt = v.stt;
    mode.value = v.listen.mode;
    showDevices(v.devices, v.listen.input_device);
    sensitivity.value = String(v.listen.sensitivity);
    hangover.value = String(v.listen.hangover_ms);
    shortcut.value = v.listen.shortcut ?? "";
    showShortcut(v);
    sttBase.value = v.stt.base_url ?? "";
    sttModel.value = v.stt.model;
    sttLanguage.value = v.stt.language ?? "";
    echo.textContent = v.echo.found
      ? `Full duplex: ${v.echo.detail}.`
      : `Half duplex: ${v.echo.detail}.`;
    echo.dataset.found = String(v.echo.found);
    showLive(v.status);
    section.dataset.listenLoaded = "true";
  };
  // Taken, or why not; where the desktop binds the keys (its shortcuts portal), the keys it
  // bound, which the user may change in the desktop's own settings.
  const showShortcut = (v) => {
    const taken = v.shortcut_trigger ? `taken: the desktop binds it to ${v.shortcut_trigger}` : "taken";
    shortcutNote.textContent = v.shortcut?.Err ?? (v.shortcut ? taken : "");
  };
  // Back from the desktop's settings (where the shortcut may have been rebound): read it again.
  window.addEventListener("focus", async () => {
    if (section.dataset.listenLoaded !== "true") return;
    try {
      showShortcut(await invoke("voice_listen_get", { devices: false }));
    } catch (err) {
      console.warn("cannot read the shortcut again", err);
    }
  });
  // The device list is read when the user opens it (listing connects to the sound server).
  const showDevices = (devices, current) => {
    const names = new Set(devices?.Ok?.inputs ?? []);
    if (current) names.add(current);
    device.replaceChildren(
      el("option", { value: "" }, "System default"),
      ...[...names].map((n) => el("option", { value: n }, n)),
    );
    device.value = current ?? "";
    if (devices?.Err) device.title = devices.Err;
  };
  let listed = false;
  device.addEventListener("focus", async () => {
    if (listed) return;
    listed = true;
    try {
      const v = await invoke("voice_listen_get", { devices: true });
      showDevices(v.devices, device.value || null);
    } catch (err) {
      setStatus(err.message, true);
    }
  });
  const showLive = (s) => {
    live.textContent = micWords(s);
    live.dataset.live = String(!!s?.live);
    stop.disabled = !s?.live;
  };
  save.addEventListener("click", async () => {
    save.disabled = true;
    const listenValue = {
      ...listenSettings,
      mode: mode.value,
      input_device: device.value || null,
      sensitivity: Number(sensitivity.value),
      hangover_ms: Number(hangover.value),
      shortcut: shortcut.value.trim() || null,
    };
    const sttValue = {
      ...stt,
      base_url: sttBase.value.trim() || null,
      model: sttModel.value.trim(),
      language: sttLanguage.value.trim() || null,
    };
    try {
      show(await invoke("voice_listen_set", { listen: listenValue, stt: sttValue }));
      setStatus("Microphone settings saved.");
    } catch (err) {
      setStatus(err.message, true);
    } finally {
      save.disabled = false;
    }
  });
  stop.addEventListener("click", () => invoke("mic_stop").catch((err) => setStatus(err.message, true)));
  listen(EVENTS.mic, showLive).catch((e) => console.warn("cannot listen for the microphone", e));
  try {
    show(await invoke("voice_listen_get", { devices: false }));
  } catch (err) {
    setStatus(err.message, true);
  }
}

mountVoiceListen(document.getElementById("voice-listen"));
