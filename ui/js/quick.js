// Quick controls: open/close characters, flip switches, jump to settings. A popover: the shell
// hides it when it loses focus (windows.rs) and Escape hides it; it is hidden, not closed, so its
// rows and switches keep following the bridge events.

import { invoke, currentWindow } from "./ipc.js";
import { setStatus, wirePresets, wireSwitches } from "./panels.js";
import { mountQuick } from "./relations-panel.js";

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

async function main() {
  try {
    await Promise.all([
      wireSwitches((s) => { warning.hidden = !s.browser; }),
      wirePresets(document.getElementById("preset-list")),
    ]);
  } catch (err) {
    setStatus(err.message, true);
  }
  // The band word toward the user in each preset row (rows exist now).
  await mountQuick(document.getElementById("preset-list")).catch((err) => setStatus(err.message, true));
}

main();
