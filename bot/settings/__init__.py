"""The settings pages: GitHub login, sessions, keys."""
