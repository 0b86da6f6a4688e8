// A VRM character (docs/vrm.md): the same interface as createCharacter (character.js), drawn
// with three.js and three-vrm (ui/vendor/vrm.js, bundled from npm by scripts/vendor-ui.sh).
// Only windows whose look is a VRM import this module.
//
// It renders on demand: no frame while nothing moves. A blink or a glance is a short burst of
// frames scheduled by a timer; frames run (at most FPS a second) only while the character
// speaks, changes expression, moves, is dragged or its spring bones settle; hidden or asleep it
// draws nothing. After a pause the first time step is one frame long, so spring bones never
// jump. Every decision of what a face is comes from the core (`look`: faces per emotion, mouth
// shapes, blink); this only applies them.

import * as V from '../vendor/vrm.js';
import { createLipSync } from './lipsync.js';
import { MOTIONS, REST, STATE_POSE } from './vrm-motion.js';
import { createClipPlayer } from './vrm-animation.js';

// Observable for tests and the curious: this window loaded the 3D renderer.
document.documentElement.dataset.vrmRenderer = 'loaded';

export const FPS = 30;
const FRAME_MS = 1000 / FPS;
/** Spring bones swing on after a move; frames run this long after the last one. */
const SETTLE_MS = 900;
/** An expression fades in or out over this long. */
const FADE_MS = 160;
/** A blink, a frame each: half shut, shut, half open, open. Four frames whatever the frame
 *  time (a blink timed in ms missed the shut frame when llvmpipe's frames ran long). */
const BLINK_STEPS = [0.6, 1, 0.5, 0];
/** A first frame slower than this means software rendering too slow to use: fall back. */
export const FIRST_FRAME_LIMIT_MS = 4000;
/** Mouth shapes take turns while the voice is loud, so the mouth does not only open and shut. */
const VISEME_STEP_MS = 130;
const VISEME_ORDER = ['aa', 'oh', 'ee', 'aa', 'ou', 'ih'];

/** Why a window cannot draw a model: thrown as an Error with one of these messages. */
export const NO_WEBGL2 = 'WebGL2 is not available in this window';

/**
 * Draw the model `bytes` (an ArrayBuffer) into `container` with the decisions of `look` (the
 * core's vrm::Look). `motionBytes(id)`: a Promise of the `.vrma` file's bytes of a motion the
 * look lists in `motions` (loaded the first time it plays). Resolves to the character's api
 * once the first frame is drawn; rejects (nothing left in the container) when WebGL2 is
 * missing, the model cannot be drawn, or the first frame takes far too long.
 */
export async function createVrmCharacter(container, { look, bytes, size = 200, motionBytes = null }) {
  // The core's framing says the canvas's proportions (the shell sized the window to match);
  // without one, the drawn character's box.
  const height = size;
  const width = Math.round(size * (look?.framing?.aspect ?? 200 / 240));
  const root = document.createElement('div');
  root.className = 'yui-char yui-vrm';
  Object.assign(root.style, { width: `${width}px`, height: `${height}px`, position: 'relative' });
  Object.assign(root.dataset, { emotion: 'neutral', state: 'idle', motion: '', speaking: 'false', frames: '0', look: 'vrm' });
  const canvas = document.createElement('canvas');
  Object.assign(canvas.style, { width: '100%', height: '100%', display: 'block' });
  root.appendChild(canvas);
  container.appendChild(root);
  let renderer = null;
  try {
    // No multisampling: on software GL (llvmpipe, no GPU) it multiplies every frame's fill cost,
    // and a frame is most of what a resting character costs (docs/PERFORMANCE.md).
    const gl = canvas.getContext('webgl2', { alpha: true, antialias: false, premultipliedAlpha: true, powerPreference: 'low-power' });
    if (!gl) throw new Error(NO_WEBGL2);
    renderer = new V.WebGLRenderer({ canvas, context: gl, alpha: true });
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    renderer.setSize(width, height, false);
    renderer.setClearColor(0x000000, 0);
    renderer.outputColorSpace = V.SRGBColorSpace;
    const loader = new V.GLTFLoader();
    loader.register((parser) => new V.VRMLoaderPlugin(parser));
    const gltf = await loader.parseAsync(bytes, '');
    const vrm = gltf.userData.vrm;
    if (!vrm) throw new Error('the file has no VRM data three-vrm can read');
    const api = build(root, renderer, vrm, look, width, height, motionBytes);
    const t0 = performance.now();
    api.drawNow();
    const first = performance.now() - t0;
    root.dataset.firstFrameMs = String(Math.round(first));
    if (first > FIRST_FRAME_LIMIT_MS) {
      api.destroy();
      throw new Error(`its first frame took ${Math.round(first)} ms (software rendering too slow)`);
    }
    return api;
  } catch (e) {
    renderer?.dispose();
    root.remove();
    throw e;
  }
}

