"""Robust output-feedback synthesis on a generalized plant (inputs [w, u], outputs [z, y]): H-infinity by the two
Riccati equations and a bisection on gamma (:mod:`~robodyn.control.robust.hinf`), H2
(:mod:`~robodyn.control.robust.h2`), mixed sensitivity (:mod:`~robodyn.control.robust.mixsyn`), and what they
share: the partition, the normalization of D12 and D21, the assumptions and the closed loop
(:mod:`~robodyn.control.robust.partition`)."""
