"""The intake: what an event asks of the bot. The comment grammar (`grammar`), the automatic
triggers (`triggers`) and whether a repository turned one on (`gate`), the payload's required shape
(`payload`). Below the service (which queues what it decides) and above the job (whose context it
builds)."""