function build(root, renderer, vrm, look, width, height, motionBytes) {
  const scene = new V.Scene();
  scene.add(new V.AmbientLight(0xffffff, 1.6));
  const sun = new V.DirectionalLight(0xffffff, 1.4);
  sun.position.set(0.5, 1.5, 2);
  scene.add(sun);
  const v0 = vrm.meta?.metaVersion === '0';
  V.VRMUtils.rotateVRM0(vrm);
  scene.add(vrm.scene);
  vrm.scene.traverse((o) => { o.frustumCulled = false; });
  const bone = (name) => vrm.humanoid?.getNormalizedBoneNode(name) ?? null;
  const camera = frame(vrm, bone, width / height, look?.framing);
  const gaze = new V.Object3D();
  scene.add(gaze);
  const head = bone('head');
  const home = new V.Vector3();
  head?.getWorldPosition(home);
  home.z += 1.5;
  gaze.position.copy(home);
  if (vrm.lookAt) vrm.lookAt.target = gaze;
  const gazeWant = home.clone();
  const hipsHome = bone('hips')?.position.clone() ?? null;

  const faces = new Map((look?.faces ?? []).map((f) => [f.emotion, f.expressions ?? []]));
  const visemes = Array.isArray(look?.visemes) ? look.visemes : [];
  const blinkNames = Array.isArray(look?.blink) ? look.blink : [];
  const steps = VISEME_ORDER.filter((v) => visemes.includes(v));
  const want = new Map(); // expression → target weight (emotion)
  const now = new Map(); // expression → weight shown
  let emotion = 'neutral';
  let mouth = 0;
  let plainTalk = false;
  let speaking = false;
  let blinkStep = -1; // the running blink's next step in BLINK_STEPS
  let motion = null; // {id, start, ms, pose} or, from a .vrma, {id, start, ms, clip}
  let motionAsk = 0; // the latest playMotion: a file that loads late does not cut a newer motion
  const clips = createClipPlayer(vrm, motionBytes ? look?.motions : [], (id) => motionBytes(id));
  let state = 'idle';
  let asleep = false;
  let offScreen = false;
  let crowd = 1;
  let destroyed = false;
  let frames = 0;
  let timer = 0; // the next frame
  let last = 0; // the last frame's time; 0 after a pause
  let busyUntil = 0;
  // Until when frames update the whole model; after that a frame that only blinks updates the
  // face's weights and nothing else (the bones, the gaze and the spring bones are at rest).
  let wholeUntil = 0;
  let ambientTimer = 0;
  let reactions = { clicked: ['flinch', 'giggle'], dragged: ['dangle'] };
  const reactCount = {};
  // Click-through (outline.js): the silhouette of the last settled frame, at a quarter of the
  // window's pixels, read right after that frame is drawn (a WebGL canvas can be read only
  // then). While the body moves, its whole box takes clicks; blinks and faces change nothing.
  let silhouette = null;
  let bodyMoving = false;

  const lips = createLipSync(root, () => {}, (v) => { mouth = v; plainTalk = false; invalidate(FRAME_MS * 2); });

  function invalidate(ms = 0, whole = true) {
    if (destroyed) return;
    const until = performance.now() + ms;
    busyUntil = Math.max(busyUntil, until);
    if (whole) wholeUntil = Math.max(wholeUntil, until);
    if (!timer && !offScreen) timer = setTimeout(tick, last ? Math.max(0, FRAME_MS - (performance.now() - last)) : 0);
  }

  function tick() {
    timer = 0;
    if (destroyed || offScreen) { last = 0; return; }
    const t = performance.now();
    // After a pause the first step is one frame long: spring bones do not jump.
    const dt = last ? Math.min((t - last) / 1000, 2 / FPS) : 1 / FPS;
    last = t;
    const moving = update(dt, t);
    draw();
    if (moving || speaking || t < busyUntil) timer = setTimeout(tick, FRAME_MS);
    else {
      last = 0;
      if (bodyMoving) { bodyMoving = false; snapSilhouette(); }
    }
  }

  /** Keep the frame just drawn as the silhouette, and say the outline changed. */
  function snapSilhouette() {
    silhouette ??= document.createElement('canvas');
    silhouette.width = Math.ceil(width / 4);
    silhouette.height = Math.ceil(height / 4);
    silhouette.getContext('2d').drawImage(renderer.domElement, 0, 0, silhouette.width, silhouette.height);
    api.onOutline?.();
  }

  /** The body starts to move: its whole box takes clicks until it settles. */
  function bodyMoves() {
    if (bodyMoving) return;
    bodyMoving = true;
    api.onOutline?.();
  }

  function draw() {
    renderer.render(scene, camera);
    frames += 1;
    root.dataset.frames = String(frames);
  }

  /** Advance everything by dt; whether something still moves. */
  function update(dt, t) {
    let moving = false;
    let blinking = false;
    // Expressions fade toward the emotion's face.
    const step = (dt * 1000) / FADE_MS;
    for (const name of new Set([...want.keys(), ...now.keys()])) {
      const from = now.get(name) ?? 0;
      const to = want.get(name) ?? 0;
      const next = Math.abs(to - from) <= step ? to : from + Math.sign(to - from) * step;
      if (next !== to) moving = true;
      if (next === 0 && to === 0) now.delete(name); else now.set(name, next);
    }
    const em = vrm.expressionManager;
    if (em) {
      for (const [name, w] of now) em.setValue(name, w);
      // The mouth: the envelope's level on the shape of the moment.
      const level = plainTalk ? 0.35 + 0.35 * Math.sin(t / 70) : mouth;
      const shape = steps.length ? steps[Math.floor(t / VISEME_STEP_MS) % steps.length] : null;
      for (const v of visemes) if (!(want.get(v) > 0)) em.setValue(v, v === shape ? Math.min(1, level * 1.6) : 0);
      // The eyes: shut asleep, a blink's triangle, else as the face says.
      let eyes = asleep ? 1 : 0;
      if (blinkStep >= 0) {
        eyes = Math.max(eyes, BLINK_STEPS[blinkStep]);
        blinkStep += 1;
        if (blinkStep >= BLINK_STEPS.length) blinkStep = -1; else blinking = true;
      }
      for (const b of blinkNames) em.setValue(b, Math.max(eyes, want.get(b) ?? 0));
    }
    // The gaze eases toward where the character looks.
    // (Within a centimetre at arm's length the eyes do not move visibly: done.)
    if (gaze.position.distanceToSquared(gazeWant) > 1e-4) {
      gaze.position.lerp(gazeWant, Math.min(1, dt * 16));
      moving = true;
    } else gaze.position.copy(gazeWant);
    // Only the eyes change: the face's weights, not the whole model (most of a resting frame's
    // CPU without the JIT: docs/PERFORMANCE.md, "VRM characters").
    if (!moving && !motion && t >= wholeUntil) {
      em?.update();
      return blinking;
    }
    moving = pose(t) || moving;
    vrm.update(dt);
    return moving || blinking;
  }

  /** The bones: rest, the lasting state, and the running motion. */
  function pose(t) {
    const add = {};
    const put = (bones) => {
      for (const [name, r] of Object.entries(bones ?? {})) {
        const a = (add[name] ??= [0, 0, 0]);
        a[0] += r[0]; a[1] += r[1]; a[2] += r[2];
      }
    };
    put(REST);
    put(STATE_POSE[state]);
    let lift = 0;
    let turn = 0;
    let moving = false;
    if (motion) {
      const k = (t - motion.start) / motion.ms;
      if (k >= 1) {
        endMotion();
        busyUntil = Math.max(busyUntil, t + SETTLE_MS);
        wholeUntil = Math.max(wholeUntil, t + SETTLE_MS);
      } else if (motion.clip) {
        moving = true;
      } else {
        const p = motion.pose(k);
        put(p.bones);
        lift = p.lift ?? 0;
        turn = p.turn ?? 0;
        moving = true;
      }
    }
    for (const name of ['hips', 'spine', 'chest', 'neck', 'head', 'leftUpperArm', 'rightUpperArm', 'leftLowerArm', 'rightLowerArm']) {
      const node = bone(name);
      const r = add[name] ?? [0, 0, 0];
      // A VRM 0.x model's normalized bones face the other way (three-vrm turns the scene, not
      // the bones): x and z turn the other way round.
      if (v0) node?.rotation.set(-r[0], r[1], -r[2]);
      else node?.rotation.set(r[0], r[1], r[2]);
    }
    const hips = bone('hips');
    if (hips && hipsHome) {
      hips.position.set(hipsHome.x, hipsHome.y + lift, hipsHome.z);
      hips.rotation.y += turn;
    }
    // A .vrma motion poses the bones it moves over the rest pose, at the wall clock's moment.
    if (motion?.clip) clips.poseAt((t - motion.start) / 1000);
    return moving;
  }

  function setEmotion(id) {
    if (destroyed) return;
    const face = faces.get(id) ?? faces.get('neutral') ?? [];
    emotion = id;
    root.dataset.emotion = id;
    for (const k of want.keys()) want.set(k, 0);
    for (const e of face) want.set(e.name, Math.max(0, Math.min(1, Number(e.weight) || 0)));
    invalidate(FADE_MS + FRAME_MS);
  }

  function playMotion(id) {
    // Nobody sees a motion of a hidden window, and asleep it does not move.
    if (destroyed || asleep || offScreen) return;
    const ask = ++motionAsk;
    if (clips.has(id)) {
      // From its .vrma file (loaded the first time); a file that cannot play: procedural.
      clips.clip(id).then((clip) => {
        if (ask !== motionAsk || destroyed || asleep || offScreen) return;
        if (clip) startMotion({ id, ms: clip.duration * 1000, clip });
        else if (MOTIONS[id]) startMotion({ id, ...MOTIONS[id] });
      });
      return;
    }
    if (MOTIONS[id]) startMotion({ id, ...MOTIONS[id] });
  }

  function startMotion(m) {
    endMotion();
    motion = { ...m, start: performance.now() };
    if (m.clip) clips.start(m.clip);
    root.dataset.motion = m.id;
    root.dataset.motionFrom = m.clip ? 'vrma' : 'procedural'; // observable for tests
    bodyMoves();
    invalidate(m.ms + SETTLE_MS);
  }

  /** The motion ends or is cut: a clip hands the bones and its expressions back. */
  function endMotion() {
    if (motion?.clip) {
      clips.stop();
      for (const [name, w] of now) vrm.expressionManager?.setValue(name, w);
    }
    motion = null;
    root.dataset.motion = '';
  }

  /** Look toward a point of the window (x, y in 0..1 of its size), or straight ahead (null). */
  function lookAt(p) {
    gazeWant.copy(home);
    if (p) {
      gazeWant.x += (p.x - 0.5) * 1.6;
      gazeWant.y -= (p.y - 0.35) * 1.2;
    }
    invalidate(FRAME_MS); // frames run while the gaze moves (update says so), no longer
  }

  // Blinks (about 4 frames) and glances (about 12): one timer, every 3–8 s times the characters
  // on screen, a short burst each; never while hidden or asleep.
  function scheduleAmbient() {
    clearTimeout(ambientTimer);
    ambientTimer = 0;
    if (destroyed || offScreen || asleep) return;
    const wait = (3000 + Math.random() * 5000) * crowd;
    ambientTimer = setTimeout(() => {
      if (Math.random() < 0.9 || !vrm.lookAt) {
        if (blinkNames.length) { blinkStep = 0; invalidate(0, false); }
      } else if (!hovering) {
        lookAt({ x: 0.5 + (Math.random() - 0.5) * 0.6, y: 0.35 + (Math.random() - 0.5) * 0.3 });
        setTimeout(() => { if (!hovering && !destroyed) lookAt(null); }, 900);
      }
      scheduleAmbient();
    }, wait);
  }

  // The eyes follow the cursor while it is over the window.
  let hovering = false;
  const onMove = (e) => {
    const r = root.getBoundingClientRect();
    hovering = true;
    lookAt({ x: (e.clientX - r.left) / r.width, y: (e.clientY - r.top) / r.height });
  };
  const onLeave = () => { hovering = false; lookAt(null); };
  root.addEventListener('pointermove', onMove);
  root.addEventListener('pointerleave', onLeave);
  // Pressed and moved: the window is being dragged (the shell moves it); clicked: a reaction.
  let press = null;
  const onDown = (e) => { if (e.button === 0) press = { x: e.screenX, y: e.screenY, dragged: false }; };
  const onDrag = (e) => {
    if (!press || press.dragged || Math.hypot(e.screenX - press.x, e.screenY - press.y) <= 4) return;
    press.dragged = true;
    react('dragged');
  };
  const onUp = () => { if (press && !press.dragged) react('clicked'); press = null; };
  root.addEventListener('pointerdown', onDown);
  window.addEventListener('pointermove', onDrag);
  window.addEventListener('pointerup', onUp);

  function react(trigger) {
    const list = reactions[trigger];
    if (!list?.length) return;
    const n = reactCount[trigger] ?? 0;
    reactCount[trigger] = n + 1;
    playMotion(list[n % list.length]);
  }

  const api = {
    element: root,
    look: 'vrm',
    setEmotion,
    playMotion,
    react,
    setSpeaking(on) {
      speaking = !!on;
      root.dataset.speaking = speaking ? 'true' : 'false';
      if (speaking) invalidate(FRAME_MS);
      else { mouth = 0; plainTalk = false; invalidate(FADE_MS); }
    },
    setState(name) {
      const was = state;
      state = STATE_POSE[name] || name === 'idle' || name === 'listening' ? name : state;
      root.dataset.state = state;
      if (state !== was && (STATE_POSE[state] || STATE_POSE[was])) bodyMoves();
      invalidate(SETTLE_MS);
    },
    setAsleep(on) {
      if (destroyed || asleep === !!on) return;
      asleep = !!on;
      root.dataset.asleep = String(asleep);
      endMotion();
      // One short burst to show the eyes shut (or open), then nothing.
      busyUntil = 0;
      invalidate(FADE_MS + FRAME_MS);
      scheduleAmbient();
    },
    setHidden(on) {
      if (destroyed || offScreen === !!on) return;
      offScreen = !!on;
      if (offScreen) { clearTimeout(timer); timer = 0; last = 0; }
      else invalidate(FRAME_MS);
      scheduleAmbient();
    },
    setCrowd(n) {
      const next = Number.isFinite(n) && n >= 1 ? Math.floor(n) : 1;
      if (next === crowd) return;
      crowd = next;
      scheduleAmbient(); // the next blink on the new rhythm
    },
    setVocab(vocab) {
      const next = {};
      for (const m of vocab?.motions ?? []) {
        if (m?.reactive && (MOTIONS[m.id] || clips.has(m.id))) (next[m.trigger || 'clicked'] ??= []).push(m.id);
      }
      if (Object.keys(next).length) reactions = next;
    },
    setSprites() {},
    /** The core's look again (the vocabulary changed): faces per emotion. */
    setLook(next) {
      clips.setIds(motionBytes ? next?.motions : []);
      faces.clear();
      for (const f of next?.faces ?? []) faces.set(f.emotion, f.expressions ?? []);
      setEmotion(emotion);
    },
    setLooking(on) { lookAt(on ? { x: 0.2, y: 0.8 } : null); },
    speakClip(envelope) {
      api.setSpeaking(true);
      lips.clip(envelope);
      plainTalk = root.classList.contains('yui-talking-plain');
    },
    speakStream(batch) {
      api.setSpeaking(!batch?.stopped);
      lips.stream(batch);
    },
    endSpeech() { lips.stop(); api.setSpeaking(false); },
    drawNow() { update(1 / FPS, performance.now()); draw(); snapSilhouette(); },
    /** Called when the outline may have changed (set by the window: click-through). */
    onOutline: null,
    /** Mark where the model is drawn in `mask` (outline.js). */
    markOutline(mask) {
      const b = root.getBoundingClientRect();
      if (bodyMoving || !silhouette) mask.addRect(b.left, b.top, b.width, b.height);
      else mask.addAlpha(silhouette, b.left, b.top, b.width, b.height);
    },
    /** The character showing `id` at once (no fade), as a PNG data URL (the look picker). */
    snapshot(id) {
      setEmotion(id);
      for (const [name, w] of want) now.set(name, w);
      update(1 / FPS, performance.now());
      draw();
      return renderer.domElement.toDataURL('image/png');
    },
    get emotion() { return emotion; },
    get frames() { return frames; },
    destroy() {
      destroyed = true;
      lips.stop();
      clearTimeout(timer);
      clearTimeout(ambientTimer);
      root.removeEventListener('pointermove', onMove);
      root.removeEventListener('pointerleave', onLeave);
      root.removeEventListener('pointerdown', onDown);
      window.removeEventListener('pointermove', onDrag);
      window.removeEventListener('pointerup', onUp);
      V.VRMUtils.deepDispose(vrm.scene);
      renderer.dispose();
      root.remove();
    },
  };
  setEmotion('neutral');
  for (const [name, w] of want) now.set(name, w);
  scheduleAmbient();
  return api;
}

