"""HTTP/2 flow control as a family (H2-*, PROP-H2-*): stream and connection windows in
both directions, SETTINGS deltas and negative windows, RST_STREAM with DATA in flight,
the policies of each end as parameters, a transition system over a connection and the
properties.

Read next to ``spec/http2.md``. Pure and deterministic: no I/O."""
