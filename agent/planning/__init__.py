"""The structured workflow (seed 004): intent router, planner, orchestrator, executor steps, report."""
