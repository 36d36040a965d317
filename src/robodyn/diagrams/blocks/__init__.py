"""The block library: actuators, sensors and controllers as ordinary symbolic models
(:mod:`~robodyn.diagrams.blocks.library`), and their exact discrete forms (:mod:`~robodyn.diagrams.blocks.sampled`).
"""
