"""coder-tui front ends: the command line and the Textual app."""
