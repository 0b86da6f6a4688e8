// The built-in character: a chibi drawn in inline SVG and animated with CSS (character.css).
//
// createCharacter(container, {palette, size, sprites}) draws one character in `container` and
// returns { setEmotion(id), playMotion(id), setSpeaking(bool), setState(name), react(trigger),
//     setVocab(vocab), setSprites(sprites), setAsleep(bool), setHidden(bool),
//     setCrowd(n), speakClip(envelope|null), endSpeech(), destroy(), element }
// speakClip/endSpeech: lip sync (lipsync.js) for a clip of the character's voice.
// Every default emotion of the vocabulary (docs/cue-contract.md) is a distinct face, every
// default motion a CSS animation but the ambient ones, which step through a few frames (STEPPED).
// Ambient motions play by themselves while idle (see AMBIENT for the rhythm: idle must cost next
// to no CPU, so nothing animates between them, and asleep nothing plays at all); reactive motions
// play on their trigger (`clicked`, `dragged`), which the character detects on its own element
// and which the shell may also fire through react(trigger) or the exported triggerReaction().
// An unknown id is ignored with a console.warn: a cue never puts an error on screen.
//
// Sprite sets (docs/sprites.md): `sprites` = {emotions: {id: url}, motions: {id: url}, picture,
// talk} (`talk`: optional, shown while the voice's mouth is open)
// (the core's SpriteSet, data: URLs; `picture`, a card's still picture, shows for every emotion
// without its own image). An emotion with an image shows the image instead of the drawing; one
// without falls back to the built-in face. A motion with an image shows it for the motion's
// duration; a motion without one, while an image is shown, gives the image a small hop.

import { createLipSync } from './lipsync.js';
import { SVG_NS, PALETTES, EMOTIONS, FACES, bodyMarkup, resolvePalette } from './drawing.js';

export { PALETTES, EMOTIONS };

/** Motion id → duration in ms of its one-shot CSS animation (class `yui-m-<id>`). */
export const MOTIONS = {
  breathe: 3600,
  blink: 150,
  sway: 2400,
  flinch: 500,
  giggle: 900,
  dangle: 1500,
  nod: 900,
  shake_head: 1000,
  wave: 1500,
  jump: 750,
  bow: 1300,
  spin: 900,
  tilt: 1600,
  stretch: 1700,
  bounce: 1000,
};

/**
 * The ambient motions, played as a few discrete frames instead of CSS animations (WebKit would
 * repaint at 60 fps between the steps): [ms from the start, data-frame value ('' = at rest)].
 * Each entry is one paint of the window.
 */
export const STEPPED = {
  breathe: [[0, 'breathe-1'], [1200, 'breathe-2'], [2400, '']],
  blink: [[0, 'blink-shut'], [100, '']],
  sway: [[0, 'sway-l'], [900, 'sway-r'], [1800, '']],
};

/** States shown as accessories. */
export const STATES = ['idle', 'listening', 'thinking', 'browsing'];

/** How long a sprite motion image shows when the motion has no built-in duration. */
export const SPRITE_MOTION_MS = 1500;

const DEFAULT_REACTIONS = { clicked: ['flinch', 'giggle'], dragged: ['dangle'] };
const DEFAULT_AMBIENT = ['blink', 'sway'];

/**
 * The ambient rhythm: [min, max] ms between two plays of each kind, awake and sleepy, for one
 * character alone on screen. Every frame costs a composited frame of the window (9–11 ms of
 * CPU across the app and WebKit, however small the change: docs/PERFORMANCE.md "Idle CPU"), so
 * ambient motions are rare one-shots of a few frames (STEPPED) and nothing runs in between:
 * this rhythm is about 0.3 frames a second, under 0.5 % of a core. The desktop shares one
 * budget: with n characters on screen each waits n times as long (setCrowd), so idle costs the
 * same however many there are. After `sleepyAfterMs` without interaction or turns the character
 * only blinks, slowly; while the window is hidden or the character asleep nothing is scheduled.
 */
export const AMBIENT = {
  blink: [7000, 13000],
  breathe: [40000, 60000],
  other: [50000, 90000], // sway and the vocabulary's other ambient motions
  sleepyBlink: [20000, 30000],
  retry: [600, 1600], // a blink put off while another motion plays
  sleepyAfterMs: 10 * 60 * 1000,
};

