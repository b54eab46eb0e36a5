"""The session host: one local process that owns live sessions and fans their events out.

Front ends (`coder-tui run --attach`, `coder-tui sessions`, `serve`) reach it over a Unix socket
in the user's runtime folder (agent/hostplace.py) with newline-delimited JSON (agent/host/wire.py).
The host opens sessions with `open_session`, so it is their one writer and holds their locks;
every attached client receives every event (a late joiner first gets the session so far), one
approval queue is answered by whoever answers first, prompts queue behind the running turn.
"""
