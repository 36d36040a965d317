"""Contact: compliant contacts with planes (:mod:`~robodyn.mechanisms.contact.contacts`) and rigid
impacts (:mod:`~robodyn.mechanisms.contact.impacts`).
"""
