// Settings → Characters → Look… of a VRM character: the motions of the vocabulary and the VRM
// animation file (.vrma) each plays instead of its built-in animation — choose a file for a
// motion, see which have one, go back to the built-in one. The same core calls as
// `yui look set --vrm-motion MOTION=FILE.vrma` (vrm_motions, vrm_motion_set, vrm_motion_remove;
// yui_core::vrm::motions): the checks, the refusals' words and the files kept are the core's.

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";

/** What a kept file holds, in a few words. */
function about(slot) {
  if (slot.problem) return `cannot be played: ${slot.problem}`;
  const a = slot.animation;
  if (!a) return "the built-in animation";
  const parts = [`${a.seconds.toFixed(1)} s`];
  if (a.bones.length) parts.push(`${a.bones.length} bones`);
  if (a.expressions.length) parts.push(`face: ${a.expressions.join(", ")}`);
  if (a.look_at) parts.push("gaze");
  return `a VRM animation (${parts.join(", ")})`;
}

/** Read the chosen file as base64 (as a card is read). */
function readBase64(file) {
  return new Promise((resolve, reject) => {
    const r = new FileReader();
    r.onload = () => resolve(String(r.result).replace(/^data:[^,]*,/, ""));
    r.onerror = () => reject({ message: `cannot read ${file.name}` });
    r.readAsDataURL(file);
  });
}

/** Show VRM character `preset`'s motions in `box` (replacing what it showed). */
export async function showVrmMotions(box, preset) {
  box.replaceChildren(el("p", { class: "muted small" }, "Reading the motions…"));
  let slots;
  try {
    slots = await invoke("vrm_motions", { id: preset.id });
  } catch (err) {
    box.replaceChildren(el("p", { class: "error small" }, err.message));
    return;
  }
  render(box, preset, slots);
}

function render(box, preset, slots) {
  const file = el("input", { type: "file", id: "vrm-motion-file", accept: ".vrma", hidden: true, "aria-label": "VRM animation file" });
  let wanted = null; // the motion whose file is being chosen
  const list = el("ul", { class: "vrm-motions-list" });
  for (const s of slots) {
    const choose = el("button", { type: "button", class: "vrm-motion-choose" }, s.file ? "Change…" : "Choose .vrma…");
    const remove = el("button", { type: "button", class: "vrm-motion-remove", hidden: !s.file }, "Use the built-in one");
    choose.disabled = !s.in_vocab;
    choose.addEventListener("click", () => { wanted = s; file.click(); });
    remove.addEventListener("click", () => change(box, preset, s, () =>
      invoke("vrm_motion_remove", { id: preset.id, motion: s.motion }),
      `${preset.name}'s ${s.label} plays its built-in animation again.`));
    const state = el("span", { class: `vrm-motion-state small${s.problem ? " error" : s.file ? "" : " muted"}` }, about(s));
    const name = s.in_vocab ? s.label : `${s.label} (no longer in the vocabulary)`;
    list.append(el("li", { dataset: { motion: s.motion, set: String(!!s.file) } },
      el("span", { class: "vrm-motion-name" }, name), state, el("span", { class: "row" }, choose, remove)));
  }
  file.addEventListener("change", () => {
    const f = file.files?.[0];
    file.value = "";
    const s = wanted;
    if (!f || !s) return;
    change(box, preset, s, async () =>
      invoke("vrm_motion_set", { id: preset.id, motion: s.motion, name: f.name, data: await readBase64(f) }),
      `${preset.name}'s ${s.label} plays ${f.name} now.`, f.name);
  });
  const set = slots.filter((s) => s.file).length;
  box.replaceChildren(
    el("h3", {}, "Motions from VRM animation files"),
    el("p", { class: "muted small" },
      "A motion can play a .vrma file (VRM Posing Desktop and Blender's VRM add-on make them) instead of its built-in animation. ",
      set ? `${set} of ${slots.length} have one.` : "None has one yet."),
    list, file);
}

/** Run a change, then show the motions as the core says they are now. */
async function change(box, preset, slot, run, done, what = slot.label) {
  for (const b of box.querySelectorAll("button")) b.disabled = true;
  try {
    render(box, preset, await run());
    setStatus(done);
  } catch (err) {
    setStatus(`${what}: ${err.message}`, true);
    await showVrmMotions(box, preset);
  }
}
