// Quiet mode's three buttons ("Quiet for 1 hour", "until tomorrow", "off") and its state line,
// shared by the quick controls and Settings → Manners. The core stores it and says until when
// (manners_quiet, manners_get); this module only renders and forwards.

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";

/** Quiet mode's state in words: "Quiet until 17:00" or "Not quiet". */
export function quietWords(untilIso) {
  if (!untilIso) return "Not quiet: characters may speak up on their own.";
  const t = new Date(untilIso);
  const sameDay = t.toDateString() === new Date().toDateString();
  const hm = t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  return sameDay ? `Quiet until ${hm}.` : `Quiet until ${t.toLocaleDateString()} ${hm}.`;
}

/** Mount the buttons into `box`; `onPage` gets every new view (the page after each change). */
export function mountQuiet(box, onPage = () => {}) {
  const state = el("span", { class: "quiet-state", id: "quiet-state" }, "");
  const button = (what, label) => {
    const b = el("button", { type: "button", "data-quiet": what }, label);
    b.addEventListener("click", async () => {
      try {
        show(await invoke("manners_quiet", { what }));
      } catch (err) {
        setStatus(err.message, true);
      }
    });
    return b;
  };
  const show = (page) => {
    state.textContent = quietWords(page.quiet_until);
    box.dataset.quiet = page.quiet_until ? "on" : "off";
    onPage(page);
  };
  box.replaceChildren(
    state,
    button("1h", "Quiet for 1 hour"),
    button("tomorrow", "Until tomorrow"),
    button("off", "Off"),
  );
  return show;
}
