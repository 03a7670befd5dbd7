"""Observing a running broker's credit flow (spec/observe.md, ``OBS-*``): the live credit
graph of one consistent cut and its checks (:mod:`.snapshot`), and recorded traces
validated against the per-process model and the network semantics (:mod:`.validate`).
Plain data in and out; the broker side is ``creditflow.adapters.rabbitmq.observe``."""
