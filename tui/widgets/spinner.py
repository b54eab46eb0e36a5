"""The spinner frames every running thing shares (one app-wide timer advances them)."""

SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
TICK = 0.1  # seconds per frame

