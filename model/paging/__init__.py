"""Classic-queue paging (``rabbit_variable_queue``, PG-*): the backing queue's state,
its operations and phase changes, version profiles, properties, the chain through
``credit_flow`` to the message store, and bounded scenarios as transition systems."""
