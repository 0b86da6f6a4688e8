// Character windows (main and pet-<presetId>): draws the preset's character, opens a chat input
// on click, drags the window, streams the reply into the speech bubble and plays cues.
// No logic beyond presentation: turns, tools and the store live in the core.

import { invoke, channel, currentWindow, windowContext, listen, EVENTS } from "./ipc.js";
import { createCharacter } from "../character/character.js";
import { forgetTyping, restCaret, setForgetsInput } from "./typing.js";
import { isVrm, mountVrm, refreshVrm, FALLBACK_SENTENCE } from "./vrm-mount.js";
import { watchClickThrough } from "./click-through.js";
import { offerModel } from "./model-offer.js";

const DRAG_THRESHOLD_PX = 4;
const BUBBLE_LINGER_MS = 9000;

const $ = (id) => document.getElementById(id);
const stage = $("stage");
const host = $("character");
const bubble = $("bubble");
const chat = $("chat");
const input = $("chat-input");
const menu = $("menu");
const micBadge = $("mic-badge");
/** A press held this long on the character, without moving, is push-to-talk. */
const HOLD_TO_TALK_MS = 400;

let character = null;
let presetId = "";
let turnRunning = false;
let bubbleTimer = 0;
/** The character's voice is speaking (the bubble does not fade meanwhile). */
let voicing = false;
/** Call ids of the browser runs in flight: the character shows "browsing…" while any is. */
const browsing = new Set();

/** The preset's sprite set (docs/sprites.md); none (the built-in drawing) if it cannot load. */
const readSprites = () => invoke("sprites_get").catch((e) => (console.warn("no sprites", e), null));
/** The vocabulary's ids and flags (which motions are ambient or reactive); null if unreadable. */
const readVocab = () =>
  invoke("vocab_for_character").catch((e) => (console.warn("no vocabulary", e), null));

/** Give the character the user's vocabulary; sprites first, as motions with an image count. */
function applyExpression(vocab, sprites) {
  character.setSprites(sprites);
  if (vocab) {
    character.setVocab(vocab);
    // Observable for the E2E tests: the motion ids this window plays.
    stage.dataset.vocabMotions = vocab.motions.map((m) => m.id).join(" ");
  }
}

/** Settings saved the vocabulary or this preset's avatar: read both again, no restart. */
let refreshing = Promise.resolve();
function refreshExpression() {
  refreshing = refreshing
    .then(() => Promise.all([readVocab(), readSprites()]))
    .then(([vocab, sprites]) => (applyExpression(vocab, sprites), refreshVrm(character)))
    .catch((e) => console.warn("refreshing the vocabulary failed", e));
  return refreshing;
}

/** Draw the preset's character (ui/character/) at the size the core gives (`character_px`: main
 * larger than pets, times the user's scale). A VRM model when that is its look and it can be
 * drawn (vrm-mount.js), else the drawing, sprites or picture. */
async function mountCharacter(preset, size, sprites) {
  if (isVrm(preset)) {
    const vrm = await mountVrm(host, size);
    if (vrm) return vrm;
    stage.dataset.vrmFallback = "true";
    showBubble(FALLBACK_SENTENCE, { linger: true });
  }
  const avatar = isVrm(preset) ? preset.avatar.fallback : preset?.avatar;
  return createCharacter(host, { palette: avatar?.palette ?? "rose", size, sprites });
}

/**
 * The bubble's one text node, its text changed in place: streaming a reply changes the bubble
 * dozens of times a turn, and a node made for each change (as `textContent =` does) is layout
 * and rendering objects made and dropped each time; WebKit keeps some of them (docs/PERFORMANCE.md,
 * "Typed as a user types").
 */
let bubbleTextNode = null;
function bubbleText(text) {
  if (!bubbleTextNode) bubbleTextNode = document.createTextNode(text);
  else if (bubbleTextNode.data !== text) bubbleTextNode.data = text;
  return bubbleTextNode;
}

/**
 * Show `text` in the bubble. The bubble never overflows the window: a long text scrolls inside it
 * (css/character-window.css). Streaming speech follows its end; an error or a message with an
 * action starts at its first line and stays until the next turn. `action`: {label, onClick}, a
 * button under the text.
 */
