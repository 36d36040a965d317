"""The block library: actuators, sensors and controllers as ordinary symbolic models, one module per block (its
factory and exact discrete form), found by :mod:`~robodyn.diagrams.blocks.registry`; the table and
``make_block`` are :mod:`~robodyn.diagrams.blocks.library`, the shared checks and sampled form
:mod:`~robodyn.diagrams.blocks.common`, and :mod:`~robodyn.diagrams.blocks.sampled` keeps the old by-kind
``discrete_form`` for code written before the blocks had a file each.
"""
