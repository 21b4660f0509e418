"""A sixth wire API and its agent, written for the tests only (see api.py, agent.py)."""
