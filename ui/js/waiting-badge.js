// A small badge on a character while one of its proactive turns waits for the manners (a
// reminder or a high-importance event during quiet mode or a fullscreen window): the core says
// what waits (yui://waiting); this module only shows it, with the reason as its tooltip.

import { listen, windowContext, EVENTS } from "./ipc.js";

const badge = document.createElement("div");
badge.className = "waiting-badge";
badge.id = "waiting-badge";
badge.hidden = true;
badge.textContent = "…";
document.body.append(badge);

let presetId = null;
windowContext()
  .then((ctx) => { presetId = ctx.preset?.id ?? null; })
  .catch((e) => console.warn("waiting badge: no window context", e));

listen(EVENTS.waiting, (e) => {
  const mine = (e.payload?.waiting ?? []).filter((w) => w.preset_id === presetId);
  badge.hidden = mine.length === 0;
  badge.dataset.count = String(mine.length);
  badge.title = mine.map((w) => `Waiting to speak (${w.trigger.kind}): ${w.reason}`).join("\n");
}).catch((e) => console.warn("cannot listen for waiting turns", e));
