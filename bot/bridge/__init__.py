"""The loopback MCP bridge: the server, its tools and their admission."""
