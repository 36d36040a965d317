"""The MJCF vocabulary robodyn checks: the attributes each element it reads may carry (MuJoCo's XML reference,
mujoco.readthedocs.io/en/stable/XMLreference.html, as of MuJoCo 3-4).

A name outside these sets is refused with its line, as MuJoCo's own compiler refuses it. The subtrees robodyn does not
read (``<asset>`` but its meshes, ``<visual>``, ``<sensor>``, ``<keyframe>``, ...) are left to MuJoCo: their content
changes no dynamics robodyn computes. tests/mechanisms/mjcf/test_mjcf_schema.py compares these sets with
``mujoco.mj_printSchema``.
"""

from __future__ import annotations

from typing import Final

__all__ = ["ACTUATORS", "ATTRIBUTES", "BODY_CHILDREN", "SECTIONS"]


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: element -> the attributes MuJoCo defines for it (``fixed/joint``: a joint of a fixed tendon).
ATTRIBUTES: Final = {
    "mujoco": _names("model"),
    "compiler": _names("alignfree angle assetdir autolimits balanceinertia boundinertia boundmass conflict "
                       "coordinate discardvisual eulerseq fitaabb fusestatic inertiafromgeom inertiagrouprange "
                       "meshdir passthrough savecanonical savecompiled saveinertial settotalmass strippath "
                       "texturedir usethread"),
    "option": _names("actuatorgroupdisable ccd_iterations ccd_tolerance cone density gravity impratio "
                     "integrator iterations jacobian ls_iterations ls_tolerance magnetic noslip_iterations "
                     "noslip_tolerance o_friction o_margin o_solimp o_solref sdf_initpoints sdf_iterations "
                     "sleep_tolerance solver timestep tolerance viscosity wind"),
    "flag": _names("actuation autoreset clampctrl constraint contact damper diagexact energy equality "
                   "eulerdamp filterparent frictionloss fwdinv gravity invdiscrete ipc island limit midphase "
                   "multiccd nativeccd override refsafe sensor sleep speculative spring warmstart"),
    "body": _names("axisangle childclass euler fuse gravcomp mocap name pos quat simple sleep user xyaxes "
                   "zaxis"),
    "inertial": _names("axisangle diaginertia euler fullinertia mass pos quat xyaxes zaxis"),
    "joint": _names("actuatorfrclimited actuatorfrcrange actuatorgravcomp armature axis class damping "
                    "frictionloss group limited margin name pos range ref solimpfriction solimplimit "
                    "solreffriction solreflimit springdamper springref springyield stiffness type user"),
    "freejoint": _names("align group name"),
    "geom": _names("adhesion axisangle castshadow class conaffinity condim contype density euler fitscale "
                   "fluidcoef fluidshape friction fromto gap group hfield margin mass material mesh name pos "
                   "priority quat rgba shellinertia size solimp solmix solref surfacevel type user xyaxes "
                   "zaxis"),
    "site": _names("axisangle class euler fromto group material mesh name pos quat rgba size type user "
                   "xyaxes zaxis"),
    "camera": _names("axisangle class euler focal focalpixel fovy ipd mode name output pos principal "
                     "principalpixel projection quat resolution sensorsize target user xyaxes zaxis"),
    "light": _names("active ambient attenuation bulbradius castshadow class cutoff diffuse dir directional "
                    "exponent intensity mode name pos range softness specular target texture type"),
    "fixed": _names("actuatorfrclimited actuatorfrcrange armature class damping frictionloss group limited "
                    "margin name range solimpfriction solimplimit solreffriction solreflimit springlength "
                    "springyield stiffness user"),
    "fixed/joint": _names("coef joint"),
    "mesh": _names("builtin class content_type face file inertia material maxhullvert name normal params refpos "
                   "refquat scale smoothnormal texcoord vertex"),
    "general": _names("actdim actearly actlimited actrange armature biasprm biastype body class cranklength "
                      "cranksite ctrllimited ctrlrange damping delay dynprm dyntype ffrange forcelimited "
                      "forcerange gainprm gaintype gear group inheritrange input interp joint jointinparent "
                      "lengthrange name nsample refsite site slidersite tendon user velrange"),
    "motor": _names("armature class cranklength cranksite ctrllimited ctrlrange damping delay forcelimited "
                    "forcerange gear group interp joint jointinparent lengthrange name nsample refsite site "
                    "slidersite tendon user"),
    "position": _names("armature class cranklength cranksite ctrllimited ctrlrange damping dampratio delay "
                       "forcelimited forcerange gear group inheritrange interp joint jointinparent kp kv "
                       "lengthrange name nsample refsite site slidersite tendon timeconst user"),
    "velocity": _names("armature class cranklength cranksite ctrllimited ctrlrange damping delay forcelimited "
                       "forcerange gear group interp joint jointinparent kv lengthrange name nsample refsite "
                       "site slidersite tendon user"),
    "intvelocity": _names("actlimited actrange armature class cranklength cranksite ctrllimited ctrlrange damping "
                          "dampratio delay forcelimited forcerange gear group inheritrange interp joint "
                          "jointinparent kp kv lengthrange name nsample refsite site slidersite tendon user"),
    "damper": _names("armature class cranklength cranksite ctrlrange damping delay forcelimited forcerange "
                     "gear group interp joint jointinparent kv lengthrange name nsample refsite site "
                     "slidersite tendon user"),
    "cylinder": _names("area armature bias class cranklength cranksite ctrllimited ctrlrange damping delay "
                       "diameter forcelimited forcerange gear group interp joint jointinparent lengthrange name "
                       "nsample refsite site slidersite tendon timeconst user"),
    "muscle": _names("armature class cranklength cranksite ctrllimited ctrlrange damping delay force "
                     "forcelimited forcerange fpmax fvmax gear group interp joint jointinparent lengthrange "
                     "lmax lmin name nsample range scale slidersite tausmooth tendon timeconst user vmax"),
    "adhesion": _names("body class ctrlrange delay forcelimited forcerange gain group interp name nsample user"),
}
#: The actuator elements MuJoCo defines (robodyn models ``motor``; the others are refused or warned about).
ACTUATORS: Final = frozenset(("general", "motor", "position", "velocity", "intvelocity", "damper", "cylinder",
                              "muscle", "adhesion", "orientation", "pid", "dcmotor", "plugin"))
#: What a ``<body>`` (or ``<worldbody>``) may hold.
BODY_CHILDREN: Final = frozenset(("body", "inertial", "joint", "freejoint", "geom", "site", "camera", "light",
                                  "plugin", "attach", "flexcomp", "frame", "replicate", "composite"))
#: The sections of ``<mujoco>`` (``include`` is expanded before anything else is read).
SECTIONS: Final = frozenset(("compiler", "option", "size", "statistic", "visual", "default", "extension", "asset",
                             "worldbody", "deformable", "contact", "tendon", "equality", "actuator", "sensor", "custom",
                             "keyframe", "include"))
