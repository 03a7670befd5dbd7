"""The executable model: pure, deterministic state machines with no I/O, one package per
modelled mechanism (``credit``, ``network``, ``paging``, ``accounts``, ``alarms``) and the
transition-system shape the explorer runs (:mod:`.system`)."""