/** A character woken by a turn or a click while the user is away dozes off again after this. */
export const DOZE_AGAIN_MS = 60 * 1000;

const between = ([lo, hi]) => lo + Math.random() * (hi - lo);


// --- the character ---------------------------------------------------------------------------

let cssInjected = false;
function ensureCss() {
  if (cssInjected || typeof document === 'undefined') return;
  cssInjected = true;
  if (document.querySelector('link[data-yui-character]')) return;
  const link = document.createElement('link');
  link.rel = 'stylesheet';
  link.href = new URL('./character.css', import.meta.url).href;
  link.dataset.yuiCharacter = '';
  document.head.appendChild(link);
}

const live = new Set();

/**
 * Fire a reactive trigger (`clicked`, `dragged`) on every live character, or on `target` (the
 * object createCharacter returned). For shells that handle the pointer themselves (e.g. a window
 * drag started by the OS).
 */
export function triggerReaction(trigger, target) {
  if (target) return target.react(trigger);
  for (const c of live) c.react(trigger);
}

/**
 * Draw a character in `container`.
 * options: palette ('rose' | 'sky' | a palette object), size (height in px, default 240),
 * interactive (default true: clicks and drags on the character play reactive motions),
 * ambient (default true: ambient motions play by themselves while idle).
 */
