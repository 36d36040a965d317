// robodyn's 3-D view: draws the scene of the JSON block "robodyn-scene" (type application/json) with three.js.
// Text from the model reaches the page only through textContent; arrays are inflated with DecompressionStream.
"use strict";
(function () {
  const THREE = window.THREE || (window.MeshCat && window.MeshCat.THREE);
  const state = {ready: false, error: null};
  window.robodynView = state;

  const TYPES = {f4: Float32Array, u2: Uint16Array, u4: Uint32Array};
  async function unpack(packed) {
    const text = atob(packed.data);
    const bytes = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) bytes[i] = text.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"));
    return new TYPES[packed.dtype](await new Response(stream).arrayBuffer());
  }

  function attribute(geometry, name, array, size) {
    const value = new THREE.BufferAttribute(array, size);
    (geometry.setAttribute || geometry.addAttribute).call(geometry, name, value);
  }

  function material(rgba, fallback) {
    const c = rgba || fallback;
    return new THREE.MeshPhongMaterial({color: new THREE.Color(c[0], c[1], c[2]), opacity: c[3],
      transparent: c[3] < 1, side: THREE.DoubleSide, shininess: 20});
  }

  async function meshGeometry(part) {
    const q = await unpack(part.positions);
    const positions = new Float32Array(q.length);
    for (let i = 0; i < q.length; i++) positions[i] = part.low[i % 3] + part.span[i % 3] * (q[i] / 65535);
    const geometry = new THREE.BufferGeometry();
    attribute(geometry, "position", positions, 3);
    geometry.setIndex(new THREE.BufferAttribute(await unpack(part.indices), 1));
    geometry.computeVertexNormals();
    return geometry;
  }

  const Cylinder = THREE.CylinderBufferGeometry || THREE.CylinderGeometry;
  const Sphere = THREE.SphereBufferGeometry || THREE.SphereGeometry;
  const Box = THREE.BoxBufferGeometry || THREE.BoxGeometry;
  const GREY = [0.7, 0.7, 0.72, 1];
  const Z_UP = new THREE.Matrix4().makeRotationX(Math.PI / 2);  // three.js cylinders run along y, URDF's along z

  function primitive(shape) {
    const s = shape.size, m = material(shape.rgba, GREY);
    if (shape.shape === "box") return new THREE.Mesh(new Box(s[0], s[1], s[2]), m);
    if (shape.shape === "sphere") return new THREE.Mesh(new Sphere(s[0], 24, 16), m);
    const group = new THREE.Group();
    const body = new THREE.Mesh(new Cylinder(s[0], s[0], s[1], 24), m);
    body.applyMatrix4 ? body.applyMatrix4(Z_UP) : body.applyMatrix(Z_UP);
    group.add(body);
    if (shape.shape === "capsule") {
      for (const sign of [-1, 1]) {
        const cap = new THREE.Mesh(new Sphere(s[0], 24, 12), m);
        cap.position.set(0, 0, sign * s[1] / 2);
        group.add(cap);
      }
    }
    return group;
  }

  function placed(object, rowMajor) {
    const holder = new THREE.Group();
    holder.matrixAutoUpdate = false;
    holder.matrix.set(...rowMajor);
    holder.add(object);
    return holder;
  }

  function marker(colour, radius) {
    const m = new THREE.Mesh(new Sphere(radius, 20, 14),
      new THREE.MeshBasicMaterial({color: colour, depthTest: false, depthWrite: false}));
    m.renderOrder = 999;
    return m;
  }

  async function build() {
    const data = JSON.parse(document.getElementById("robodyn-scene").textContent);
    const poses = await unpack(data.poses);
    const L = data.links.length, K = data.times.length;
    const scene = new THREE.Scene();
    scene.background = new THREE.Color(0.93, 0.94, 0.96);
    scene.add(new THREE.HemisphereLight(0xffffff, 0x606070, 0.9));
    const sun = new THREE.DirectionalLight(0xffffff, 0.6);
    sun.position.set(2, -3, 5);
    scene.add(sun);
    const links = data.links.map(() => {
      const g = new THREE.Group();
      g.matrixAutoUpdate = false;
      scene.add(g);
      return g;
    });
    const meshes = [];
    for (const parts of data.meshes) meshes.push(await Promise.all(parts.map(meshGeometry)));
    for (const shape of data.shapes) {
      let object;
      if (shape.mesh !== null) {
        object = new THREE.Group();
        data.meshes[shape.mesh].forEach((part, i) => {
          object.add(new THREE.Mesh(meshes[shape.mesh][i], material(shape.rgba || part.rgba, GREY)));
        });
        object.scale.set(shape.size[0], shape.size[1], shape.size[2]);
      } else {
        object = primitive(shape);
      }
      links[shape.link].add(placed(object, shape.origin));
    }
    setPose(links, poses, 0, L);
    scene.updateMatrixWorld(true);
    const box = new THREE.Box3().setFromObject(scene);
    const size = box.isEmpty() ? 1 : Math.max(box.max.x - box.min.x, box.max.y - box.min.y, box.max.z - box.min.z);
    const frames = links.map((g) => { const a = new THREE.AxesHelper(0.12 * size); g.add(a); return a; });
    const layers = {frames: frames, target: [], com: []};
    for (const k of data.missing) frames[k].userData.always = true;
    let tool = null;
    if (data.tool !== null) {
      tool = marker(0x00c8ff, 0.012 * size);
      links[data.tool].add(tool);
      layers.frames.push(tool);
    }
    if (data.target) {
      const target = marker(0xff00ff, 0.012 * size);
      target.position.set(data.target[0], data.target[1], data.target[2]);
      scene.add(target);
      layers.target.push(target);
    }
    let com = null;
    if (data.com) {
      com = {marker: marker(0xffa000, 0.02 * size), path: await unpack(data.com)};
      scene.add(com.marker);
      layers.com.push(com.marker);
    }
    layers.contacts = [];
    let contacts = null;
    if (data.contacts) {  // each contact's point, and the force on the robot there as an arrow
      const points = await unpack(data.contacts.points);
      const forces = data.contacts.forces ? await unpack(data.contacts.forces) : null;
      let largest = 0;
      if (forces) for (let i = 0; i < forces.length; i += 3) largest = Math.max(largest, Math.hypot(forces[i], forces[i + 1], forces[i + 2]));
      const markers = data.contacts.names.map(() => marker(0x00a050, 0.015 * size));
      const arrows = data.contacts.names.map(() => new THREE.ArrowHelper(new THREE.Vector3(0, 0, 1), new THREE.Vector3(), 1, 0x00a050));
      for (const o of [...markers, ...arrows]) { scene.add(o); layers.contacts.push(o); }
      contacts = {points, forces, markers, arrows, scale: largest > 0 ? 0.4 * size / largest : 0};
    }
    return {data, poses, L, K, scene, links, layers, tool, box, size, com, contacts};
  }

  function placeContacts(c, k) {  // the points at instant k, an arrow scaled so that the largest force is 0.4 size
    const C = c.markers.length, force = new THREE.Vector3();
    for (let j = 0; j < C; j++) {
      const o = 3 * (k * C + j);
      c.markers[j].position.fromArray(c.points, o);
      c.arrows[j].position.fromArray(c.points, o);
      if (c.forces) force.fromArray(c.forces, o); else force.set(0, 0, 0);
      const length = force.length() * c.scale;
      c.arrows[j].visible = c.markers[j].visible && length > 1e-9;
      if (length > 1e-9) { c.arrows[j].setDirection(force.normalize()); c.arrows[j].setLength(length, 0.2 * length, 0.1 * length); }
    }
  }

  function setPose(links, poses, k, L) {
    for (let j = 0; j < L; j++) {
      const o = 12 * (k * L + j), p = poses;
      links[j].matrix.set(p[o], p[o + 1], p[o + 2], p[o + 9], p[o + 3], p[o + 4], p[o + 5], p[o + 10],
        p[o + 6], p[o + 7], p[o + 8], p[o + 11], 0, 0, 0, 1);
      links[j].matrixWorldNeedsUpdate = true;
    }
  }

  function orbit(camera, element, centre, request) {
    // spherical coordinates about centre, z up: drag turns, shift-drag or right-drag pans, the wheel zooms
    const offset = new THREE.Vector3().subVectors(camera.position, centre);
    let radius = offset.length(), azimuth = Math.atan2(offset.y, offset.x);
    let elevation = Math.asin(offset.z / radius), drag = null;
    function update() {
      camera.position.set(centre.x + radius * Math.cos(elevation) * Math.cos(azimuth),
        centre.y + radius * Math.cos(elevation) * Math.sin(azimuth), centre.z + radius * Math.sin(elevation));
      camera.lookAt(centre);
      request();
    }
    element.addEventListener("pointerdown", (e) => { drag = {x: e.clientX, y: e.clientY, pan: e.shiftKey || e.button === 2}; });
    window.addEventListener("pointerup", () => { drag = null; });
    element.addEventListener("contextmenu", (e) => e.preventDefault());
    window.addEventListener("pointermove", (e) => {
      if (!drag) return;
      const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
      drag.x = e.clientX; drag.y = e.clientY;
      if (drag.pan) {
        const right = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 0);
        const up = new THREE.Vector3().setFromMatrixColumn(camera.matrix, 1);
        const scale = radius / element.clientHeight;
        centre.addScaledVector(right, -dx * scale).addScaledVector(up, dy * scale);
      } else {
        azimuth -= dx * 0.01;
        elevation = Math.max(-1.55, Math.min(1.55, elevation + dy * 0.01));
      }
      update();
    });
    element.addEventListener("wheel", (e) => { e.preventDefault(); radius *= Math.exp(e.deltaY * 0.001); update(); },
      {passive: false});
    update();
  }

  const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

  async function plotter(series, times) {
    // the run's coordinates and inputs, one panel per group, and a cursor at the instant shown (2-D canvas)
    const canvas = document.getElementById("robodyn-plot");
    if (!canvas || series.length === 0 || times.length < 2) return () => {};
    const groups = await Promise.all(series.map(async (s) => ({names: s.names, values: await unpack(s.values)})));
    const K = times.length, t0 = times[0], t1 = times[K - 1];
    let background = null;
    function draw() {
      const w = canvas.clientWidth, h = canvas.clientHeight, g = canvas.getContext("2d");
      canvas.width = w; canvas.height = h;
      g.fillStyle = "#fff"; g.fillRect(0, 0, w, h);
      const panel = w / groups.length;
      groups.forEach((group, p) => {
        const n = group.names.length, v = group.values;
        let lo = Infinity, hi = -Infinity;
        for (let i = 0; i < v.length; i++) { lo = Math.min(lo, v[i]); hi = Math.max(hi, v[i]); }
        if (!(hi > lo)) { lo -= 1; hi += 1; }
        const x = (k) => p * panel + 40 + (times[k] - t0) / (t1 - t0) * (panel - 50);
        const y = (value) => h - 18 - (value - lo) / (hi - lo) * (h - 36);
        g.strokeStyle = "#ccc"; g.strokeRect(p * panel + 40, 18, panel - 50, h - 36);
        g.fillStyle = "#333"; g.font = "11px sans-serif";
        g.fillText(hi.toPrecision(3), p * panel + 2, 24); g.fillText(lo.toPrecision(3), p * panel + 2, h - 18);
        let legend = p * panel + 44;
        for (let j = 0; j < n; j++) {
          g.strokeStyle = COLOURS[j % COLOURS.length]; g.beginPath();
          for (let k = 0; k < K; k++) { const X = x(k), Y = y(v[k * n + j]); k ? g.lineTo(X, Y) : g.moveTo(X, Y); }
          g.stroke();
          g.fillStyle = COLOURS[j % COLOURS.length];
          g.fillText(group.names[j], legend, 12);
          legend += g.measureText(group.names[j]).width + 8;
        }
      });
      background = g.getImageData(0, 0, w, h);
    }
    draw();
    window.addEventListener("resize", draw);
    return (k) => {
      const g = canvas.getContext("2d"), w = canvas.width, h = canvas.height, panel = w / groups.length;
      if (background) g.putImageData(background, 0, 0);
      g.strokeStyle = "#000";
      for (let p = 0; p < groups.length; p++) {
        const X = p * panel + 40 + (times[k] - t0) / (t1 - t0) * (panel - 50);
        g.beginPath(); g.moveTo(X, 18); g.lineTo(X, h - 18); g.stroke();
      }
    };
  }

  async function main() {
    const view = await build();
    const holder = document.getElementById("robodyn-canvas");
    const renderer = new THREE.WebGLRenderer({antialias: true, preserveDrawingBuffer: true});
    renderer.setPixelRatio(window.devicePixelRatio || 1);
    holder.appendChild(renderer.domElement);
    const camera = new THREE.PerspectiveCamera(40, 1, 0.001 * view.size, 100 * view.size);
    camera.up.set(0, 0, 1);
    const centre = view.box.isEmpty() ? new THREE.Vector3() : view.box.getCenter(new THREE.Vector3());
    // from the side and above, far enough that the box's bounding sphere fits the 40 degree field of view
    const radius = view.box.isEmpty() ? 1 : 0.5 * view.box.getSize(new THREE.Vector3()).length();
    const distance = Math.max(1.72 * view.size, 1.05 * radius / Math.sin(20 * Math.PI / 180));
    camera.position.copy(centre).add(new THREE.Vector3(1.25, 0.95, 0.7).normalize().multiplyScalar(distance));
    let dirty = true;
    const request = () => { dirty = true; };
    function resize() {
      const w = holder.clientWidth, h = holder.clientHeight;
      renderer.setSize(w, h);
      camera.aspect = w / h;
      camera.updateProjectionMatrix();
      request();
    }
    window.addEventListener("resize", resize);
    resize();
    orbit(camera, renderer.domElement, centre, request);

    const slider = document.getElementById("robodyn-time"), clock = document.getElementById("robodyn-clock");
    const play = document.getElementById("robodyn-play"), times = view.data.times;
    slider.max = String(view.K - 1);
    let index = 0, playing = null;
    const cursor = await plotter(view.data.series, times);
    function show(k) {
      index = Math.max(0, Math.min(view.K - 1, k));
      setPose(view.links, view.poses, index, view.L);
      if (view.com) view.com.marker.position.fromArray(view.com.path, 3 * index);
      if (view.contacts) placeContacts(view.contacts, index);
      slider.value = String(index);
      clock.textContent = view.data.labels ? view.data.labels[index] :
        view.K > 1 ? "t = " + times[index].toFixed(3) + " s" : "";
      state.time = times[index];
      cursor(index);
      request();
    }
    function find(t) {  // the last instant at or before t
      let lo = 0, hi = view.K - 1;
      while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (times[mid] <= t) lo = mid; else hi = mid - 1; }
      return lo;
    }
    slider.addEventListener("input", () => { playing = null; play.textContent = "play"; show(Number(slider.value)); });
    play.addEventListener("click", () => {
      if (playing) { playing = null; play.textContent = "play"; return; }
      if (index >= view.K - 1) show(0);
      playing = {wall: performance.now(), start: times[index]};
      play.textContent = "pause";
    });
    for (const name of ["frames", "target", "com", "contacts"]) {
      const box = document.getElementById("robodyn-" + name);
      if (!box) continue;
      const apply = () => {
        for (const o of view.layers[name]) o.visible = box.checked || !!o.userData.always;
        if (name === "contacts" && view.contacts) placeContacts(view.contacts, index);
        request();
      };
      box.addEventListener("change", apply);
      apply();
    }
    function frame(now) {
      if (playing) {
        const t = playing.start + (now - playing.wall) / 1000;
        show(find(t));
        if (t >= times[view.K - 1]) { playing = null; play.textContent = "play"; }
      }
      if (dirty) {
        view.scene.updateMatrixWorld(true);
        renderer.render(view.scene, camera);
        dirty = false;
        state.rendered = (state.rendered || 0) + 1;
        if (state.rendered === 1) state.interactiveAt = performance.now();  // ms since the navigation started
      }
      requestAnimationFrame(frame);
    }
    show(0);
    Object.assign(state, {
      instants: view.K, times: times, links: view.data.links,
      setTime: (k) => { show(k); view.scene.updateMatrixWorld(true); renderer.render(view.scene, camera); },
      project: (p) => {  // CSS pixels of world point p in the canvas, through the page's own camera
        const v = new THREE.Vector3(p[0], p[1], p[2]).project(camera), r = renderer.domElement.getBoundingClientRect();
        return [r.left + (v.x + 1) / 2 * r.width, r.top + (1 - v.y) / 2 * r.height];
      },
      contactArrows: () => view.contacts ? view.contacts.arrows.map((a) => a.visible ?  // origin, direction, length
        [...a.position.toArray(), ...new THREE.Vector3(0, 1, 0).applyQuaternion(a.quaternion).toArray(),
          a.cone.position.y] : null) : null,
      contactScale: () => view.contacts ? view.contacts.scale : null,
      comPosition: () => view.com ? view.com.marker.getWorldPosition(new THREE.Vector3()).toArray() : null,
      toolPosition: () => view.tool ? view.tool.getWorldPosition(new THREE.Vector3()).toArray() : null,
      play: () => { if (!playing) play.click(); },
      bare: () => {  // the robot alone (frames of a GIF): no controls or plots, the time beside the title
        document.body.classList.add("robodyn-bare");
        document.getElementById("robodyn-title").append(" ", clock);
        resize();
      },
      toggle: (name, on) => { const b = document.getElementById("robodyn-" + name); b.checked = on; b.dispatchEvent(new Event("change")); },
      ready: true,
    });
    requestAnimationFrame(frame);
  }

  main().catch((e) => { state.error = String(e); console.error(e); });
})();
