// The look picker's preview of a VRM look (Settings → Characters → Look…): the model's name,
// authors and its own licence terms, and each emotion of the vocabulary as it will look — one
// renderer draws the model once per emotion into a picture, then is gone — with where each face
// comes from (the model's own expression, the nearest one, or its resting face). The faces and
// the licence's words come from the core (look_vrm_preview: yui_core::vrm); this only shows them.

import { invoke } from "./ipc.js";
import { el } from "./panels.js";

const PREVIEW_PX = 96;

/** Fill `preview` with the VRM look of `option` (its `avatar`); `still()` says whether the
 * picker still shows this option (another may have been chosen meanwhile). */
export async function showVrmPreview(option, preview, still) {
  const [look, bytes] = await Promise.all([
    invoke("look_vrm_preview", { avatar: option.avatar }),
    invoke("look_vrm_model", { avatar: option.avatar }),
  ]);
  if (!still()) return;
  const meta = look.meta;
  const who = meta.authors.length ? ` by ${meta.authors.join(", ")}` : "";
  const about = el("div", { class: "look-vrm-about small" },
    el("p", {}, `${meta.name || "Unnamed model"}${who} (VRM ${meta.vrm}${meta.version ? `, version ${meta.version}` : ""})`),
    el("p", { class: "muted" }, "The model's own licence terms:"),
    el("ul", { class: "look-vrm-licence" }, ...licenceLines(meta.licence).map((l) => el("li", {}, l))));
  const faces = el("div", { class: "look-vrm-faces" });
  preview.replaceChildren(about, faces);
  // One renderer, off to the side, draws each face once.
  const stage = el("div", { class: "look-vrm-stage", "aria-hidden": "true" });
  stage.style.cssText = "position:absolute;left:-10000px;top:0";
  document.body.append(stage);
  let pictures = {};
  let why = "";
  try {
    const { createVrmCharacter } = await import("../character/vrm.js");
    const c = await createVrmCharacter(stage, { look, bytes, size: PREVIEW_PX });
    c.setHidden(true); // no blinks or glances: pictures only
    for (const f of look.faces) pictures[f.emotion] = c.snapshot(f.emotion);
    c.destroy();
  } catch (e) {
    why = e?.message ?? String(e);
    pictures = {};
  } finally {
    stage.remove();
  }
  if (!still()) return;
  for (const f of look.faces) {
    const pic = pictures[f.emotion]
      ? el("img", { src: pictures[f.emotion], alt: `${f.emotion} face`, width: String(Math.round((PREVIEW_PX * 200) / 240)), height: String(PREVIEW_PX) })
      : el("span", { class: "look-face muted" }, "3D");
    faces.append(el("figure", { class: "look-emotion", dataset: { emotion: f.emotion, source: f.source } }, pic,
      el("figcaption", { class: "small" }, f.emotion, el("br"), el("span", { class: "muted" }, f.from))));
  }
  if (why) faces.append(el("p", { class: "error small" }, `This window cannot draw the model (${why}); a character window shows its previous look then.`));
}

function licenceLines(l) {
  const lines = [
    `Licence: ${l.name}`, `Avatar use: ${l.avatar_use}`, `Commercial use: ${l.commercial}`,
    `Redistribution: ${l.redistribution}`, `Modification: ${l.modification}`, `Credit: ${l.credit}`,
    `Excessively violent use: ${l.violent_use}`, `Excessively sexual use: ${l.sexual_use}`,
  ];
  if (l.url) lines.push(`Licence page: ${l.url}`);
  if (l.other_terms) lines.push(`Further terms: ${l.other_terms}`);
  return lines;
}
