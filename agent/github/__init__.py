"""Working on a GitHub repository through the REST API (PyGithub), without a clone.

`spec` parses what the user typed, `auth` finds a token, `client` runs PyGithub calls off the
event loop with error and rate-limit handling, `remote` holds one repository's tree, blobs and
the overlay of unpublished edits, `publish` turns that overlay into one commit on a work branch,
`issues` reads issues and writes comments and pull requests.

Nothing here imports PyGithub at import time; the client loads it on first use.
"""
