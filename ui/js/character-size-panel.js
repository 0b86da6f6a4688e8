// Settings → Characters: the size of every character (`yui.character.scale`, 50–200 % of the
// usual size). The range and the refusal are the core's (character_scale_get/set;
// yui_core::layout): the character windows are built again at the new size.

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";

/** A row with the size slider and its value, read from the core. */
export function sizeControl() {
  const range = el("input", {
    type: "range", id: "character-scale", min: "50", max: "200", step: "10", value: "100",
    "aria-label": "Size of the characters (percent of the usual size)",
  });
  const shown = el("output", { id: "character-scale-value", htmlFor: "character-scale" }, "100 %");
  const row = el("label", { class: "row character-size small" }, "Size of the characters", range, shown);
  const show = (scale) => {
    range.value = String(Math.round(scale * 100));
    shown.textContent = `${Math.round(scale * 100)} %`;
    row.dataset.scale = String(scale);
  };
  invoke("character_scale_get").then(show).catch((err) => setStatus(err.message, true));
  range.addEventListener("input", () => { shown.textContent = `${range.value} %`; });
  range.addEventListener("change", async () => {
    range.disabled = true;
    try {
      const scale = await invoke("character_scale_set", { scale: Number(range.value) / 100 });
      show(scale);
      setStatus(`The characters are shown at ${Math.round(scale * 100)} % of their usual size now.`);
    } catch (err) {
      setStatus(err.message, true);
      invoke("character_scale_get").then(show).catch(() => {});
    } finally {
      range.disabled = false;
    }
  });
  return row;
}
