// What a VRM character window uses of three.js, three-vrm and three-vrm-animation (.vrma motions)
// (ui/character/vrm-*.js), bundled by scripts/vendor-ui.sh into ui/vendor/vrm.js: only these are
// kept (tree-shaking).
export {
  WebGLRenderer,
  Scene,
  PerspectiveCamera,
  Object3D,
  Vector3,
  Box3,
  AmbientLight,
  DirectionalLight,
  SRGBColorSpace,
  Clock,
  AnimationMixer,
  LoopOnce,
} from "three";
export { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";
export { VRMLoaderPlugin, VRMUtils } from "@pixiv/three-vrm";
export { VRMAnimationLoaderPlugin, VRMLookAtQuaternionProxy, createVRMAnimationClip } from "@pixiv/three-vrm-animation";
