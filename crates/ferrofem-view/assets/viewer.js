// The ferrofem viewer page: draws the scene the server describes, applies
// its binary frames (layout in crates/ferrofem-view/src/frame.rs), sends
// commands, and grabs bodies with the mouse.
import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const $ = (id) => document.getElementById(id);
const container = $('view');
const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
renderer.setPixelRatio(window.devicePixelRatio);
renderer.setSize(window.innerWidth, window.innerHeight);
container.appendChild(renderer.domElement);

const scene3 = new THREE.Scene();
scene3.background = new THREE.Color(0x1d2126);
const camera = new THREE.PerspectiveCamera(40, window.innerWidth / window.innerHeight, 0.001, 1000);
camera.up.set(0, 0, 1);
const controls = new OrbitControls(camera, renderer.domElement);
controls.enableDamping = false;
scene3.add(new THREE.HemisphereLight(0xffffff, 0x404850, 1.6));
const sun = new THREE.DirectionalLight(0xffffff, 1.8);
sun.position.set(1, -2, 3);
scene3.add(sun);

// Viridis at five stops, interpolated.
const STOPS = [[0.267, 0.005, 0.329], [0.229, 0.322, 0.546], [0.128, 0.567, 0.551], [0.369, 0.789, 0.383], [0.993, 0.906, 0.144]];
function ramp(s, out, k) {
  const x = Math.min(Math.max(s, 0), 1) * (STOPS.length - 1);
  const i = Math.min(Math.floor(x), STOPS.length - 2), f = x - i;
  for (let d = 0; d < 3; d++) out[k + d] = STOPS[i][d] * (1 - f) + STOPS[i + 1][d] * f;
}
(function drawRamp() {
  const c = $('ramp').getContext('2d');
  for (let i = 0; i < 128; i++) {
    const rgb = [0, 0, 0];
    ramp(i / 127, rgb, 0);
    c.fillStyle = `rgb(${rgb.map((v) => Math.round(255 * v)).join(',')})`;
    c.fillRect(i, 0, 1, 8);
  }
})();

const state = {
  scene: null, bodies: [], obstacles: [], figures: null, framesReceived: 0, fps: 0,
  grab: null, drag: null, socket: null, arrows: null, showArrows: false, extent: 1, errors: [], range: null,
};
window.ferrofem = state;

function send(message) {
  if (state.socket && state.socket.readyState === WebSocket.OPEN) state.socket.send(JSON.stringify(message));
}

// --- the scene -------------------------------------------------------------
function obstacleGeometry(shape) {
  switch (shape.kind) {
    case 'half_space': return new THREE.PlaneGeometry(shape.size, shape.size);
    case 'sphere': return new THREE.SphereGeometry(shape.radius, 48, 24);
    case 'box': return new THREE.BoxGeometry(...shape.size);
    case 'cylinder': return new THREE.CylinderGeometry(shape.radius, shape.radius, shape.length, 48).rotateX(Math.PI / 2);
    case 'capsule': return new THREE.CapsuleGeometry(shape.radius, shape.length, 12, 32).rotateX(Math.PI / 2);
    case 'torus': return new THREE.TorusGeometry(shape.major_radius, shape.minor_radius, 24, 64);
    case 'mesh': {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.Float32BufferAttribute(shape.vertices, 3));
      g.setIndex(shape.triangles);
      g.computeVertexNormals();
      return g;
    }
  }
  return new THREE.BufferGeometry();
}

