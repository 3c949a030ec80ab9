"""What every agent shares, and the only way agents share code.

The configuration reader (:mod:`~agents.common.config`), where the C-PS is and the clients
that report to it (:mod:`~agents.common.cps`, :mod:`~agents.common.restconf`,
:mod:`~agents.common.netconf`), the users of an agent's own servers
(:mod:`~agents.common.logins`), the HTTP server and proxy header rule
(:mod:`~agents.common.http`), persisted report sequence numbers
(:mod:`~agents.common.sequence`), date-and-time (:mod:`~agents.common.clock`), logging
(:mod:`~agents.common.logs`), the command-line pieces (:mod:`~agents.common.cli`) and the serve
loop (:mod:`~agents.common.runner`). An agent package imports another agent's code only
through here, and nothing here imports an agent package.
"""
