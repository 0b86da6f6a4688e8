// Settings → Characters → a character's look: the looks the core offers for it (built-in
// palettes, its card's picture, its expression pack, a sprite folder), each drawn small, and a
// preview of every emotion of the vocabulary as the chosen look will show it (the real character
// drawing of ui/character/, with the look's images and the built-in face where there is none).
// It renders and forwards: the offer, the images and the checks come from the core
// (look_options, look_preview, look_import_folder; yui_core::looks).

import { invoke } from "./ipc.js";
import { el, setStatus } from "./panels.js";
import { createCharacter } from "../character/character.js";
import { showVrmPreview } from "./vrm-look-panel.js";
import { showVrmMotions } from "./vrm-motions-panel.js";

const THUMB_PX = 64;
const PREVIEW_PX = 80;

/** Characters drawn in the picker, destroyed when it redraws or closes. */
let drawn = [];
let current = null; // {preset, options, chosen}

function clearDrawn() {
  for (const c of drawn) c.destroy();
  drawn = [];
}

/** Draw one character in `host`: a palette, and the look's images if it has any. */
function draw(host, option, images, size, emotion = "neutral") {
  const c = createCharacter(host, { palette: option.palette, size, sprites: images, ambient: false, interactive: false });
  c.setEmotion(emotion);
  drawn.push(c);
  return c;
}

/** The look's images as a character window gets them (null for a palette). */
const imagesOf = (option) => (["palette", "vrm"].includes(option.kind) ? Promise.resolve(null) : invoke("look_preview", { avatar: option.avatar }));

/** Open the picker for `preset` in `box` (replacing what it showed). */
export async function openLook(box, preset) {
  clearDrawn();
  box.hidden = false;
  box.dataset.presetId = preset.id;
  box.replaceChildren(el("p", { class: "muted small" }, "Loading looks…"));
  let options, vocab;
  try {
    [options, vocab] = await Promise.all([invoke("look_options", { id: preset.id }), invoke("vocab_get")]);
  } catch (err) {
    box.replaceChildren(el("p", { class: "error" }, err.message));
    return;
  }
  const chosen = options.find((o) => o.current) ?? options[0];
  current = { preset, options, chosen, vocab };
  const grid = el("div", { class: "look-options", role: "radiogroup", "aria-label": `${preset.name}'s look` });
  const preview = el("div", { class: "look-preview", "aria-live": "polite" });
  const use = el("button", { type: "button", class: "primary", id: "look-use" }, "Use this look");
  const close = el("button", { type: "button", id: "look-close" }, "Close");
  const dir = el("input", { type: "text", id: "look-folder", placeholder: "/home/you/sprites/mio", "aria-label": "Sprite folder" });
  const copy = el("button", { type: "button", id: "look-folder-copy" }, "Copy folder");
  box.replaceChildren(
    el("h3", {}, `${preset.name}'s look`),
    grid,
    el("h3", {}, "Each emotion as it will look"),
    preview,
    el("div", { class: "row" }, use, close),
    el("label", { class: "look-folder small" }, "A sprite folder or expression pack (SillyTavern labels or YUI's ids; copied and scaled):",
      el("div", { class: "row" }, dir, copy)),
  );
  // A VRM character's motions may play .vrma files (vrm-motions-panel.js).
  if (preset.avatar?.kind === "vrm") {
    const motions = el("div", { id: "vrm-motions", class: "vrm-motions" });
    box.append(motions);
    showVrmMotions(motions, preset);
  }
  for (const option of options) {
    const host = el("span", { class: "look-thumb" });
    const b = el("button", {
      type: "button", class: "look-option", role: "radio", dataset: { look: option.id },
      "aria-checked": String(option === chosen), title: option.label,
    }, host, el("span", { class: "small" }, option.label));
    b.addEventListener("click", () => choose(option, grid, preview));
    grid.append(b);
    if (option.kind === "vrm") {
      host.textContent = "3D";
      continue;
    }
    imagesOf(option).then((images) => draw(host, option, images, THUMB_PX)).catch((err) => {
      host.textContent = "!";
      b.title = `${option.label}: ${err.message}`;
    });
  }
  use.addEventListener("click", () => save(box));
  close.addEventListener("click", () => { clearDrawn(); box.hidden = true; box.replaceChildren(); current = null; });
  copy.addEventListener("click", () => copyFolder(box, dir.value));
  await showPreview(chosen, preview);
}

async function choose(option, grid, preview) {
  current.chosen = option;
  for (const b of grid.querySelectorAll(".look-option")) b.setAttribute("aria-checked", String(b.dataset.look === option.id));
  await showPreview(option, preview);
}

/** Every emotion of the vocabulary (and the pack's extra ids), drawn with the look. */
async function showPreview(option, preview) {
  // The thumbnails stay; only the previous preview's characters go.
  for (const c of [...drawn]) {
    if (preview.contains(c.element)) {
      c.destroy();
      drawn = drawn.filter((d) => d !== c);
    }
  }
  preview.dataset.look = option.id;
  if (option.kind === "vrm") {
    preview.replaceChildren(el("p", { class: "muted small" }, "Drawing the model…"));
    return showVrmPreview(option, preview, () => current?.chosen === option).catch((err) =>
      preview.replaceChildren(el("p", { class: "error small" }, err.message)));
  }
  let images = null;
  try {
    images = await imagesOf(option);
  } catch (err) {
    preview.replaceChildren(el("p", { class: "error small" }, err.message));
    return;
  }
  if (current?.chosen !== option) return; // another look was chosen meanwhile
  const ids = current.vocab.emotions.map((e) => ({ id: e.id, label: e.label }));
  preview.replaceChildren();
  for (const { id, label } of ids) {
    const host = el("span", { class: "look-face" });
    const from = images?.sources?.[id];
    const how = from ? `← ${from}` : images?.picture ? "the picture" : "built-in face";
    preview.append(el("figure", { class: "look-emotion", dataset: { emotion: id } }, host,
      el("figcaption", { class: "small" }, label, el("br"), el("span", { class: "muted" }, how))));
    const c = draw(host, option, images, PREVIEW_PX, id);
    c.element.parentElement.parentElement.dataset.sprite = c.element.dataset.sprite ?? "";
  }
  const extra = Object.keys(images?.extra ?? {});
  if (extra.length) {
    preview.append(el("p", { class: "muted small look-extra" },
      `Also in the folder, for emotions your vocabulary does not have yet (add them under Expression to use them): ${extra.join(", ")}`));
  }
  const skipped = images?.skipped ?? [];
  if (skipped.length) {
    preview.append(el("p", { class: "muted small" }, `Not used: ${skipped.map((s) => `${s.file} (${s.reason})`).join("; ")}`));
  }
}

async function save(box) {
  const { preset, chosen } = current;
  try {
    await invoke("preset_update", { id: preset.id, change: { avatar: chosen.avatar } });
    setStatus(`${preset.name} now looks like this: ${chosen.label}.`);
    await openLook(box, { ...preset, avatar: chosen.avatar });
  } catch (err) {
    setStatus(err.message, true);
  }
}

async function copyFolder(box, dir) {
  const { preset } = current;
  if (!dir.trim()) return setStatus("Type the folder's absolute path first.", true);
  try {
    const [p, pack] = await invoke("look_import_folder", { id: preset.id, dir });
    const skipped = pack.skipped.length ? `; not used: ${pack.skipped.map((s) => s.file).join(", ")}` : "";
    setStatus(`${p.name} has the folder's ${pack.images} images now${skipped}.`);
    await openLook(box, p);
  } catch (err) {
    setStatus(err.message, true);
  }
}
