"""Open Collaboration Tools: a Python peer that joins live OCT rooms as a guest.

`client.RoomClient` is the entry point (login, admission, connection, documents, the host's
files); `connection`, `crypto`, `codec` and `messages` speak the wire protocol; `documents` keeps
the shared Yjs document; `watcher`, `triggers`, `spinner`, `anchors` and `windowing` serve the
room agent. Nothing here imports the UI.
"""