function showBubble(text, { error = false, linger = true, action = null, extra = null } = {}) {
  clearTimeout(bubbleTimer);
  const node = bubbleText(text);
  if (action) {
    const b = Object.assign(document.createElement("button"), { type: "button", className: "bubble-action", textContent: action.label });
    b.addEventListener("click", (e) => { e.stopPropagation(); action.onClick(); });
    bubble.replaceChildren(node, document.createElement("br"), b);
  } else if (extra) {
    bubble.replaceChildren(node, extra);
  } else if (bubble.childNodes.length !== 1 || bubble.firstChild !== node) {
    bubble.replaceChildren(node);
  }
  bubble.classList.toggle("error", error);
  // An offer (model-offer.js) may take a little more of the window: its text and its buttons.
  bubble.classList.toggle("offer", !!extra);
  bubble.hidden = text === "";
  const pinned = error || action || extra;
  bubble.scrollTop = pinned ? 0 : bubble.scrollHeight;
  if (linger && !pinned && text !== "" && !voicing) {
    bubbleTimer = setTimeout(() => { bubble.hidden = true; }, BUBBLE_LINGER_MS);
  }
}

const openBackendSettings = () =>
  invoke("window_open", { which: "settings" }).catch((err) => showBubble(err.message, { error: true }));

/** First run (main window only): the character's first words, from the core (firstrun.rs), and
 * the display choice's note the first time YUI runs through XWayland (said once, ever). */
async function greetOnFirstRun() {
  let g = null;
  try {
    g = await invoke("first_run");
  } catch (err) {
    console.warn("first run greeting failed", err);
  }
  // A turn the user already started owns the bubble.
  if (!g || turnRunning) return;
  // The display's one-time note (the core remembers it was said): alone on a later run.
  if (g.note) stage.dataset.displayNote = "shown";
  if (!g.text && g.note) {
    showBubble(g.note, { linger: true });
    return;
  }
  if (g.note) g.text = `${g.text}\n\n${g.note}`;
  if (g.offer) {
    // No server found: the built-in model (model-offer.js draws it; the core runs it).
    offerModel(g, {
      stage,
      show: (text, extra, { error = false } = {}) => showBubble(text, { error, extra, linger: false }),
      openSettings: () => invoke("window_open", { which: "settings", section: "backend" })
        .catch((err) => showBubble(err.message, { error: true })),
    });
    return;
  }
  stage.dataset.firstRun = g.open_backend ? "no-backend" : "backend";
  showBubble(g.text, {
    linger: !g.open_backend,
    action: g.open_backend ? { label: "Open Settings → Backend", onClick: openBackendSettings } : null,
  });
}

function toggleChat(open = chat.hidden) {
  chat.hidden = !open;
  menu.hidden = true;
  if (open) input.focus();
}

/** Click opens the chat; a press that moves more than a few pixels drags the window instead. */
function wirePointer() {
  let start = null;
  host.addEventListener("pointerdown", (e) => {
    if (e.button !== 0) return;
    const press = { x: e.screenX, y: e.screenY, dragging: false, talking: false };
    // Held still: push-to-talk (the core refuses it unless that is the microphone's mode).
    press.timer = setTimeout(() => {
      if (start !== press || press.dragging) return;
      press.talking = true;
      pushToTalk(true).then((ok) => { press.talking = ok; });
    }, HOLD_TO_TALK_MS);
    start = press;
  });
  host.addEventListener("pointermove", (e) => {
    if (!start || start.dragging || start.talking) return;
    if (Math.hypot(e.screenX - start.x, e.screenY - start.y) > DRAG_THRESHOLD_PX) {
      start.dragging = true;
      currentWindow().startDragging().catch((err) => console.warn("drag failed", err));
    }
  });
  host.addEventListener("pointerup", () => {
    if (start) clearTimeout(start.timer);
    if (start?.talking) pushToTalk(false);
    else if (start && !start.dragging) toggleChat();
    start = null;
  });
  stage.addEventListener("contextmenu", (e) => {
    e.preventDefault();
    menu.hidden = !menu.hidden;
  });
  menu.addEventListener("click", (e) => {
    if (e.target?.dataset?.mic) {
      menu.hidden = true;
      const live = micBadge.hidden === false;
      invoke(live ? "mic_stop" : "mic_listen").catch((err) => showBubble(err.message, { error: true }));
      return;
    }
    let which = e.target?.dataset?.open;
    if (!which) return;
    if (which === "phone") which = `phone-${presetId}`; // this character's phone
    menu.hidden = true;
    // A settings section for this character (Look…: settings.html#character/<presetId>).
    const section = e.target.dataset.section ? `${e.target.dataset.section}/${presetId}` : null;
    invoke("window_open", section ? { which, section } : { which })
      .catch((err) => showBubble(err.message, { error: true }));
  });
  // Push-to-talk key: Space held while the chat box is not being typed in.
  document.addEventListener("keyup", (e) => {
    if (e.code === "Space" && talkingByKey) {
      talkingByKey = false;
      pushToTalk(false);
    }
  });
  document.addEventListener("keydown", (e) => {
    if (e.code === "Space" && document.activeElement !== input) {
      e.preventDefault();
      if (!e.repeat && !talkingByKey) {
        talkingByKey = true;
        pushToTalk(true).then((ok) => { if (!ok) talkingByKey = false; });
      }
      return;
    }
    if (e.key === "Escape") {
      if (turnRunning) invoke("turn_stop").catch(() => {});
      invoke("voice_stop").catch(() => {});
      toggleChat(false);
    }
  });
}

