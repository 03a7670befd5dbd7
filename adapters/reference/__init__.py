"""The reference implementations: the Python model itself as an adapter (in-process and
as a protocol subprocess) and the reference ``accounts`` implementation with its mutants."""

from creditflow.adapters.reference.accounts_mutants import MUTANTS
from creditflow.adapters.reference.credit_flow import ReferenceAdapter

__all__ = [
    "MUTANTS",
    "ReferenceAdapter",
]
