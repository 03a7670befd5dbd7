"""The reference implementations: the Python model itself as an adapter (in-process and
as a protocol subprocess) and the reference ``accounts`` implementation with its mutants."""
