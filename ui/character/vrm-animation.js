// The motions a VRM character plays from `.vrma` files (docs/vrm.md, "Motions"): the core says
// which motions have one (`look.motions`) and hands each file's bytes on request; this loads a
// file the first time its motion plays (three-vrm-animation, in ui/vendor/vrm.js), keeps the
// clip, and poses the model at a moment of it. Time comes from the caller (vrm.js's frames, at
// most 30 a second, only while the motion plays): no mixer runs on its own.

import * as V from '../vendor/vrm.js';

/**
 * `vrm`: the loaded model; `ids`: the motions with a file; `load(id)`: a Promise of the file's
 * bytes (an ArrayBuffer). A file that cannot be played is said once in the console and its
 * motion plays its procedural animation instead (`clip` resolves to null).
 */
export function createClipPlayer(vrm, ids, load) {
  let have = new Set(ids ?? []);
  const clips = new Map(); // id → Promise<AnimationClip | null>
  let mixer = null;
  let action = null;

  async function read(id) {
    const loader = new V.GLTFLoader();
    loader.register((parser) => new V.VRMAnimationLoaderPlugin(parser));
    const gltf = await loader.parseAsync(await load(id), '');
    const animation = gltf.userData.vrmAnimations?.[0];
    if (!animation) throw new Error('the file has no VRM animation three-vrm can read');
    // The gaze track drives the model's look-at through this proxy (made once, named so
    // createVRMAnimationClip finds it); while the eyes follow a target, the target wins.
    if (vrm.lookAt && !vrm.scene.children.some((o) => o instanceof V.VRMLookAtQuaternionProxy)) {
      const proxy = new V.VRMLookAtQuaternionProxy(vrm.lookAt);
      proxy.name = 'VRMLookAtQuaternionProxy';
      vrm.scene.add(proxy);
    }
    return V.createVRMAnimationClip(animation, vrm);
  }

  return {
    /** Whether `id` plays a file. */
    has: (id) => have.has(id),
    /** The core's list again (the look was read again). */
    setIds(next) {
      have = new Set(next ?? []);
      for (const id of clips.keys()) if (!have.has(id)) clips.delete(id);
    },
    /** The clip of `id`, loaded once; null when its file cannot be played. */
    clip(id) {
      if (!clips.has(id)) {
        clips.set(id, read(id).catch((e) => {
          console.warn(`the VRM animation for the motion ${id} cannot be played: ${e?.message ?? e}`);
          return null;
        }));
      }
      return clips.get(id);
    },
    /** Start `clip` from its beginning (once, no loop). */
    start(clip) {
      mixer ??= new V.AnimationMixer(vrm.scene);
      action?.stop();
      action = mixer.clipAction(clip);
      action.setLoop(V.LoopOnce, 1);
      action.clampWhenFinished = false;
      action.reset().play();
    },
    /** Pose the model at `seconds` into the running clip (after the procedural pose). */
    poseAt(seconds) {
      if (!action) return;
      action.time = Math.min(seconds, action.getClip().duration);
      mixer.update(0);
    },
    /** The clip ended or was cut: back to rest (bones and the clip's expressions). */
    stop() {
      if (!action) return;
      action.stop();
      action = null;
      vrm.humanoid?.resetNormalizedPose();
      vrm.expressionManager?.resetValues();
    },
  };
}
