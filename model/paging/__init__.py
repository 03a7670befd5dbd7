"""Classic-queue paging (``rabbit_variable_queue``, PG-*): the backing queue's state,
its operations and phase changes, version profiles, properties, the chain through
``credit_flow`` to the message store, and bounded scenarios as transition systems."""

from creditflow.model.paging.chain import (
    CHAIN_BOUNDS,
    PagingNetwork,
    chain_witness,
    is_chain_throttled,
)
from creditflow.model.paging.operations import Batch
from creditflow.model.paging.phases import chunk_size, permitted_beta_count
from creditflow.model.paging.profile import (
    DEFAULT_PROFILE,
    PROFILE_3_5_5,
    PROFILE_3_10_8,
    RABBIT_SETTING_NAMES,
    PagingProfile,
    next_segment_boundary,
    persists_to_store,
    profile_named,
)
from creditflow.model.paging.properties import ALL_PROPERTIES, check, violations
from creditflow.model.paging.state import (
    PERSISTENT_STORE,
    STORE_NAMES,
    TRANSIENT_STORE,
    Config,
    Msg,
    PagingState,
    PassReport,
    Rates,
    Report,
    Step,
    Work,
    initial_state,
)
from creditflow.model.paging.system import SMALL_BOUNDS, Explored, PagingSystem

__all__ = [
    "ALL_PROPERTIES",
    "Batch",
    "CHAIN_BOUNDS",
    "Config",
    "DEFAULT_PROFILE",
    "Explored",
    "Msg",
    "PERSISTENT_STORE",
    "PROFILE_3_10_8",
    "PROFILE_3_5_5",
    "PagingNetwork",
    "PagingProfile",
    "PagingState",
    "PagingSystem",
    "PassReport",
    "RABBIT_SETTING_NAMES",
    "Rates",
    "Report",
    "SMALL_BOUNDS",
    "STORE_NAMES",
    "Step",
    "TRANSIENT_STORE",
    "Work",
    "chain_witness",
    "check",
    "chunk_size",
    "initial_state",
    "is_chain_throttled",
    "next_segment_boundary",
    "permitted_beta_count",
    "persists_to_store",
    "profile_named",
    "violations",
]
