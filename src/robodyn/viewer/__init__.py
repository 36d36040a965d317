"""The robot in 3-D: geometry from robot files (``geometry``, ``meshes``, ``packages``), the scene and its poses
(``scene``), one offline HTML page (``page``) and ``robodyn.view`` (``view``)."""
