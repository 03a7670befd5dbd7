"""The numbers of RFC 9113 the model uses (H2-CONSTANTS)."""

from __future__ import annotations

#: H2-CONSTANTS, §6.5.2: SETTINGS_INITIAL_WINDOW_SIZE's initial value (2^16 − 1)
DEFAULT_INITIAL_WINDOW_SIZE = 65_535
#: H2-CONSTANTS, §6.9.2: the connection window's initial value (SETTINGS never change it)
CONNECTION_INITIAL_WINDOW = 65_535
#: H2-CONSTANTS, §6.9.1: the largest window (2^31 − 1)
MAX_WINDOW_SIZE = 2**31 - 1
#: H2-CONSTANTS, §6.5.2: SETTINGS_MAX_FRAME_SIZE's initial value and least value (2^14)
DEFAULT_MAX_FRAME_SIZE = 16_384
#: H2-CONSTANTS, §6.5.2: the largest SETTINGS_MAX_FRAME_SIZE (2^24 − 1)
MAX_MAX_FRAME_SIZE = 2**24 - 1
#: H2-CONSTANTS, §6.9: the largest WINDOW_UPDATE increment (31 bits)
MAX_INCREMENT = 2**31 - 1
#: H2-CONSTANTS, §6.1: the most padding a DATA frame carries, its Pad Length octet included
MAX_PADDING = 256

FLOW_CONTROL_ERROR = "FLOW_CONTROL_ERROR"
PROTOCOL_ERROR = "PROTOCOL_ERROR"
FRAME_SIZE_ERROR = "FRAME_SIZE_ERROR"