/** A note under the character for a while (a voice that could not speak, in plain words). */
function showVoiceNote(text) {
  let note = $("voice-note");
  if (!note) {
    note = Object.assign(document.createElement("div"), { id: "voice-note", className: "voice-note" });
    note.setAttribute("role", "status");
    stage.appendChild(note);
  }
  note.textContent = `No voice: ${text}`;
  note.hidden = false;
  clearTimeout(showVoiceNote.timer);
  showVoiceNote.timer = setTimeout(() => { note.hidden = true; }, BUBBLE_LINGER_MS);
}

/** yui://speech for this character: a clip starts (with its envelope), a realtime reply's
 * envelope batch arrives, or the speech ended. */
function onSpeech(p) {
  if (!character || !p || p.preset_id !== presetId) return;
  if (p.type === "speaking") {
    voicing = true;
    clearTimeout(bubbleTimer); // the text stays up while it is said
    character.speakClip(p.envelope ?? null);
    stage.dataset.speakingTurnId = p.turn_id ?? "";
    stage.dataset.clips = String(Number(stage.dataset.clips ?? 0) + 1);
  } else if (p.type === "lip_sync") {
    // A realtime reply's audio as it arrives: the mouth follows its streamed envelope.
    voicing = !p.batch?.stopped;
    clearTimeout(bubbleTimer);
    character.speakStream(p.batch ?? null);
    stage.dataset.lipBatches = String(Number(stage.dataset.lipBatches ?? 0) + 1);
  } else if (p.type === "speech_ended") {
    voicing = false;
    character.endSpeech();
    stage.dataset.speechEnded = p.turn_id ?? "";
    stage.dataset.heardMs = String(p.heard_ms ?? 0);
    if (p.note) showVoiceNote(p.note);
    if (!bubble.hidden && !turnRunning) {
      clearTimeout(bubbleTimer);
      bubbleTimer = setTimeout(() => { bubble.hidden = true; }, BUBBLE_LINGER_MS);
    }
  }
}

let talkingByKey = false;

/** Push-to-talk pressed (`down`) or let go; whether the microphone opened. */
async function pushToTalk(down) {
  if (!down) return invoke("mic_release").then(() => true).catch(() => false);
  try {
    await invoke("mic_press");
    return true;
  } catch (err) {
    showBubble(err.message, { error: true });
    return false;
  }
}

/** The microphone (yui://mic, the core's MicStatus): the badge shows on the listening character. */
function showMic(s) {
  const mine = !!s?.live && s.preset_id === presetId;
  micBadge.hidden = !mine;
  micBadge.dataset.state = s?.state ?? "off";
  stage.dataset.mic = mine ? s.state : "off";
  $("menu-listen").textContent = mine ? "Stop listening" : "Listen (hands-free)";
  // A microphone that went away says so here; text chat goes on.
  if (s?.message && s.preset_id === null && stage.dataset.micWas === "true") showBubble(s.message, { error: true });
  stage.dataset.micWas = String(mine);
  if (s?.message) stage.dataset.micMessage = s.message;
}

