"""Version profiles of RabbitMQ's classic-queue paging (PG-PROFILE) and the two small
functions every phase uses: where a body is stored (PG-PERSIST-TO) and index segment
boundaries (PG-SEGMENT).

Read next to ``spec/paging.md``. A profile fixes the constants and the code-path switches
that differ between 3.10.8 (the default) and 3.5.5; every constant can also be overridden
(as RabbitMQ's app env can) with :meth:`PagingProfile.with_settings`.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from creditflow.model.credit.spec import MSG_STORE_CREDIT_BY_VERSION, CreditSpec


class PagingProfile(NamedTuple):
    """The paging constants and code-path switches of one RabbitMQ version (PG-PROFILE)."""

    version: str
    #: ``queue_index_embed_msgs_below``: bodies estimated below it live in the index.
    embed_below: int
    #: ``msg_store_credit_disc_bound``: the queue -> msg_store credit spec (PG-CREDIT).
    store_credit: CreditSpec
    #: ``msg_store_io_batch_size``: beta -> delta runs only for an excess at least this.
    io_batch_size: int
    #: index segment size: ``next_segment_boundary(0)`` (PG-SEGMENT).
    segment_entries: int
    #: at most this many seq ids are read from delta per load; ``None``: no limit.
    read_batch: int | None
    #: ``queue_explicit_gc_run_operation_threshold``; ``None``: reduce on every call.
    gc_threshold: int | None
    #: cap each reduce pass at ``2 x store_credit.initial`` per phase (PG-CAP).
    chunk_cap: bool
    #: reschedule itself with ``bump_reduce_memory_use`` (PG-CONTINUE).
    self_bump: bool

    def with_settings(self, **settings: Any) -> PagingProfile:
        """A copy with some constants replaced; unknown names raise ``ValueError``."""
        unknown = sorted(set(settings) - set(self._fields) - {"version"})
        if unknown:
            raise ValueError(f"unknown paging setting(s): {', '.join(unknown)}")
        if "store_credit" in settings:
            value = settings["store_credit"]
            if not isinstance(value, CreditSpec):
                settings["store_credit"] = CreditSpec(*value)
        return self._replace(**settings)

    @property
    def cap(self) -> int:
        """PG-CAP: the most one pass moves per phase (``2 x`` the credit's initial value)."""
        return 2 * self.store_credit.initial


#: PG-PROFILE: RabbitMQ 3.10.8 defaults (classic queue v1 index, a new vhost).
PROFILE_3_10_8 = PagingProfile(
    version="3.10.8",
    embed_below=4096,
    store_credit=MSG_STORE_CREDIT_BY_VERSION["3.10.8"],
    io_batch_size=4096,
    segment_entries=2048,
    read_batch=2048,
    gc_threshold=1000,
    chunk_cap=True,
    self_bump=True,
)

#: PG-PROFILE: RabbitMQ 3.5.5 (no cap, no self-bump, reduce on every publish/requeue).
PROFILE_3_5_5 = PagingProfile(
    version="3.5.5",
    embed_below=4096,
    store_credit=MSG_STORE_CREDIT_BY_VERSION["3.5.5"],
    io_batch_size=2048,
    segment_entries=16384,
    read_batch=None,
    gc_threshold=None,
    chunk_cap=False,
    self_bump=False,
)

PROFILES: dict[str, PagingProfile] = {p.version: p for p in (PROFILE_3_10_8, PROFILE_3_5_5)}
DEFAULT_PROFILE = PROFILE_3_10_8

#: Names of the settings as RabbitMQ spells them (scenario files, the broker's app env).
RABBIT_SETTING_NAMES = {
    "queue_index_embed_msgs_below": "embed_below",
    "msg_store_credit_disc_bound": "store_credit",
    "msg_store_io_batch_size": "io_batch_size",
    "queue_index_segment_entry_count": "segment_entries",
    "queue_explicit_gc_run_operation_threshold": "gc_threshold",
}


def profile_named(version: str) -> PagingProfile:
    """The profile of ``version``; ``ValueError`` naming the known ones otherwise."""
    try:
        return PROFILES[version]
    except KeyError:
        known = ", ".join(sorted(PROFILES))
        raise ValueError(f"unknown paging profile {version!r} (known: {known})") from None


def persists_to_store(profile: PagingProfile, size: int, props_bytes: int) -> bool:
    """PG-PERSIST-TO: whether a body goes to the msg_store (``True``) or is embedded in
    the queue index (``False``): msg_store iff the body size, or the body plus its encoded
    properties, reaches ``queue_index_embed_msgs_below``."""
    return size >= profile.embed_below or size + props_bytes >= profile.embed_below


def next_segment_boundary(profile: PagingProfile, seq_id: int) -> int:
    """PG-SEGMENT: the first seq id of the index segment after the one holding ``seq_id``."""
    return (seq_id // profile.segment_entries + 1) * profile.segment_entries
