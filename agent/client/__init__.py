"""The one way a front end drives a session: a `SessionHandle` (agent/client/handle.py) that takes
the commands of agent/client/commands.py, whether the session runs in this process (`LocalHandle`)
or in the session host (`HostedHandle`); `connect` (agent/client/connect.py) decides which.

Importing this package imports nothing heavy: each module is imported by name where it is used.
"""