function buildScene(s) {
  state.scene = s;
  state.extent = s.extent;
  $('title').textContent = `ferrofem · ${s.name}` + (s.mode === 'replay' ? ' (replay)' : '');
  for (const b of state.bodies) scene3.remove(b.mesh);
  for (const o of state.obstacles) scene3.remove(o.mesh);
  state.bodies = s.bodies.map((b, index) => {
    const g = new THREE.BufferGeometry();
    g.setAttribute('position', new THREE.BufferAttribute(new Float32Array(3 * b.vertices), 3));
    g.setAttribute('color', new THREE.BufferAttribute(new Float32Array(3 * b.vertices).fill(0.7), 3));
    g.setIndex(b.triangles);
    const mesh = new THREE.Mesh(g, new THREE.MeshStandardMaterial({ vertexColors: true, side: THREE.DoubleSide, roughness: 0.6, metalness: 0.0 }));
    mesh.userData = { body: index };
    mesh.frustumCulled = false;
    scene3.add(mesh);
    return { mesh, geometry: g, triangles: b.triangles };
  });
  state.obstacles = s.obstacles.map((o, index) => {
    const opaque = o.shape.kind !== 'half_space';
    const material = new THREE.MeshStandardMaterial({
      color: o.draggable ? 0xc9a55a : 0x8d99a6, transparent: !opaque, opacity: opaque ? 1.0 : 0.55,
      side: THREE.DoubleSide, roughness: 0.8,
    });
    const mesh = new THREE.Mesh(obstacleGeometry(o.shape), material);
    mesh.userData = { obstacle: index, draggable: o.draggable };
    scene3.add(mesh);
    return { mesh, draggable: o.draggable };
  });
  const c = new THREE.Vector3(...s.center);
  camera.position.copy(c).add(new THREE.Vector3(0.2, -2.2, 1.0).multiplyScalar(s.extent));
  camera.near = s.extent / 1000;
  camera.far = s.extent * 1000;
  camera.updateProjectionMatrix();
  controls.target.copy(c);
  controls.update();
  const select = $('field');
  select.innerHTML = '';
  for (const [name, unit] of s.fields) select.add(new Option(`${name.replace('_', ' ')} (${unit})`, name));
  const range = s.time_step_range;
  $('dt-row').hidden = !range;
  if (range) {
    const dt = $('dt');
    dt.min = range[0]; dt.max = range[1]; dt.step = (range[1] - range[0]) / 100; dt.value = s.time_step;
    $('dt-value').textContent = `${(1e3 * s.time_step).toFixed(2)} ms`;
  }
  $('seek-row').hidden = s.mode !== 'replay';
  $('seek').max = Math.max(0, s.times.length - 1);
  $('arrows').parentElement.hidden = s.mode === 'replay';
}

// --- frames ------------------------------------------------------------------
let pending = null;
function decode(buffer) {
  const view = new DataView(buffer);
  if (String.fromCharCode(...new Uint8Array(buffer, 0, 4)) !== 'FFV1') throw new Error('not a ferrofem frame');
  let at = 12;
  const jsonLength = view.getUint32(at, true); at += 4;
  const figures = JSON.parse(new TextDecoder().decode(new Uint8Array(buffer, at, jsonLength))); at += jsonLength;
  const floats = (n) => { const a = new Float32Array(buffer.slice(at, at + 4 * n)); at += 4 * n; return a; };
  const count = () => { const n = view.getUint32(at, true); at += 4; return n; };
  const bodies = [];
  for (let b = count(); b > 0; b--) { const n = count(); bodies.push({ positions: floats(3 * n), values: floats(n) }); }
  const poses = [];
  for (let k = count(); k > 0; k--) poses.push(floats(7));
  const arrowCount = count();
  return { figures, bodies, poses, arrows: floats(6 * arrowCount) };
}

// The colour range: the widest over the frames since the field was chosen
// or the run reset (the legend says so), so a small late residual is not
// painted as a large deformation.
function legendRange([name, , lo, hi]) {
  const r = state.range;
  if (!r || r.name !== name) state.range = { name, lo, hi };
  else { r.lo = Math.min(r.lo, lo); r.hi = Math.max(r.hi, hi); }
  return state.range;
}

function applyFrame(frame) {
  const { lo, hi } = legendRange(frame.figures.field);
  const span = hi > lo ? hi - lo : 1;
  frame.bodies.forEach((b, i) => {
    const body = state.bodies[i];
    if (!body) return;
    body.geometry.attributes.position.array.set(b.positions);
    body.geometry.attributes.position.needsUpdate = true;
    const colors = body.geometry.attributes.color.array;
    for (let v = 0; v < b.values.length; v++) ramp((b.values[v] - lo) / span, colors, 3 * v);
    body.geometry.attributes.color.needsUpdate = true;
    body.geometry.computeVertexNormals();
    body.geometry.computeBoundingSphere();
  });
  frame.poses.forEach((p, i) => {
    const o = state.obstacles[i];
    if (!o) return;
    o.mesh.position.set(p[0], p[1], p[2]);
    o.mesh.quaternion.set(p[3], p[4], p[5], p[6]);
  });
  drawArrows(frame.arrows);
  drawGrab(frame.figures.grab);
  showFigures(frame.figures);
}

function drawArrows(arrows) {
  if (state.arrows) { scene3.remove(state.arrows); state.arrows.geometry.dispose(); state.arrows = null; }
  if (!state.showArrows || arrows.length === 0) return;
  let largest = 0;
  for (let k = 0; k < arrows.length; k += 6) largest = Math.max(largest, Math.hypot(arrows[k + 3], arrows[k + 4], arrows[k + 5]));
  const scale = largest > 0 ? 0.15 * state.extent / largest : 0;
  const points = new Float32Array(arrows.length);
  for (let k = 0; k < arrows.length; k += 6) {
    for (let d = 0; d < 3; d++) { points[k + d] = arrows[k + d]; points[k + 3 + d] = arrows[k + d] + scale * arrows[k + 3 + d]; }
  }
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.BufferAttribute(points, 3));
  state.arrows = new THREE.LineSegments(g, new THREE.LineBasicMaterial({ color: 0xff7043 }));
  scene3.add(state.arrows);
}

