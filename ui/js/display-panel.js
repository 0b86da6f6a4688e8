// How YUI shows its windows (Settings → General): the backend chosen at start and why, the one
// note that goes with it, and yui.display.backend (auto | x11 | wayland), read at the next start.
// The choice is made in the core (yui_core::display::decide); this page only renders and forwards.

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";

const OPTIONS = [
  ["auto", "Automatic: the overlay layer where the desktop offers it, else XWayland"],
  ["x11", "X11 (XWayland in a Wayland session)"],
  ["wayland", "Native Wayland"],
];

/** Mount into `section` (the General card, after the autostart switch it holds). */
export async function mountDisplay(section) {
  if (!section) return;
  const box = el("div", { id: "display-choice", class: "subsection" });
  // Appended after autostart-panel.js filled the card (it runs first: module order).
  section.append(box);
  const now = el("p", { id: "display-backend" });
  const why = el("p", { class: "muted small", id: "display-reason" });
  const note = el("p", { class: "muted small", id: "display-note" });
  const pick = el("select", { id: "display-setting", "aria-label": "How YUI shows its windows" });
  for (const [value, label] of OPTIONS) pick.append(el("option", { value }, label));
  const later = el("p", { class: "muted small", id: "display-later" });
  box.replaceChildren(el("h3", {}, "Windows"), now, why, note, el("label", {}, pick), later);
  let started = null;
  let shown = null;
  const show = (v) => {
    started ??= v.setting;
    shown = v.setting;
    now.textContent = v.describe;
    why.textContent = `Because ${v.reason}.`;
    note.textContent = v.note ?? "";
    note.hidden = !v.note;
    pick.value = v.setting;
    later.textContent = v.setting === started ? "" : "YUI uses this from its next start.";
    box.dataset.loaded = "true";
  };
  pick.addEventListener("change", async () => {
    pick.disabled = true;
    try {
      show(await invoke("display_set", { backend: pick.value }));
    } catch (err) {
      pick.value = shown;
      setStatus(err.message, true);
    } finally {
      pick.disabled = false;
    }
  });
  try {
    show(await invoke("display_get"));
  } catch (err) {
    setStatus(err.message, true);
  }
}

mountDisplay(document.getElementById("autostart"));
