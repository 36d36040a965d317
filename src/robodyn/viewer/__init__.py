"""The robot in 3-D: one offline HTML page (``robodyn.view``, ``robodyn view``).

- :mod:`robodyn.viewer.packages` — where ``package://`` and relative mesh paths resolve, kept inside allowed folders;
- :mod:`robodyn.viewer.meshes` — STL, OBJ and DAE files read through trimesh, with size and reference limits;
- :mod:`robodyn.viewer.geometry` — a URDF's visual and collision shapes, or a model's frames as capsules;
- :mod:`robodyn.viewer.mjcf_shapes` — an MJCF robot's geoms as the same shapes;
- :mod:`robodyn.viewer.centre` — the centre of mass along a run, from the model's exported tape;
- :mod:`robodyn.viewer.scene` — the poses of every link at the shown instants, as compressed JSON;
- :mod:`robodyn.viewer.page` — the page: three.js and ``viewer.js`` written in, the scene in a JSON block;
- :mod:`robodyn.viewer.view` — :func:`~robodyn.viewer.view.view` and its :class:`~robodyn.viewer.view.View`;
- :mod:`robodyn.viewer.browser` — headless Chromium through the DevTools protocol (frames of the 3-D view, tests);
- :mod:`robodyn.viewer.render` — a run as a GIF drawn by the 3-D view (``robodyn animate --render 3d``).
"""