const grabLine = new THREE.Line(new THREE.BufferGeometry().setFromPoints([new THREE.Vector3(), new THREE.Vector3()]),
  new THREE.LineBasicMaterial({ color: 0xffd54f }));
const grabMark = new THREE.Mesh(new THREE.SphereGeometry(1, 12, 8), new THREE.MeshBasicMaterial({ color: 0xffd54f }));
function drawGrab(grab) {
  const on = !!grab;
  if (on !== !!grabLine.parent) {
    if (on) { scene3.add(grabLine); scene3.add(grabMark); } else { scene3.remove(grabLine); scene3.remove(grabMark); }
  }
  if (!on) return;
  grabLine.geometry.setFromPoints([new THREE.Vector3(...grab.position), new THREE.Vector3(...grab.target)]);
  grabMark.position.set(...grab.target);
  grabMark.scale.setScalar(0.008 * state.extent);
}

// What the first gesture does, said where the page starts.
function hint(f, replay) {
  const view = 'drag empty space to orbit, right-drag to pan, wheel to zoom';
  if (replay) return `replay: the slider moves in time, ▶ plays the frames · ${view} · `;
  if (!f.playing) return `paused: press ▶ play, then drag a body to grab it · ${view} · `;
  return `drag a body to grab it · ${view} · `;
}

const fmt = (x, digits = 3) => (Math.abs(x) >= 1e4 || (Math.abs(x) < 1e-2 && x !== 0) ? x.toExponential(2) : x.toFixed(digits));
function showFigures(f) {
  state.figures = f;
  $('play').textContent = f.playing ? '❚❚ pause' : '▶ play';
  const [name, unit] = f.field;
  const { lo, hi } = legendRange(f.field);
  $('lo').textContent = fmt(lo); $('hi').textContent = `${fmt(hi)} ${unit}`;
  $('field').value = name;
  if (state.scene && state.scene.mode === 'replay') $('seek').value = f.step;
  const replay = state.scene && state.scene.mode === 'replay';
  const lines = [replay
    ? `t = ${f.time.toFixed(3)} s   frame ${f.step + 1} of ${state.scene.times.length}`
    : `t = ${f.time.toFixed(3)} s   step ${f.step}`];
  $('help').firstChild.textContent = hint(f, replay);
  if (state.scene && state.scene.mode === 'live') {
    lines.push(`${fmt(f.steps_per_second, 1)} steps/s · ${fmt(f.realtime_factor, 2)}× real time`);
    lines.push(`step ${fmt(f.step_ms, 2)} ms · ${f.contacts} contacts · viewer ${fmt(f.publish_ms, 2)} ms`);
  }
  lines.push(`${fmt(state.fps, 1)} frames/s to this page`);
  if (f.grab) {
    const F = f.grab.force;
    lines.push(`grab: ${Math.hypot(...F).toFixed(3)} N (${F.map((x) => x.toFixed(2)).join(', ')})`);
  }
  $('figures').textContent = lines.join('\n');
  const total = f.stage_ms.reduce((s, [, ms]) => s + ms, 0) || 1;
  $('stages').innerHTML = f.stage_ms.map(([stage, ms]) =>
    `<div><span class="name">${stage}</span><span class="bar" style="width:${Math.round(100 * ms / total)}px"></span>${ms.toFixed(2)} ms</div>`).join('');
  $('error').textContent = [f.error, ...state.errors.slice(-2)].filter(Boolean).join('\n');
}

// --- connection ----------------------------------------------------------------
let receivedThisSecond = 0;
setInterval(() => { state.fps = receivedThisSecond; receivedThisSecond = 0; }, 1000);

function connect() {
  // The page's query carries the viewer's token when it serves beyond loopback.
  const socket = new WebSocket(`${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws${location.search}`);
  socket.binaryType = 'arraybuffer';
  state.socket = socket;
  socket.onmessage = (event) => {
    if (typeof event.data === 'string') {
      const message = JSON.parse(event.data);
      if (message.type === 'scene') buildScene(message);
      else if (message.type === 'error') { state.errors.push(message.message); if (state.figures) showFigures(state.figures); }
      return;
    }
    pending = decode(event.data);
    state.framesReceived += 1;
    receivedThisSecond += 1;
  };
  socket.onclose = () => { $('error').textContent = 'disconnected: reload the page when the server runs again'; };
}
connect();

