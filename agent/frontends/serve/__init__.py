"""`coder-tui serve`: the agent behind an HTTP server that speaks seed 002's SSE protocol.

    app       the aiohttp application: routes, token, body limit, the SSE stream of a turn
    sessions  the live sessions: open or continue one per chat, run a turn, answer approvals
    events    the agent's events as seed 002's data objects (an EventHandler)
    request   the request bodies, validated, and the prompt a chat makes
    start     its first steps, before anything heavy is imported: checks, token, the socket bound
    early     health answered on that socket until the application takes it over
    main      starting it: configuration, target, the application on the socket
Nothing is imported here, so that the CLI's --help stays fast.
"""