/** One turn event from the core (see crates/yui-base/src/events.rs). */
function onTurnEvent(ev, acc, { mirrored = false } = {}) {
  switch (ev.type) {
    case "speech":
      acc.text += ev.delta ?? "";
      character.setSpeaking(true);
      if (browsing.size === 0) character.setState("idle"); // speaking now, no longer thinking
      showBubble(acc.text, { linger: false });
      break;
    case "render":
      // Shown, not spoken (push render segments).
      acc.text += ev.text ?? "";
      acc.rendered = true;
      showBubble(acc.text, { linger: false });
      break;
    case "cue":
      if (ev.emotion_id) character.setEmotion(ev.emotion_id);
      if (ev.motion_id) character.playMotion(ev.motion_id);
      break;
    case "tool_call":
      if (ev.name !== "browser") break;
      browsing.add(ev.call_id);
      character.setState("browsing");
      if (acc.text === "") showBubble("browsing…", { linger: false });
      break;
    case "tool_result":
      if (!browsing.delete(ev.call_id) || browsing.size > 0) break;
      character.setState("thinking"); // the turn goes on with the result
      if (acc.text === "") showBubble("…", { linger: false });
      break;
    case "turn_end":
      if (!mirrored) {
        turnRunning = false;
        // Observable for the E2E tests: how this window's own last turn ended.
        stage.dataset.turnStatus = ev.status ?? "";
        stage.dataset.reply = ev.text ?? "";
      }
      browsing.clear();
      character.setSpeaking(false);
      character.setState("idle");
      if (ev.status === "error") {
        // What was said before the failure stays visible above the error.
        const err = ev.error ?? "the turn failed";
        showBubble(acc.text.trim() ? `${acc.text}\n\n${err}` : err, { error: true });
      } else if (ev.status === "ok") showBubble(acc.rendered ? acc.text : (ev.text ?? acc.text));
      else showBubble(acc.text);
      // The bubble shows the turn's final text: tell the core (playback finished, playback.rs).
      acc.started?.then((turnId) => invoke("playback_bubble_done", { turnId })).catch(() => {});
      break;
    default:
      break; // tool traffic is not shown on the character
  }
}

function wireChat() {
  restCaret(input, { canType: () => !chat.hidden });
  chat.addEventListener("submit", async (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || turnRunning) return;
    input.value = "";
    forgetTyping();
    turnRunning = true;
    character.setState("thinking");
    showBubble("…", { linger: false });
    const acc = { text: "" };
    try {
      acc.started = invoke("turn_start", { text, onEvent: channel((ev) => onTurnEvent(ev, acc)) });
      stage.dataset.turnId = await acc.started;
    } catch (err) {
      turnRunning = false;
      character.setState("idle");
      showBubble(err.message, { error: true });
    }
  });
}

