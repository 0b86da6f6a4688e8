// The vocabulary's motions as short procedural bone animations for a VRM character (vrm.js):
// each motion is a duration and a pose at time t (0..1) — Euler offsets (radians) on the
// model's normalized humanoid bones and a lift of the hips (metres). No animation files: a
// `.vrma` may replace one later. The rest pose (arms down) is REST; a motion adds to it.

/** The arms hang down from the T-pose the model is made in. */
export const REST = {
  leftUpperArm: [0, 0, -1.2],
  rightUpperArm: [0, 0, 1.2],
  leftLowerArm: [0, 0, -0.1],
  rightLowerArm: [0, 0, 0.1],
};

const ease = (t) => Math.sin(Math.PI * t); // up and back down
const wave = (t, n) => Math.sin(2 * Math.PI * n * t);

/** id → { ms, pose(t) → { bones: {name: [x, y, z]}, lift } }. */
export const MOTIONS = {
  nod: { ms: 900, pose: (t) => ({ bones: { head: [0.28 * Math.max(0, wave(t, 2)), 0, 0], neck: [0.08 * ease(t), 0, 0] } }) },
  shake_head: { ms: 1000, pose: (t) => ({ bones: { head: [0, 0.35 * wave(t, 2) * ease(t), 0] } }) },
  wave: {
    ms: 1600,
    pose: (t) => {
      const up = Math.min(1, Math.min(t, 1 - t) * 6);
      return {
        bones: {
          rightUpperArm: [0, 0, -2.1 * up],
          rightLowerArm: [0, 0, (-0.4 + 0.45 * wave(t, 3)) * up],
          head: [0, 0, -0.06 * up],
        },
      };
    },
  },
  jump: { ms: 700, pose: (t) => ({ lift: 0.12 * ease(t), bones: { leftUpperArm: [0, 0, 0.5 * ease(t)], rightUpperArm: [0, 0, -0.5 * ease(t)] } }) },
  bounce: { ms: 1000, pose: (t) => ({ lift: 0.04 * Math.abs(wave(t, 2)) }) },
  bow: { ms: 1400, pose: (t) => ({ bones: { spine: [0.45 * ease(t), 0, 0], head: [0.2 * ease(t), 0, 0] } }) },
  spin: { ms: 1000, pose: (t) => ({ turn: 2 * Math.PI * (t * t * (3 - 2 * t)) }) },
  tilt: { ms: 1200, pose: (t) => ({ bones: { head: [0, 0, 0.3 * ease(t)] } }) },
  stretch: {
    ms: 1800,
    pose: (t) => ({ bones: { leftUpperArm: [0, 0, 2.3 * ease(t)], rightUpperArm: [0, 0, -2.3 * ease(t)], spine: [-0.15 * ease(t), 0, 0] } }),
  },
  flinch: { ms: 500, pose: (t) => ({ bones: { spine: [-0.2 * ease(t), 0, 0], head: [-0.15 * ease(t), 0, 0] } }) },
  giggle: { ms: 900, pose: (t) => ({ bones: { spine: [0, 0, 0.06 * wave(t, 4)], head: [0.1 * ease(t), 0, 0.1 * wave(t, 3)] } }) },
  dangle: {
    ms: 1200,
    pose: (t) => ({ bones: { leftUpperArm: [0.3 * wave(t, 2), 0, 0.4], rightUpperArm: [-0.3 * wave(t, 2), 0, -0.4], spine: [0, 0, 0.08 * wave(t, 1)] } }),
  },
};

/** The pose of the states that last (thinking, browsing): a head tilt while they hold. */
export const STATE_POSE = {
  thinking: { head: [-0.1, 0.15, 0.12] },
  browsing: { head: [0.15, 0, 0] },
};
