"""The built-in families (FAM-INTERFACE): one package each, holding only what is the
family's own — its input reader, transition system, trace codec, and where it has them its
every-supply proof, synthesis, adapter alphabet and sweep dimensions. The engine takes any
:class:`~creditflow.conformance.family.interface.Family`; nothing in the capability
packages names a family."""