export function createCharacter(container, options = {}) {
  ensureCss();
  const palette = resolvePalette(options.palette);
  const size = Number(options.size) > 0 ? Number(options.size) : 240;

  const root = document.createElement('div');
  root.className = 'yui-char';
  root.style.height = `${size}px`;
  root.style.width = `${Math.round((size * 200) / 240)}px`;
  root.dataset.emotion = 'neutral';
  root.dataset.state = 'idle';
  root.dataset.motion = '';
  root.dataset.speaking = 'false';
  root.dataset.frame = '';

  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 200 240');
  svg.setAttribute('width', '100%');
  svg.setAttribute('height', '100%');
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'character');
  svg.innerHTML = bodyMarkup(palette);
  root.appendChild(svg);
  // The sprite layer: shown instead of the drawing when the sprite set has an image.
  const sprite = document.createElement('img');
  sprite.className = 'yui-sprite';
  sprite.alt = '';
  sprite.draggable = false;
  sprite.hidden = true;
  // Under the SVG, whose state accessories (globe, dots) stay drawn above the image.
  root.insertBefore(sprite, svg);
  container.appendChild(root);

  const face = svg.querySelector('.yui-face');
  const marks = svg.querySelector('.yui-marks');
  let emotion = null;
  let motionTimer = null;
  let frameTimer = null; // the next frame of a STEPPED motion
  const ambientTimers = { blink: null, breathe: null, other: null };
  let lastActivity = Date.now();
  let sleepy = false; // the rarer rhythm after a long idle
  let away = false; // the core says the user is away (setAsleep)
  let offScreen = false; // the window is not on screen (setHidden)
  let crowd = 1; // characters on screen: the ambient waits are this many times longer
  let dozing = false; // shown asleep now: the sleeping face, no ambient motion
  let dozeTimer = null;
  let awakeEmotion = null; // the face to wake up to
  let destroyed = false;
  let reactions = { ...DEFAULT_REACTIONS };
  let ambient = [...DEFAULT_AMBIENT];
  const reactCount = {};
  let sprites = { emotions: {}, motions: {}, picture: '' };
  let spriteMotion = null; // id of the motion whose image shows now
  let mouthOpen = false; // lip sync: the voice is loud now (a sprite set's `talk` image shows)
  const lips = createLipSync(root, (open) => {
    mouthOpen = open;
    if (sprites.talk) showLayer();
  });

  /** Show the image for the current emotion / motion, or the drawing when there is none. */
  function showLayer() {
    const talking = mouthOpen && !spriteMotion && sprites.talk;
    const url = talking || (spriteMotion && sprites.motions[spriteMotion]) || sprites.emotions[emotion] || sprites.picture;
    if (url) {
      if (sprite.getAttribute('src') !== url) sprite.src = url;
      sprite.hidden = false;
      root.classList.add('yui-sprite-on');
      root.dataset.sprite = talking ? 'talk' : spriteMotion && sprites.motions[spriteMotion] ? `motion:${spriteMotion}`
        : sprites.emotions[emotion] ? `emotion:${emotion}` : 'picture';
    } else {
      sprite.hidden = true;
      sprite.removeAttribute('src');
      root.classList.remove('yui-sprite-on');
      root.dataset.sprite = '';
    }
  }

  function setSprites(next) {
    const pick = (m) => {
      const out = {};
      if (m && typeof m === 'object') {
        for (const [k, v] of Object.entries(m)) if (typeof v === 'string' && v) out[k] = v;
      }
      return out;
    };
    const picture = typeof next?.picture === 'string' && next.picture ? next.picture : '';
    const talk = typeof next?.talk === 'string' && next.talk ? next.talk : '';
    sprites = { emotions: pick(next?.emotions), motions: pick(next?.motions), picture, talk };
    if (!destroyed) showLayer();
  }

  function setEmotion(id) {
    if (destroyed) return;
    touch();
    showEmotion(id);
  }

  // Emotion id → its face and marks, drawn once and then only shown or hidden (CSS: visibility,
  // so their renderers live on). WebKit 2.50 kept the renderers of every face replaced, ~5 MiB
  // over 300 soak turns (docs/PERFORMANCE.md, "Faces drawn once").
  const drawnFaces = {};
  function drawnFace(id, draw) {
    let layer = drawnFaces[id];
    if (!layer) {
      const g = document.createElementNS(SVG_NS, 'g');
      g.dataset.face = id;
      g.innerHTML = draw(palette);
      // Marks around the head (sparkles, tears of gloom, Zz, ?) sit above the hair.
      const m = document.createElementNS(SVG_NS, 'g');
      m.dataset.face = id;
      m.replaceChildren(...g.querySelectorAll('.marks'));
      face.appendChild(g);
      marks.appendChild(m);
      layer = drawnFaces[id] = { face: g, marks: m };
    }
    return layer;
  }

  /** Draw emotion `id` (no activity: the sleep uses it too). */
  function showEmotion(id) {
    const draw = FACES[id];
    const image = sprites.emotions[id];
    if (!draw && !image) {
      console.warn(`[character] unknown emotion id ignored: ${id}`);
      return;
    }
    if (id === emotion) return;
    emotion = id;
    root.dataset.emotion = id;
    showLayer();
    if (!draw) return; // an image-only emotion: the drawing keeps its last face underneath
    const shown = drawnFace(id, draw);
    for (const layer of Object.values(drawnFaces)) {
      for (const g of [layer.face, layer.marks]) g.toggleAttribute('data-on', layer === shown);
    }
    // A short pop so a change of face catches the eye.
    face.classList.remove('yui-pop');
    void face.getBoundingClientRect();
    face.classList.add('yui-pop');
  }

  function playMotion(id) {
    if (destroyed) return;
    touch();
    startMotion(id);
  }

  /** Play a motion without counting it as activity (the ambient rhythm uses this). */
  function startMotion(id) {
    const image = sprites.motions[id];
    const ms = MOTIONS[id] ?? (image ? SPRITE_MOTION_MS : undefined);
    if (ms === undefined) {
      console.warn(`[character] unknown motion id ignored: ${id}`);
      return;
    }
    // Restart: drop the running class and force a style flush so the animation starts over.
    clearTimeout(motionTimer);
    stopFrames();
    for (const c of [...root.classList]) if (c.startsWith('yui-m-')) root.classList.remove(c);
    root.classList.remove('yui-sprite-hop');
    void root.offsetWidth;
    root.classList.add(`yui-m-${id}`);
    root.dataset.motion = id;
    if (STEPPED[id] && !image) playFrames(STEPPED[id]);
    spriteMotion = image ? id : null;
    showLayer();
    // No image for the motion but an image on screen: a hop, so the cue is still seen (not
    // for idle motions, which would make the sprite fidget).
    if (!image && root.classList.contains('yui-sprite-on') && !isIdleMotion(id)) {
      root.classList.add('yui-sprite-hop');
    }
    motionTimer = setTimeout(() => {
      stopFrames();
      root.classList.remove(`yui-m-${id}`, 'yui-sprite-hop');
      root.dataset.motion = '';
      if (spriteMotion) {
        spriteMotion = null;
        showLayer();
      }
    }, ms);
  }

  /** Step through `frames` ([ms, data-frame]): one style change, so one paint, per frame. */
  function playFrames(frames) {
    const t0 = performance.now();
    let i = 0;
    const next = () => {
      frameTimer = null;
      root.dataset.frame = frames[i][1];
      i += 1;
      if (i < frames.length) frameTimer = setTimeout(next, Math.max(0, frames[i][0] - (performance.now() - t0)));
    };
    next();
  }
  function stopFrames() {
    clearTimeout(frameTimer);
    frameTimer = null;
    if (root.dataset.frame) root.dataset.frame = '';
  }

  const isIdleMotion = (id) => id === 'breathe' || ambient.includes(id) || DEFAULT_AMBIENT.includes(id);

  function setSpeaking(on) {
    if (destroyed) return;
    touch();
    root.dataset.speaking = on ? 'true' : 'false';
    root.classList.toggle('yui-speaking', !!on);
  }

  function setState(name) {
    if (destroyed) return;
    touch();
    if (!STATES.includes(name)) {
      console.warn(`[character] unknown state ignored: ${name}`);
      return;
    }
    root.dataset.state = name;
  }

  function react(trigger) {
    const list = reactions[trigger];
    if (!list || list.length === 0) {
      console.warn(`[character] no reactive motion for trigger: ${trigger}`);
      return;
    }
    // Alternate through the trigger's motions so repeated clicks do not look canned.
    const n = reactCount[trigger] || 0;
    reactCount[trigger] = n + 1;
    playMotion(list[n % list.length]);
  }

  /**
   * Take the reactive and ambient motions from a vocabulary (the `yui vocab show` / settings
   * shape: {motions: [{id, reactive, ambient, trigger}]}). Motions with neither a drawing nor a
   * sprite image are kept out.
   */
  function setVocab(vocab) {
    const motions = (vocab && Array.isArray(vocab.motions)) ? vocab.motions : [];
    const next = {};
    const amb = [];
    for (const m of motions) {
      if (!m || (MOTIONS[m.id] === undefined && !sprites.motions[m.id])) continue;
      if (m.reactive) {
        const t = m.trigger || 'clicked';
        (next[t] = next[t] || []).push(m.id);
      }
      if (m.ambient && m.id !== 'breathe') amb.push(m.id);
    }
    reactions = next;
    ambient = amb;
    root.classList.toggle('yui-no-breathe', !motions.some((m) => m && m.id === 'breathe' && m.ambient));
  }

  // Ambient motions: one-shots at random human-looking intervals, only while nothing else plays.
  // Three independent timers (blink, breathe, the others); none while the page is hidden.
  const ambientOn = () =>
    options.ambient !== false && !destroyed && !dozing && !offScreen && document.visibilityState !== 'hidden';
  const busy = () => !!root.dataset.motion || root.dataset.speaking === 'true';
  // A drawn motion is not seen while a sprite image covers the drawing: skip it, for free.
  const unseen = (id) => root.classList.contains('yui-sprite-on') && !sprites.motions[id];
  const ambientPlays = {
    blink: () => ambient.includes('blink') && 'blink',
    breathe: () => !root.classList.contains('yui-no-breathe') && 'breathe',
    other: () => {
      const others = ambient.filter((m) => m !== 'blink');
      return others.length > 0 && others[Math.floor(Math.random() * others.length)];
    },
  };
  function scheduleAmbient(kind, retry = false) {
    clearTimeout(ambientTimers[kind]);
    ambientTimers[kind] = null;
    if (!ambientOn()) return;
    sleepy = Date.now() - lastActivity >= AMBIENT.sleepyAfterMs;
    // Sleepy: a slow blink only; the other kinds wait for the next activity.
    if (sleepy && kind !== 'blink') return;
    // Something else playing (a breath, a cue) only delays a blink a little; the others wait.
    const wait = retry ? between(AMBIENT.retry) : crowd * between(sleepy ? AMBIENT.sleepyBlink : AMBIENT[kind]);
    ambientTimers[kind] = setTimeout(() => {
      ambientTimers[kind] = null;
      const id = ambientPlays[kind]();
      if (id && busy()) return scheduleAmbient(kind, kind === 'blink');
      if (id && !unseen(id)) startMotion(id);
      scheduleAmbient(kind);
    }, wait);
  }
  const scheduleAllAmbient = () => { for (const kind of Object.keys(ambientTimers)) scheduleAmbient(kind); };
  function stopAmbient() {
    for (const kind of Object.keys(ambientTimers)) {
      clearTimeout(ambientTimers[kind]);
      ambientTimers[kind] = null;
    }
  }
  /**
   * Interaction or a turn: back to the awake rhythm if the character had gone sleepy; a dozing
   * character wakes for it, and dozes off again DOZE_AGAIN_MS after the last one while the user
   * is still away.
   */
  function touch() {
    lastActivity = Date.now();
    if (dozing) wake();
    else if (sleepy) scheduleAllAmbient();
    if (away) {
      clearTimeout(dozeTimer);
      dozeTimer = setTimeout(doze, DOZE_AGAIN_MS);
    }
  }

  /** Fall asleep: the sleeping face, every ambient timer stopped, nothing animates. */
  function doze() {
    if (dozing || destroyed || root.dataset.speaking === 'true') return;
    dozing = true;
    awakeEmotion = emotion;
    stopAmbient();
    root.dataset.asleep = 'true';
    showEmotion('sleepy');
  }

  function wake() {
    if (!dozing) return;
    dozing = false;
    root.dataset.asleep = 'false';
    if (awakeEmotion) showEmotion(awakeEmotion);
    sleepy = false;
    scheduleAllAmbient();
  }

  /**
   * The user is away (`true`: the character falls asleep) or back (`false`: it wakes). The core
   * decides (yui_core::presence); a turn or a click still wakes the character for a while.
   */
  function setAsleep(on) {
    if (destroyed) return;
    away = !!on;
    clearTimeout(dozeTimer);
    dozeTimer = null;
    if (away) doze();
    else {
      lastActivity = Date.now();
      wake();
    }
  }
  /**
   * The window is off screen (`true`: hidden or iconified, as the shell sees it; WebKit may not)
   * or back: nothing ambient plays while nobody can see it.
   */
  function setHidden(on) {
    if (destroyed || offScreen === !!on) return;
    offScreen = !!on;
    if (offScreen) {
      stopAmbient();
    } else if (!dozing) {
      scheduleAllAmbient();
    }
  }

  /** `n` characters are on screen: they share the ambient budget (waits n times as long). */
  function setCrowd(n) {
    const next = Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1;
    if (destroyed || next === crowd) return;
    crowd = next;
    if (ambientOn()) scheduleAllAmbient();
  }

  const onVisibility = () =>
    document.visibilityState === 'hidden' ? stopAmbient() : dozing || scheduleAllAmbient();
  document.addEventListener('visibilitychange', onVisibility);

  // Pointer: a press that moves past a few pixels is a drag, otherwise a click.
  let press = null;
  const onDown = (e) => {
    touch();
    press = { x: e.clientX, y: e.clientY, dragged: false };
  };
  const onMove = (e) => {
    if (!press || press.dragged) return;
    if (Math.hypot(e.clientX - press.x, e.clientY - press.y) > 6) {
      press.dragged = true;
      react('dragged');
    }
  };
  const onUp = () => {
    if (press && !press.dragged) react('clicked');
    press = null;
  };
  if (options.interactive !== false) {
    root.addEventListener('pointerdown', onDown);
    window.addEventListener('pointermove', onMove);
    window.addEventListener('pointerup', onUp);
  }

  const api = {
    element: root,
    setEmotion,
    playMotion,
    setSpeaking,
    setState,
    setAsleep,
    setHidden,
    setCrowd,
    react,
    setVocab,
    setSprites,
    speakClip(envelope) {
      if (destroyed) return;
      touch();
      setSpeaking(true);
      lips.clip(envelope);
    },
    /** A batch of a realtime reply's streamed envelope (lipsync.js `stream`). */
    speakStream(batch) {
      if (destroyed) return;
      touch();
      setSpeaking(!batch?.stopped);
      lips.stream(batch);
    },
    endSpeech() {
      lips.stop();
      setSpeaking(false);
    },
    get emotion() { return emotion; },
    destroy() {
      destroyed = true;
      lips.stop();
      clearTimeout(motionTimer);
      clearTimeout(dozeTimer);
      clearTimeout(frameTimer);
      stopAmbient();
      document.removeEventListener('visibilitychange', onVisibility);
      root.removeEventListener('pointerdown', onDown);
      window.removeEventListener('pointermove', onMove);
      window.removeEventListener('pointerup', onUp);
      root.remove();
      live.delete(api);
    },
  };
  live.add(api);
  setSprites(options.sprites);
  setEmotion('neutral');
  scheduleAllAmbient();
  return api;
}
