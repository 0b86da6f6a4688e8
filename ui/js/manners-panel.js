// Settings → Manners (docs/proactive.md): quiet mode, each character's proactive switch, the
// budget, cooldown and away time, quiet hours, morning and night, the triggers, the awareness
// switches, the turns waiting and the held-back log. The core decides and validates
// (manners_get / manners_set / manners_character / manners_quiet); this page renders and
// forwards, and a refused value is shown as the core worded it.

import { invoke, listen, EVENTS } from "./ipc.js";
import { el, setStatus } from "./panels.js";
import { mountQuiet } from "./quiet.js";

const P = "yui.proactive.";
const TRIGGERS = [
  ["back", "When you come back"],
  ["morning", "In the morning"],
  ["night", "Late at night"],
  ["perch", "When the window it sits on closes or goes fullscreen"],
  ["events", "Events from other programs (yui event, MCP)"],
];

export async function mountManners(section) {
  if (!section) return;
  const quietBox = el("p", { class: "row quiet" });
  const chars = el("div", { class: "switches", id: "manners-characters" });
  const numbers = el("div", { class: "rows" });
  const times = el("div", { class: "rows" });
  const triggers = el("div", { class: "switches", id: "manners-triggers" });
  const aware = el("div", { class: "switches", id: "manners-awareness" });
  const waiting = el("ul", { id: "manners-waiting", class: "small" });
  const held = el("ul", { id: "manners-held", class: "small" });
  section.replaceChildren(
    el("h2", {}, "Manners"),
    el("p", { class: "muted small" }, "Characters may speak up on their own: when you come back, in the morning, when a reminder rings. They keep quiet while you type, play fullscreen, share your screen or are in a call, in quiet hours and in quiet mode, and at most a few times an hour."),
    quietBox,
    el("h3", {}, "Speaks up on its own"), chars,
    el("h3", {}, "Budget"), numbers,
    el("h3", {}, "Hours"), times,
    el("h3", {}, "Triggers"), triggers,
    el("h3", {}, "Awareness (sent to your model backend)"), aware,
    el("h3", {}, "Waiting"), waiting,
    el("h3", {}, "Held back"), held,
  );
  const set = async (key, value) => {
    try {
      show(await invoke("manners_set", { key, value }));
    } catch (err) {
      setStatus(err.message, true);
      show(await invoke("manners_get"));
    }
  };
  const check = (label, on, onChange) => {
    const box = el("input", { type: "checkbox" });
    box.checked = on;
    box.addEventListener("change", () => onChange(box.checked));
    return el("label", { class: "switch" }, box, el("span", {}, label));
  };
  const number = (label, key, value, min, max) => {
    const input = el("input", { type: "number", min: String(min), max: String(max), value: String(value), "data-key": key });
    input.addEventListener("change", () => set(key, Number(input.value)));
    return el("label", { class: "row" }, el("span", {}, label), input);
  };
  const time = (label, key, value) => {
    const input = el("input", { type: "time", value: value ?? "", "data-key": key });
    input.addEventListener("change", () => set(key, input.value || null));
    return el("label", { class: "row" }, el("span", {}, label), input);
  };
  const showQuiet = mountQuiet(quietBox);
  const show = (page) => {
    showQuiet(page);
    const s = page.settings;
    chars.replaceChildren(...page.characters.map((c) =>
      check(c.name, c.on, async (on) => {
        try { show(await invoke("manners_character", { presetId: c.id, on })); }
        catch (err) { setStatus(err.message, true); }
      })));
    numbers.replaceChildren(
      number("At most, per hour (all characters)", `${P}per_hour`, s[`${P}per_hour`], 0, 60),
      number("Quiet minutes after each", `${P}cooldown_min`, s[`${P}cooldown_min`], 0, 1440),
      number("Away after (minutes without input)", `${P}away_min`, s[`${P}away_min`], 1, 1440),
    );
    const qh = s[`${P}quiet_hours`];
    const qhFrom = el("input", { type: "time", value: qh?.from ?? "" });
    const qhTo = el("input", { type: "time", value: qh?.to ?? "" });
    const saveQh = () => set(`${P}quiet_hours`, qhFrom.value && qhTo.value ? { from: qhFrom.value, to: qhTo.value } : null);
    qhFrom.addEventListener("change", saveQh);
    qhTo.addEventListener("change", saveQh);
    times.replaceChildren(
      el("label", { class: "row" }, el("span", {}, "Quiet hours from"), qhFrom, el("span", {}, "to"), qhTo),
      time("Morning starts at", `${P}morning`, s[`${P}morning`]),
      time("Late at night is", `${P}night`, s[`${P}night`]),
    );
    const trig = s[`${P}triggers`] ?? {};
    triggers.replaceChildren(...TRIGGERS.map(([id, label]) =>
      check(label, trig[id] !== false, (on) => set(`${P}triggers`, { ...trig, [id]: on }))));
    // Each line goes to the model with every turn while its switch is on (docs/proactive.md).
    const A = "yui.awareness.";
    const awareCheck = (label, key) =>
      check(label, s[key]?.enabled === true, (on) => set(key, { enabled: on }));
    aware.replaceChildren(
      awareCheck("The active application's name (never its window title)", `${A}active_app`),
      awareCheck("What is playing (artist and title, from media players)", `${A}now_playing`),
    );
    waiting.replaceChildren(...(page.waiting.length
      ? page.waiting.map((w) => el("li", {}, `${w.preset_id}: ${w.trigger.kind} — ${w.reason}`))
      : [el("li", { class: "muted" }, "Nothing waits.")]));
    held.replaceChildren(...(page.held.length
      ? page.held.map((h) => el("li", {}, `${new Date(h.at).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" })} ${h.preset_id} (${h.trigger}): ${h.reason}`))
      : [el("li", { class: "muted" }, "Nothing held back yet.")]));
    section.dataset.mannersLoaded = "true";
  };
  try {
    show(await invoke("manners_get"));
  } catch (err) {
    setStatus(err.message, true);
  }
  // What waits changed (a turn held or gone): the lists follow.
  listen(EVENTS.waiting, async () => {
    try { show(await invoke("manners_get")); } catch (err) { setStatus(err.message, true); }
  }).catch((e) => console.warn("cannot listen for waiting turns", e));
}

mountManners(document.getElementById("manners"));