// --- controls ------------------------------------------------------------------
$('play').onclick = () => send({ type: state.figures && state.figures.playing ? 'pause' : 'play' });
$('step').onclick = () => send({ type: 'step' });
$('reset').onclick = () => { state.range = null; send({ type: 'reset' }); };
$('field').onchange = (e) => send({ type: 'field', name: e.target.value });
$('arrows').onchange = (e) => { state.showArrows = e.target.checked; };
$('dt').oninput = (e) => {
  const value = Number(e.target.value);
  $('dt-value').textContent = `${(1e3 * value).toFixed(2)} ms`;
  send({ type: 'time_step', value });
};
$('seek').oninput = (e) => send({ type: 'seek', frame: Number(e.target.value) });

// --- grab ----------------------------------------------------------------------
const raycaster = new THREE.Raycaster();
const pointer = new THREE.Vector2();
function ray(event) {
  const r = renderer.domElement.getBoundingClientRect();
  pointer.set(((event.clientX - r.left) / r.width) * 2 - 1, -((event.clientY - r.top) / r.height) * 2 + 1);
  raycaster.setFromCamera(pointer, camera);
}
function dragPlane(point) {
  const normal = new THREE.Vector3();
  camera.getWorldDirection(normal);
  return new THREE.Plane().setFromNormalAndCoplanarPoint(normal, point);
}

// What is under a screen point (CSS pixels): a body's vertex nearest the
// hit on its surface, or a draggable obstacle; null over empty space.
function pick(clientX, clientY) {
  ray({ clientX, clientY });
  const targets = [...state.bodies.map((b) => b.mesh), ...state.obstacles.filter((o) => o.draggable).map((o) => o.mesh)];
  const hit = raycaster.intersectObjects(targets, false)[0];
  if (!hit) return null;
  if (hit.object.userData.obstacle !== undefined) return { obstacle: hit.object.userData.obstacle, point: hit.point, object: hit.object };
  const body = hit.object.userData.body;
  const position = state.bodies[body].geometry.attributes.position;
  let vertex = hit.face.a, best = Infinity;
  for (const v of [hit.face.a, hit.face.b, hit.face.c]) {
    const d = new THREE.Vector3().fromBufferAttribute(position, v).distanceTo(hit.point);
    if (d < best) { best = d; vertex = v; }
  }
  return { body, vertex, point: hit.point };
}
state.pick = (x, y) => { const p = pick(x, y); return p && { body: p.body, vertex: p.vertex, obstacle: p.obstacle }; };

renderer.domElement.addEventListener('pointerdown', (event) => {
  if (event.button !== 0 || !state.scene || state.scene.mode !== 'live') return;
  const hit = pick(event.clientX, event.clientY);
  if (!hit) return;
  controls.enabled = false;
  try { renderer.domElement.setPointerCapture(event.pointerId); } catch { /* synthetic pointers have none */ }
  if (hit.obstacle !== undefined) {
    state.drag = { obstacle: hit.obstacle, plane: dragPlane(hit.point), start: hit.point.clone(), origin: hit.object.position.clone() };
    return;
  }
  state.grab = { body: hit.body, vertex: hit.vertex, plane: dragPlane(hit.point) };
  send({ type: 'grab', body: hit.body, vertex: hit.vertex, target: hit.point.toArray() });
});
renderer.domElement.addEventListener('pointermove', (event) => {
  if (!state.grab && !state.drag) return;
  ray(event);
  const p = new THREE.Vector3();
  if (state.grab) {
    if (raycaster.ray.intersectPlane(state.grab.plane, p)) send({ type: 'drag', target: p.toArray() });
  } else if (raycaster.ray.intersectPlane(state.drag.plane, p)) {
    const t = state.drag.origin.clone().add(p.sub(state.drag.start));
    send({ type: 'move_obstacle', obstacle: state.drag.obstacle, translation: t.toArray() });
  }
});
const release = () => {
  if (state.grab) send({ type: 'release' });
  state.grab = null;
  state.drag = null;
  controls.enabled = true;
};
renderer.domElement.addEventListener('pointerup', release);
renderer.domElement.addEventListener('pointercancel', release);

// Screen position (CSS pixels) of a world point: what a test drives the mouse to.
state.project = (point) => {
  const v = new THREE.Vector3(...point).project(camera);
  const r = renderer.domElement.getBoundingClientRect();
  return { x: r.left + (v.x + 1) / 2 * r.width, y: r.top + (1 - v.y) / 2 * r.height };
};

window.addEventListener('resize', () => {
  camera.aspect = window.innerWidth / window.innerHeight;
  camera.updateProjectionMatrix();
  renderer.setSize(window.innerWidth, window.innerHeight);
});

// Draw, then ask for the next frame: at most one frame per display refresh.
renderer.setAnimationLoop(() => {
  if (pending) {
    applyFrame(pending);
    pending = null;
    send({ type: 'ready' });
  }
  controls.update();
  renderer.render(scene3, camera);
});
