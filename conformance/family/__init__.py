"""The family interface (FAM-*): what a protocol family supplies to the one engine, and
the registry of families. Below every capability: it imports only ``model`` (the parts'
types of higher layers are named as ``Any``), so the explorer, the conform driver, the
trace writer, the sweeps and the CLI can all take a :class:`Family`."""
