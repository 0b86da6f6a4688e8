// What a VRM character window uses of three.js and three-vrm (ui/character/vrm-*.js), bundled by
// scripts/vendor-ui.sh into ui/vendor/vrm.js: only these are kept (tree-shaking).
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
} from "three";
export { GLTFLoader } from "three/examples/jsm/loaders/GLTFLoader.js";
export { VRMLoaderPlugin, VRMUtils } from "@pixiv/three-vrm";
