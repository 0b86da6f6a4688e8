// Settings → Backend's realtime voice session (docs/realtime-transport.md): the voice the
// server speaks with, how the user's turn ends and the model that transcribes the user. Shown
// only while the Transport choice is Realtime. It renders and forwards: the values are checked,
// normalized and stored by the core (src-tauri/src/commands/realtime.rs →
// yui_core::backend::realtime), which also makes the characters' sessions again with them.

import { invoke } from "./ipc.js";
import { el } from "./panels.js";

// What each way of ending a turn means to the user.
const TURN_DETECTION = [
  ["server_vad", "Server voice activity", "The server hears when you stop talking and answers."],
  ["semantic_vad", "Semantic", "The server waits until you have finished your thought, even across a pause."],
  ["push_to_talk", "Push-to-talk", "You hold the push-to-talk key while you speak; letting go sends it."],
];

/** Mount the panel into `form` (<form id="realtime-form"> in the backend section). */
export async function mountRealtime(form, backendForm) {
  if (!form || !backendForm) return;
  const voice = el("input", { type: "text", id: "realtime-voice", name: "voice", autocomplete: "off", spellcheck: false });
  voice.setAttribute("list", "realtime-voices"); // `list` is a read-only property
  const voices = el("datalist", { id: "realtime-voices" });
  const detection = el("select", { id: "realtime-turn-detection", name: "turn_detection" },
    ...TURN_DETECTION.map(([v, label]) => el("option", { value: v }, label)));
  const hint = el("p", { id: "realtime-turn-hint", className: "muted small" });
  const transcription = el("input", { type: "text", id: "realtime-transcription", name: "transcription_model", autocomplete: "off", spellcheck: false, placeholder: "empty: your speech is not transcribed" });
  const status = el("span", { id: "realtime-status", className: "muted small", role: "status" });
  const save = el("button", { type: "submit", id: "realtime-save" }, "Save voice session");
  form.replaceChildren(
    el("fieldset", { className: "realtime-session" },
      el("legend", {}, "Realtime voice session"),
      el("label", {}, "Voice ", voice, voices),
      el("label", {}, "Turn ends by ", detection),
      hint,
      el("label", {}, "Transcription ", transcription),
      el("p", { className: "muted small" }, "Changes start a new session for each character, carrying on the conversation."),
      el("div", { className: "row" }, save, status)),
  );
  const explain = () => {
    hint.textContent = TURN_DETECTION.find(([v]) => v === detection.value)?.[2] ?? "";
  };
  detection.addEventListener("change", explain);
  const say = (text, error = false) => {
    status.textContent = text;
    status.classList.toggle("error", error);
  };
  const show = (view) => {
    const s = view.settings;
    voice.value = s.voice;
    voices.replaceChildren(...view.voices.map((v) => el("option", { value: v })));
    detection.value = s.turn_detection;
    transcription.value = s.transcription_model ?? "";
    explain();
    form.dataset.loaded = "true";
  };
  // Only for the realtime transport: follow the Transport choice, as stored and as changed.
  const transport = backendForm.elements.transport;
  const follow = () => {
    const on = transport.value === "realtime";
    form.hidden = !on;
    save.disabled = !on;
  };
  transport.addEventListener("change", follow);
  document.addEventListener("yui:backend-loaded", follow);
  follow();

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    save.disabled = true;
    try {
      show(await invoke("realtime_settings_set", {
        settings: {
          voice: voice.value,
          turn_detection: detection.value,
          transcription_model: transcription.value,
        },
      }));
      say("Saved: each character's session starts again with it.");
    } catch (err) {
      say(err?.message ?? String(err), true);
    } finally {
      follow();
    }
  });
  try {
    show(await invoke("realtime_settings_get"));
  } catch (err) {
    say(err?.message ?? String(err), true);
  }
}

mountRealtime(document.getElementById("realtime-form"), document.getElementById("backend-form"));