/**
 * A camera that fills the window with the head and upper body: `framing` (the core's, in the
 * model's metres: top, bottom, width) when there is one, else from the bones.
 */
function frame(vrm, bone, aspect, framing) {
  const at = (name) => {
    const v = new V.Vector3();
    const b = bone(name);
    if (b) b.getWorldPosition(v);
    return b ? v : null;
  };
  vrm.scene.updateMatrixWorld(true);
  const head = at('head') ?? new V.Vector3(0, 1.4, 0);
  const neck = at('neck') ?? head.clone().setY(head.y - 0.1);
  const chest = at('upperChest') ?? at('chest') ?? at('spine') ?? head.clone().setY(head.y - 0.35);
  // The head bone is at the neck's top; a head reaches about 0.27 m above it on a figure whose
  // hips are 0.9 m high (VRoid Studio's proportions), scaled to this model.
  const hips = at('hips');
  const scale = hips && hips.y > 0.2 ? hips.y / 0.9 : Math.max(0.5, (head.y - neck.y) / 0.09);
  const headTop = framing?.top ?? head.y + 0.27 * scale;
  const bottom = framing?.bottom ?? chest.y - (head.y - chest.y) * 0.9;
  const tall = headTop - bottom;
  const wide = framing?.width ?? tall * 0.8;
  const fov = 28;
  const camera = new V.PerspectiveCamera(fov, aspect, 0.05, 50);
  const fit = Math.max(tall, wide / aspect);
  const dist = fit / 2 / Math.tan((fov * Math.PI) / 360);
  const cy = (headTop + bottom) / 2;
  camera.position.set(head.x, cy, head.z + dist);
  camera.lookAt(head.x, cy, head.z);
  return camera;
}
