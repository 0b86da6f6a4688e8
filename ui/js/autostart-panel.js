// Start with the desktop (Settings → General): one switch, off by default. Switching it writes or
// removes the XDG autostart entry (yui_core::autostart); this page only renders and forwards.

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";

/** Mount the switch into `section` (<section id="autostart">). */
export async function mountAutostart(section) {
  if (!section) return;
  const box = el("input", { type: "checkbox", id: "switch-autostart" });
  const where = el("p", { class: "muted small", id: "autostart-entry" });
  section.replaceChildren(
    el("h2", {}, "General"),
    el("label", { class: "switch" }, box, el("span", {}, "Start with the desktop")),
    where,
  );
  const show = (s) => {
    box.checked = s.enabled;
    where.textContent = s.enabled
      ? `YUI starts when you log in (${s.entry}).`
      : "YUI does not start when you log in.";
    section.dataset.autostartLoaded = "true";
  };
  box.addEventListener("change", async () => {
    box.disabled = true;
    try {
      show(await invoke("autostart_set", { enabled: box.checked }));
    } catch (err) {
      box.checked = !box.checked;
      setStatus(err.message, true);
    } finally {
      box.disabled = false;
    }
  });
  try {
    show(await invoke("autostart_get"));
  } catch (err) {
    setStatus(err.message, true);
  }
}

mountAutostart(document.getElementById("autostart"));