async function main() {
  // The user away or back (the core's presence watch): listening before reading the context,
  // so a change between the two is not lost; data-asleep on the stage is observable for tests.
  let asleep = null;
  const showAsleep = () => {
    if (!character || asleep === null) return;
    character.setAsleep(asleep);
    stage.dataset.asleep = String(asleep);
  };
  // `hidden`: this window was unmapped (Show/Hide all) or mapped again.
  await listen(EVENTS.visibility, (p) => {
    if (typeof p?.hidden !== "boolean") return;
    character?.setHidden(p.hidden);
    stage.dataset.hidden = String(p.hidden);
  }).catch((e) => console.warn("cannot listen for visibility", e));
  await listen(EVENTS.presence, (p) => {
    if (typeof p?.asleep !== "boolean") return;
    asleep = p.asleep;
    showAsleep();
  }).catch((e) => console.warn("cannot listen for presence", e));
  let ctx;
  try {
    ctx = await windowContext();
  } catch (err) {
    showBubble(err.message, { error: true, linger: false });
    return;
  }
  document.body.classList.add(ctx.role);
  setForgetsInput(ctx.forgets_input);
  presetId = ctx.preset?.id ?? "";
  document.title = `YUI — ${ctx.preset?.name ?? ""}`;
  host.setAttribute("aria-label", ctx.preset?.name ?? "character");
  const [vocab, sprites] = await Promise.all([readVocab(), readSprites()]);
  character = await mountCharacter(ctx.preset, ctx.character_px ?? 200, sprites);
  applyExpression(vocab, sprites);
  character.setState("idle");
  asleep ??= ctx.asleep === true;
  showAsleep();
  // The characters on screen share one ambient budget (character.js, AMBIENT).
  character.setCrowd(ctx.open_characters ?? 1);
  // Click-through: the window takes clicks only where it draws (click-through.js).
  watchClickThrough(stage, () => character);
  // Live refresh: the vocabulary saved in settings, or this preset's avatar (sprites) changed.
  listen(EVENTS.vocabChanged, () => refreshExpression()).catch((e) =>
    console.warn("cannot listen for vocabulary changes", e));
  let avatar = JSON.stringify(ctx.preset?.avatar ?? null);
  listen(EVENTS.presetsChanged, (list) => {
    if (Array.isArray(list)) character.setCrowd(list.filter((p) => p.is_open).length);
    const me = Array.isArray(list) ? list.find((p) => p.id === ctx.preset?.id) : null;
    const next = JSON.stringify(me?.avatar ?? null);
    if (me && next !== avatar) {
      // Into or out of a VRM look, or another model: draw the window again.
      if (isVrm(me) || JSON.parse(avatar)?.kind === "vrm") location.reload();
      avatar = next;
      refreshExpression();
    }
  }).catch((e) => console.warn("cannot listen for preset changes", e));
  // Observable "playback finished" of this window's last turn, typed or spoken
  // (data-playback-finished = turn id).
  listen(EVENTS.playbackFinished, (p) => {
    const mine = [stage.dataset.turnId, stage.dataset.voiceTurnId];
    if (p?.turn_id && mine.includes(p.turn_id)) stage.dataset.playbackFinished = p.turn_id;
  }).catch((e) => console.warn("cannot listen for playback finished", e));
  // The character's voice (stage speech.rs): each clip moves the mouth by its envelope on this
  // window's clock; the bubble stays while the voice speaks; a failed voice leaves a short note.
  listen(EVENTS.speech, (p) => onSpeech(p)).catch((e) => console.warn("cannot listen for speech", e));
  // Turns this window did not start play here too: a reply typed on this character's phone, and
  // an addressed turn (another character spoke to this one). The stage sends their events.
  let other = null;
  listen(EVENTS.characterTurn, (p) => {
    if (!p?.event || p.preset_id !== presetId || turnRunning) return;
    const kind = { addressed: "addressed", user: "voice", proactive: "proactive" }[p.origin?.kind] ?? "phone";
    if (!other || other.id !== p.turn_id) {
      other = { id: p.turn_id, text: "", started: Promise.resolve(p.turn_id) };
      character.setState("thinking");
      stage.dataset[`${kind}TurnId`] = p.turn_id;
      if (kind === "addressed") stage.dataset.addressedFrom = p.origin.from ?? "";
    }
    onTurnEvent(p.event, other, { mirrored: true });
    if (p.event.type === "turn_end") {
      stage.dataset[`${kind}Reply`] = p.event.status === "ok" ? (p.event.text ?? "") : "";
      stage.dataset[`${kind}Status`] = p.event.status ?? "";
      other = null;
    }
  }).catch((e) => console.warn("cannot listen for character turns", e));
  // The microphone: the badge, and what the user said aloud here (the turn follows it).
  micBadge.addEventListener("click", () => invoke("mic_stop").catch((err) => showBubble(err.message, { error: true })));
  listen(EVENTS.mic, showMic).catch((e) => console.warn("cannot listen for the microphone", e));
  listen(EVENTS.heard, (p) => {
    if (p?.preset_id !== presetId) return;
    const shown = `\u{1F3A4} ${stage.dataset.heard ?? ""}`;
    stage.dataset.heard = p.text ?? "";
    // With a turn_id: the words came after their turn started without them. The bubble changes
    // only while it still shows the placeholder (the reply owns it once it plays).
    if (p.turn_id) {
      stage.dataset.heardLaterTurnId = p.turn_id;
      if (bubble.hidden || bubble.textContent !== shown) return;
    }
    showBubble(`\u{1F3A4} ${p.text ?? ""}`, { linger: false });
  }).catch((e) => console.warn("cannot listen for what was heard", e));
  invoke("mic_status").then(showMic).catch(() => {});
  // The main character's body: data-body = its state (sitting, standing, ...); data-looking
  // while a screen capture runs, so the user sees that it looks.
  if (ctx.role === "main") {
    listen(EVENTS.bodyChanged, (p) => {
      if (p?.state?.state) stage.dataset.body = p.state.state;
      if (typeof p?.looking === "boolean") {
        stage.dataset.looking = String(p.looking);
        character.setLooking?.(p.looking);
      }
    }).catch((e) => console.warn("cannot listen for body changes", e));
  }
  wirePointer();
  wireChat();
  if (ctx.role === "main") greetOnFirstRun();
}

main();
