"""The fleet: the agent over many repositories, on Celery workers with a Redis broker.

`coder-tui fleet run PROMPT --repos ...` records a batch in Redis (its spec and one job per
repository) and sends one Celery message per job, naming only the batch and the job: prompts,
settings and outcomes live in Redis, keys and tokens stay in each worker's own environment.
`coder-tui fleet worker` runs jobs one at a time, each an ordinary recorded session opened with
`agent.session.open.open_session` on `agent.session.target.open_target`'s target, with the
worker's own config, sandbox and trust rules.

    settings.py  the broker URL and time limits ([fleet] in config.toml, CODER_TUI_FLEET_BROKER)
    model.py     a batch's spec and a job's view (what Redis holds)
    store.py     every read and write of the batch in Redis, atomic where workers race
    queue.py     the Celery app and its one task (imports Celery: only fleet commands load it)
    runner.py    one job on a worker: claim, open, run, park, publish, finish
    approver.py  approvals of ask mode: a bounded wait for an answer, then the job parks
    publish.py   publishing a job's branch once per batch and repository
    repos.py     the repositories a batch names (a file, or OWNER/* through the GitHub API)
"""
