// A character window's look when it is a VRM model (docs/vrm.md): the 3D renderer
// (ui/character/vrm.js, with three.js) is imported only here, only for such a look, so SVG,
// sprite and picture characters never load it. If the model cannot be drawn (no WebGL2, a
// model three-vrm refuses, a first frame far too slow) the window shows the previous look
// (the avatar's `fallback`) with one plain sentence, and the app's log records why.

import { invoke } from "./ipc.js";

/** The look is a VRM model. */
export const isVrm = (preset) => preset?.avatar?.kind === "vrm";

/** The sentence the user sees when the model cannot be drawn. */
export const FALLBACK_SENTENCE = "This character's 3D model cannot be shown here, so it wears its previous look.";

/**
 * Draw the preset's VRM model in `host`; resolves to the character's api, or to null after
 * logging why (the caller then draws the fallback look).
 */
export async function mountVrm(host, size) {
  const t0 = performance.now();
  try {
    const [{ createVrmCharacter }, look, bytes] = await Promise.all([
      import("../character/vrm.js"),
      invoke("vrm_look"),
      invoke("vrm_model"),
    ]);
    // A motion's .vrma file (look.motions), asked for the first time the motion plays.
    const motionBytes = (motion) => invoke("vrm_model", { motion });
    const character = await createVrmCharacter(host, { look, bytes, size, motionBytes });
    character.element.dataset.loadMs = String(Math.round(performance.now() - t0));
    return character;
  } catch (e) {
    const reason = e?.message ?? String(e);
    console.warn("the VRM model cannot be drawn:", reason);
    invoke("vrm_failed", { reason }).catch(() => {});
    return null;
  }
}

/** The vocabulary changed: the faces of its emotions, from the core again. */
export function refreshVrm(character) {
  if (typeof character?.setLook !== "function") return Promise.resolve();
  return invoke("vrm_look").then((look) => character.setLook(look));
}
