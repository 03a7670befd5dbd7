"""Adapters of the ``http2`` family (spec/adapter-protocol-http2.md, AD-H2-*): real HTTP/2
implementations (h2, Node's http2, httpcore, hypercorn, nghttp2) against our own
frame-level peer, behind the JSON Lines adapter protocol."""
